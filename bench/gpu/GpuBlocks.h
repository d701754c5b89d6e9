//===- GpuBlocks.h - shardlin-gpu-bench's blocks section --------*- C++ -*-===//
//
// Section (c) of shardlin-gpu-bench: fused MLP and SwiGLU blocks timed on
// the ranks of an in-process backend (cuda-local on a GPU machine; threads
// for the CPU self-test), their outputs checked, next to PyTorch's times
// for the same blocks on the same GPU.
//
// The programs come from a directory that shardlin-write-block-suite
// --bench wrote on a machine with MLIR (scripts/make-gpu-suite.sh carries
// it): DIR/blocks.txt lists, per configuration, its fused program on W
// ranks (M / W rows each, "activations" strategy) and a W = 1 program of the
// same block on a few rows. For each configuration the section:
//
//   - makes random global weights and biases (kept for every W of the same
//     block) and a global input of M rows, rank r holding rows
//     [r M / W, (r + 1) M / W); values scaled by 1 / sqrt(fan-in) so that
//     activations stay near 1 in f16 and bf16;
//   - binds each rank's part in its device memory and times the program
//     with the replay hook (RankCallbacks::run): after warm-up, each
//     repetition starts when every rank is ready (a host barrier) and ends
//     when every rank's output is complete (a one-element copy to the host,
//     which waits for the rank's stream, then the barrier); the median of
//     rank 0's wall-clock times is reported;
//   - checks the first rows of every rank's output against the W = 1
//     program run on the threads backend (OpenBLAS) with the same rows:
//     max |gpu - host| / max |host| under a bound per dtype (bf16 2^-5, f16
//     2^-8, f32 2^-14): a wrong result is off by O(1), a different order
//     of summation by a few units of the last place;
//   - joins PyTorch's times (bench/gpu/torch_gpu_blocks.py's "result ..."
//     lines) by block, dtype and shape.
//
// Then the overlap table (docs/runtime.md, "Overlapping communication with
// the GEMMs"), for every configuration with W >= 2: the same program run in
// sequence and pipelined in each of BlocksOptions::overlapChunks row chunks
// (PlanOptions::overlapChunks, each run checked as above), and the block's
// two collectives alone, all_gather and reduce_scatter of the same counts on
// the same communicator, timed the same way: "comm", with "compute" the
// sequential time less it (in sequence nothing overlaps) and the target
// best overlapped <= 1.1 x max(compute, comm).
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_BENCH_GPU_GPUBLOCKS_H
#define SHARDLIN_BENCH_GPU_GPUBLOCKS_H

#include <string>
#include <vector>

namespace shardlin::gpubench {

struct BlocksOptions {
  /// The directory shardlin-write-block-suite --bench wrote.
  std::string dir;
  /// An in-process backend: cuda-local (the GPU), threads (self-test).
  std::string backend = "cuda-local";
  /// The GPU, for cuda-local.
  int device = 0;
  int warmup = 3;
  int reps = 20;
  /// bench/gpu/torch_gpu_blocks.py's output, or "" (no PyTorch column).
  std::string torchResults;
  /// The row chunks of the overlap table's pipelined runs; empty: no table.
  std::vector<int> overlapChunks = {2, 4};
};

/// Runs every configuration and prints the table. Returns false (after the
/// table) if an output failed its check; a run that cannot proceed (a bad
/// directory, a failing rank) prints one line and exits 1.
bool runBlocksSection(const BlocksOptions &options);

} // namespace shardlin::gpubench

#endif // SHARDLIN_BENCH_GPU_GPUBLOCKS_H
