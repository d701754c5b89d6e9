//===- BiasExperiments.h - The GPU bench's bias epilogue trials -*- C++ -*-===//
//
// Section (d) of shardlin-gpu-bench (--bias-experiments), issue 28's
// short GPU experiments: how can a bf16 GEMM with a bias round once at the
// plain GEMM's speed? The 2026-12-04 H200 run found both cuBLAS ways of
// adding the bias up to 3.3 ulp off where the bias cancels the product
// (PyTorch's F.linear: 0.73 ulp at most), and the runtime's exact
// f32-accumulator path 1.275x the plain GEMM's time (docs/gpu-results.md).
//
// Every variant changes one of PyTorch's cuBLASLt settings: which split-K
// reduction schemes the heuristic may choose (none; INPLACE alone, which
// sums partial products in the output type; COMPUTE_TYPE alone), an f32
// bias, no workspace; beside them cublasGemmEx with beta = 1 and the
// runtime's own path. The table gives, over the small shapes, the
// error beyond the f32 accumulation's allowance in last places (one
// rounding: at most 0.5), the split-K count and scheme the heuristic chose,
// and the time at --gemm-size against the GEMM without a bias.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_BENCH_GPU_BIASEXPERIMENTS_H
#define SHARDLIN_BENCH_GPU_BIASEXPERIMENTS_H

#include <cstdint>

namespace shardlin::gpubench {

/// Runs section (d) on cuda:`device`, timing a GEMM of m = n = k = `size`
/// `reps` times after 3 warm-up calls, and prints the table; exits 1 with
/// one line on a CUDA or cuBLAS failure.
void runBiasExperiments(int device, int64_t size, int reps);

} // namespace shardlin::gpubench

#endif // SHARDLIN_BENCH_GPU_BIASEXPERIMENTS_H
