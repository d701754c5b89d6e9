/*===- memref.h - MLIR's memref descriptors, from C -----------------------===*/
/*
 * What a function compiled with llvm.emit_c_interface takes and returns for
 * a memref of floats (mlir/ExecutionEngine/CRunnerUtils.h's
 * StridedMemRefType<float, R>): memref1 to memref4 for R = 1 to 4, filled
 * for row-major data (MEMREF_DENSE) and a result's sizes checked
 * (MEMREF_HAS_SIZES). Header-only, C99; used by main.c and by the test of
 * dynamic batch dims (integration_test/Aot).
 */
#ifndef SHARDLIN_EXAMPLES_AOT_MEMREF_H
#define SHARDLIN_EXAMPLES_AOT_MEMREF_H

#include <stdint.h>
#include <stdio.h>

#define MEMREF_TYPE(R)                                                         \
  struct {                                                                     \
    float *allocated, *aligned;                                                \
    int64_t offset, sizes[R], strides[R];                                      \
  }
typedef MEMREF_TYPE(1) memref1;
typedef MEMREF_TYPE(2) memref2;
typedef MEMREF_TYPE(3) memref3;
typedef MEMREF_TYPE(4) memref4;

/* The rank R of a memrefR `m` (a pointer). */
#define MEMREF_RANK(m) ((int)(sizeof((m)->sizes) / sizeof((m)->sizes[0])))

/* Points the memrefR `m` at row-major `data` of the R sizes that follow:
 * MEMREF_DENSE(&x, data, rows, cols). */
#define MEMREF_DENSE(m, data, ...)                                             \
  memref_dense(&(m)->allocated, &(m)->aligned, &(m)->offset, (m)->sizes,     \
               (m)->strides, MEMREF_RANK(m), (data),                         \
               (const int64_t[MEMREF_RANK(m)]){__VA_ARGS__})

static void memref_dense(float **allocated, float **aligned, int64_t *offset,
                         int64_t *sizes, int64_t *strides, int n,
                         float *data, const int64_t *dims) {
  int64_t stride = 1;
  int d;
  *allocated = *aligned = data;
  *offset = 0;
  for (d = n - 1; d >= 0; --d) {
    sizes[d] = dims[d];
    strides[d] = stride;
    stride *= dims[d];
  }
}

/* Whether the memrefR `m` (rank `rank`'s result of `what`) has the R sizes
 * that follow, its leading dims packed over each other (each stride but the
 * last two's is the next one's times its size); says what differs on
 * stderr otherwise. */
#define MEMREF_HAS_SIZES(what, rank, m, ...)                                   \
  memref_has_sizes((what), (rank), (m)->sizes, (m)->strides, MEMREF_RANK(m), \
                   (const int64_t[MEMREF_RANK(m)]){__VA_ARGS__})

static int memref_has_sizes(const char *what, int rank, const int64_t *sizes,
                            const int64_t *strides, int dims,
                            const int64_t *want) {
  int d;
  for (d = 0; d < dims; ++d)
    if (sizes[d] != want[d]) {
      fprintf(stderr, "%s rank %d: the result's dim %d is %lld, not %lld\n",
              what, rank, d, (long long)sizes[d], (long long)want[d]);
      return 0;
    }
  for (d = 0; d + 2 < dims; ++d)
    if (strides[d] != strides[d + 1] * sizes[d + 1]) {
      fprintf(stderr, "%s rank %d: the result's dims %d and %d are not "
              "packed\n", what, rank, d, d + 1);
      return 0;
    }
  return 1;
}

#endif /* SHARDLIN_EXAMPLES_AOT_MEMREF_H */
