//===- GpuModule.h - The runtime's GPU module, without loading it -*- C++ -*-===//
//
// The GPU backends (cuda-local, nccl) are built into a shared module of
// their own, libshardlin-runtime-cuda.so, which the runtime loads with
// dlopen the first time a GPU backend is run or describeGpus (Backend.h)
// is called, so that CPU runs never map CUDA's libraries (docs/runtime.md,
// "The GPU module").
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_RUNTIME_GPUMODULE_H
#define SHARDLIN_RUNTIME_GPUMODULE_H

#include <string>

namespace shardlin::rt {

/// The GPU side of this runtime, for --version, without loading anything:
/// "not built with CUDA", "module <path> (not loaded; ...)" or "module
/// missing (<why>)".
std::string describeGpuModule();

} // namespace shardlin::rt

#endif // SHARDLIN_RUNTIME_GPUMODULE_H
