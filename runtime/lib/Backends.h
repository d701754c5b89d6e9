//===- Backends.h - The backends' runners (internal) ------------*- C++ -*-===//
//
// Internal to the runtime: what Backends.cpp's registry points at. The GPU
// runners live in cuda/CudaBackends.cpp and exist only in CUDA builds.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_RUNTIME_LIB_BACKENDS_H
#define SHARDLIN_RUNTIME_LIB_BACKENDS_H

#include "shardlin/runtime/Execute.h"

#include <functional>
#include <memory>
#include <vector>

namespace shardlin::rt::detail {

/// Runs rank r of `comms` on thread r, each with the device `makeDevice`
/// creates; `agree`, if not empty, carries the agreements (one host
/// communicator per rank). Fills `ranks` by rank; returns the root cause.
Status runRanksOnThreads(
    const Program &program, const RankCallbacks &callbacks,
    std::vector<std::unique_ptr<Communicator>> &comms,
    std::vector<std::unique_ptr<Communicator>> &agree,
    const std::function<std::unique_ptr<RankDevice>()> &makeDevice,
    std::vector<RankResult> &ranks);

/// OpenBLAS threads for `ranksPerHost` ranks sharing this host's cores.
int autoBlasThreads(int ranksPerHost);

#if defined(SHARDLIN_HAVE_CUDA)
Status runCudaLocal(const Program &program, const RunOptions &options,
                    const RankCallbacks &callbacks,
                    std::vector<RankResult> &ranks);
Status runNccl(const Program &program, const RunOptions &options,
               const RankCallbacks &callbacks, std::vector<RankResult> &ranks);
#endif

} // namespace shardlin::rt::detail

#endif // SHARDLIN_RUNTIME_LIB_BACKENDS_H
