//===- GpuBenchOptions.h - shardlin-gpu-bench's command line ----*- C++ -*-===//
//
// The options of shardlin-gpu-bench (its file comment lists them), parsed by
// hand: the bench is built with the runtime alone, without LLVM.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_BENCH_GPU_GPUBENCHOPTIONS_H
#define SHARDLIN_BENCH_GPU_GPUBENCHOPTIONS_H

#include "GpuBlocks.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace shardlin::gpubench {

struct Options;

/// The options of the command line; a bad one prints one line and exits 1,
/// --help prints the usage and exits 0.
Options parseOptions(int argc, char **argv);

/// What to run, and at which sizes (the defaults: the full run).
struct Options {
  int device = 0;
  int64_t gemmSize = 8192;
  int gemmReps = 30;
  /// Each collective's S, in bytes (64 KiB: latency; 64 and 256 MiB:
  /// bandwidth).
  std::vector<size_t> collBytes = {size_t(64) << 10, size_t(64) << 20,
                                   size_t(256) << 20};
  int collReps = 20;
  std::vector<int> ranks = {2, 8};
  bool gemm = true;
  bool collectives = true;
  bool biasExperiments = false;
  BlocksOptions blocks;
};

} // namespace shardlin::gpubench

#endif // SHARDLIN_BENCH_GPU_GPUBENCHOPTIONS_H
