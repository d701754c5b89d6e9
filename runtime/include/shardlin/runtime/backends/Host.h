//===- Host.h - The CPU backends' parts: host device, OpenBLAS, threads -*- C++ -*-===//
//
// What the threads and mpi backends run on: the host device (OpenBLAS GEMM,
// the host's local ops, malloc'd buffers) and the in-process group of
// communicators of the threads backend. Tests, the bench and embedders that
// build ranks by hand use these directly; runProgram and the C ABI reach
// them through the registry (Registry.h).
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_RUNTIME_BACKENDS_HOST_H
#define SHARDLIN_RUNTIME_BACKENDS_HOST_H

#include "shardlin/runtime/backends/Registry.h"
#include "shardlin/runtime/comm/Communicator.h"
#include "shardlin/runtime/exec/Device.h"
#include "shardlin/runtime/exec/Gemm.h"
#include "shardlin/runtime/exec/LocalOps.h"

#include <memory>
#include <string>
#include <vector>

namespace shardlin::rt {

/// W communicators of one in-process group (the threads backend), rank r
/// at index r; each is driven by its own thread.
std::vector<std::unique_ptr<Communicator>>
createThreadsGroup(int worldSize, const CommOptions &options = CommOptions());

/// A rank on host memory: OpenBLAS GEMM, host local ops.
std::unique_ptr<RankDevice> createHostDevice();

/// OpenBLAS-backed GEMM. One object per rank; it owns the f32 workspace used
/// for f16/bf16 and is not safe to share between threads.
std::unique_ptr<GemmBackend> createCpuGemm();

/// Options of the host LocalOps.
struct HostLocalOpsOptions {
  /// Evaluate the expressions that recognizeActivation (Expr.h) recognizes
  /// with a fused loop of their own; false sends every expression through
  /// the generic node-by-node evaluation. The two agree within the op's
  /// bounds; false exists to test and compare them.
  bool activationKernels = true;
};

/// Local operations on host memory.
std::unique_ptr<LocalOps>
createHostLocalOps(const HostLocalOpsOptions &options = {});

/// Sets the number of threads OpenBLAS uses (a process-wide setting).
void setBlasThreads(int n);
int getBlasThreads();

/// OpenBLAS's kernel set in use ("SkylakeX", "Haswell", "Prescott", ...).
std::string blasCoreName();

/// The OPENBLAS_CORETYPE this CPU should run with when OpenBLAS fell back to
/// an older kernel set than the CPU supports (OpenBLAS 0.3.21, Debian 12's,
/// falls back to Prescott's SSE3 kernels on a CPU model it does not know,
/// 3-4x slower here): "SkylakeX" for AVX-512 (F, BW, DQ, VL), "Haswell" for
/// AVX2 + FMA. Empty when the choice is fine, when OPENBLAS_CORETYPE is set
/// already, or when SHARDLIN_BLAS_CORETYPE=keep. A query only: the tools act
/// on it (reexecForBlasKernels, shardlin/runtime/tooling/Process.h).
std::string suggestedBlasCoreType();

} // namespace shardlin::rt

#endif // SHARDLIN_RUNTIME_BACKENDS_HOST_H
