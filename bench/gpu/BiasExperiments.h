//===- BiasExperiments.h - The GPU bench's bias epilogue trials -*- C++ -*-===//
//
// Section (d) of shardlin-gpu-bench (--bias-experiments): the short GPU
// experiments issue 28 asks for, to find how a bf16 GEMM with a bias can
// round once at the plain GEMM's speed. On the H200 run of 2026-12-04 both
// cuBLAS ways of adding the bias (cuBLASLt's BIAS epilogue with split-K
// reductions restricted to the compute type, and cublasGemmEx with beta = 1
// onto C pre-filled with the bias) gave bf16 results up to 3.3 ulp from the
// float64 reference where the bias cancels most of the product, while
// PyTorch's F.linear stayed within 0.73 ulp at the same shapes; the
// runtime's f32-accumulator path is exact but 1.275x the plain GEMM's time.
//
// Each variant differs from PyTorch's use of cuBLASLt (BIAS epilogue,
// compute 32F, scale 32F, a workspace, every reduction scheme allowed) in
// one setting: the reduction schemes the heuristic may pick (none, only
// INPLACE, which reduces split-K partial sums in the output type, only
// COMPUTE_TYPE), the bias's type (f32), the workspace (none); plus
// cublasGemmEx with beta = 1 and the runtime's own path. For each it
// reports, at the small shapes (33x17x67, 64x128x256, 128x96x1024,
// 600x1024x8, m x n x k) with biases that cancel row 0's products in half
// the columns, the largest error in units of the result's last place beyond
// the f32 accumulation's allowance (one rounding: <= 0.5), the split-K
// count and reduction scheme of the algorithm the heuristic chose, and its
// time at --gemm-size against the plain cuBLASLt GEMM (CUDA events, medians
// after warm-up).
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_BENCH_GPU_BIASEXPERIMENTS_H
#define SHARDLIN_BENCH_GPU_BIASEXPERIMENTS_H

#include <cstdint>

namespace shardlin::gpubench {

struct BiasExperimentOptions {
  int device = 0;
  /// The timed GEMM's m = n = k.
  int64_t size = 4096;
  int reps = 20;
};

/// Prints the table; exits 1 with one line on a CUDA or cuBLAS failure.
void runBiasExperiments(const BiasExperimentOptions &options);

} // namespace shardlin::gpubench

#endif // SHARDLIN_BENCH_GPU_BIASEXPERIMENTS_H
