/*===- main.c - Calling a module compiled ahead of time ------------------===*/
/*
 * layer.mlir compiled to an object file before this program was built
 * (CMakeLists.txt):
 *
 *   shardlin-opt layer.mlir --shardlin-lower-to-llvm -o layer.llvm.mlir
 *   mlir-translate-22 --mlir-to-llvmir layer.llvm.mlir -o layer.ll
 *   llc-22 -filetype=obj -relocation-model=pic layer.ll -o layer.o
 *
 * and linked with this file and the runtime (which provides the shardlin_*
 * functions the object calls). No MLIR or LLVM at run time. Each rank:
 *
 *   1. gets its context: `mpi` (one rank per process under mpirun) or
 *      `threads` (W = 4 ranks as threads of this process);
 *   2. sets it as its thread's context (the compiled code reads it);
 *   3. builds memref descriptors for its x (5 x 19), its chunk of the
 *      weight (the columns shardlin_chunk_range gives it) and the bias;
 *   4. calls _mlir_ciface_layer, checks the context's status;
 *   5. compares the result with softmax(x A^T + b) computed in float64 from
 *      the whole weight, prints its max error, and frees the result.
 *
 *   mpirun -np 4 shardlin-aot-layer mpi
 *   shardlin-aot-layer threads
 *
 * memref.h declares the descriptors; ../common/ranks.h (shared with the C
 * ABI's example) gives the inputs and runs each rank.
 *
 * Exit status 0 if every rank's max |y - ref| <= 1e-5: the linear's f32
 * error is below K * 2^-24 * sum |x a| < 2e-5 before the softmax, whose
 * derivative is at most 1/4 per input, and its results are below 1.
 */
#define _POSIX_C_SOURCE 200809L

#include "../common/ranks.h"
#include "memref.h"
#include "shardlin-c/Runtime.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { B = 5, K = 19, N = 11, W = 4 };
static const int64_t kPlacements[W] = {2, 3, 0, 1};

/* The compiled entry (layer.o): the result's descriptor first (memref.h:
 * MLIR's memref descriptors, as llvm.emit_c_interface passes them). */
void _mlir_ciface_layer(memref2 *result, memref2 *x, memref2 *w, memref1 *b);

/* One rank (ranks.h's example_input: tensor 0 is x, per rank; 1 A, 2 b).
 * Returns 0 if it passed. */
static int run_rank(shardlin_context *ctx) {
  const int rank = shardlin_context_rank(ctx);
  float x[B * K], bias[N], *chunk;
  int64_t offset = 0, size = 0;
  int i, j, p;
  memref2 xm, wm, result;
  memref1 bm;
  double max_error = 0;
  if (shardlin_chunk_range(K, W, kPlacements, rank, &offset, &size) !=
      SHARDLIN_OK) {
    fprintf(stderr, "rank %d: %s\n", rank, shardlin_last_error_message());
    return 1;
  }
  for (i = 0; i < B; ++i)
    for (p = 0; p < K; ++p)
      x[i * K + p] = example_input(0, rank, i, p);
  for (j = 0; j < N; ++j)
    bias[j] = example_input(2, 0, j, 0);
  /* This rank's columns [offset, offset + size) of A, contiguous. */
  chunk = malloc(sizeof(float) * (size_t)(N * (size > 0 ? size : 1)));
  if (!chunk)
    return 1;
  for (j = 0; j < N; ++j)
    for (p = 0; p < size; ++p)
      chunk[j * size + p] = example_input(1, 0, j, (int)offset + p);

  MEMREF_DENSE(&xm, x, B, K);
  MEMREF_DENSE(&wm, chunk, N, size);
  MEMREF_DENSE(&bm, bias, N);
  memset(&result, 0, sizeof result);
  shardlin_set_thread_context(ctx);
  _mlir_ciface_layer(&result, &xm, &wm, &bm);
  shardlin_set_thread_context(NULL);
  free(chunk);
  if (shardlin_context_status(ctx) != SHARDLIN_OK) {
    fprintf(stderr, "rank %d: %s\n", rank, shardlin_context_message(ctx));
    free(result.allocated);
    return 1;
  }
  if (!MEMREF_HAS_SIZES("layer", rank, &result, B, N)) {
    free(result.allocated);
    return 1;
  }
  /* softmax(x A^T + b) in float64 from the whole A. */
  for (i = 0; i < B; ++i) {
    double y[N], top = -INFINITY, total = 0;
    for (j = 0; j < N; ++j) {
      y[j] = bias[j];
      for (p = 0; p < K; ++p)
        y[j] += (double)x[i * K + p] * example_input(1, 0, j, p);
      top = y[j] > top ? y[j] : top;
    }
    for (j = 0; j < N; ++j)
      total += exp(y[j] - top);
    for (j = 0; j < N; ++j) {
      const float got = result.aligned[result.offset +
                                       i * result.strides[0] +
                                       j * result.strides[1]];
      const double err = fabs((double)got - exp(y[j] - top) / total);
      if (!(err <= max_error))
        max_error = err; /* NaN stays: it fails the check below */
    }
  }
  free(result.allocated);
  printf("rank %d: max |y - ref| = %.3g\n", rank, max_error);
  return !(max_error <= 1e-5);
}

int main(int argc, char **argv) {
  const char *backend = argc > 1 ? argv[1] : "mpi";
  if (strcmp(backend, "threads") != 0 && strcmp(backend, "mpi") != 0) {
    fprintf(stderr, "usage: %s [mpi|threads]\n", argv[0]);
    return 2;
  }
  /* The module was compiled for W ranks; under mpirun the job must have
   * that many (the compiled code also asserts it). ranks.h runs run_rank on
   * each rank of this process. */
  return example_run_ranks(backend, W, W, NULL, run_rank);
}
