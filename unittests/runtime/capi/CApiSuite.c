/*===- CApiSuite.c - The C ABI's ops against a float64 reference ---------===*/
/*
 * Plain C99 (built with -std=c99 -Wall -Wextra -pedantic -Werror): what a C
 * caller of shardlin-c/Runtime.h sees. Every rank runs every op of the ABI
 * in every dtype, for every placement permutation, with uneven and empty
 * chunks, collectives along leading and inner dims, and views that are
 * dense, row-major with a leading stride, column-major, or strided (inner
 * stride 2). Every output element is checked against a float64 reference
 * computed here, and so is what the op must not write: outputs are poisoned
 * with all-one bytes (a NaN in every dtype), padding included.
 *
 *   shardlin-capi-suite threads            W = 1..4, each rank a thread,
 *                                          and the options struct
 *   mpirun -np W shardlin-capi-suite mpi   one rank per process
 *   mpirun -np 2 shardlin-capi-suite launch
 *                                          the launch rules of contexts
 *
 * Inputs are nonzero multiples of 1/16 in [-2, 2] from a hash of (tensor,
 * owner, index): exact in f16 and bf16, and so are the sums of up to 8 of
 * them, so the collectives, bias_add and the f16/bf16 -> f32 conversions
 * are checked for exact equality. Bounds elsewhere: gemm
 *   |got - ref| <= u_out |ref| + (k + 2) u_acc (sum |a b| + |bias|),
 * u_acc = 2^-24 (f32 accumulation) or 2^-53 (f64), u_out = 2^-11 (f16),
 * 2^-8 (bf16), else 0; f32 -> f16/bf16 conversion |got - x| <= u_out |x|
 * (one rounding). Bytes sent per collective: the CommStats rules of
 * Communicator.h, computed here from the chunk rule.
 */
#define _POSIX_C_SOURCE 200809L

#include "shardlin-c/Runtime.h"

#include <math.h>
#include <stddef.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_RANK 4
#define MAX_W 4
#define MAX_PRINTS 12

/*===-- Values
 * -------------------------------------------------------------===*/

static uint64_t mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

/* A nonzero multiple of 1/16 in [-2, 2]. */
static double value(uint64_t tag, int64_t owner, int64_t index) {
  uint64_t h = mix(mix(tag) ^ mix((uint64_t)owner * 31u + 7u) ^
                   mix((uint64_t)index * 131u + 3u));
  int k = (int)(h % 64u) - 32;
  if (k >= 0)
    k += 1;
  return k / 16.0;
}

/*===-- Element types
 * -------------------------------------------------------===*/

static const shardlin_dtype kDtypes[4] = {SHARDLIN_F16, SHARDLIN_BF16,
                                          SHARDLIN_F32, SHARDLIN_F64};

static size_t dtype_size(shardlin_dtype t) {
  return t == SHARDLIN_F64 ? 8 : t == SHARDLIN_F32 ? 4 : 2;
}

static const char *dtype_name(shardlin_dtype t) {
  switch (t) {
  case SHARDLIN_F16:
    return "f16";
  case SHARDLIN_BF16:
    return "bf16";
  case SHARDLIN_F32:
    return "f32";
  case SHARDLIN_F64:
    return "f64";
  }
  return "?";
}

/* Unit roundoff of a result stored in t. */
static double unit_roundoff(shardlin_dtype t) {
  switch (t) {
  case SHARDLIN_F16:
    return ldexp(1.0, -11);
  case SHARDLIN_BF16:
    return ldexp(1.0, -8);
  case SHARDLIN_F32:
    return ldexp(1.0, -24);
  case SHARDLIN_F64:
    return ldexp(1.0, -53);
  }
  return 1.0;
}

static double f16_decode(uint16_t h) {
  int exp = (h >> 10) & 31, frac = h & 1023;
  double v;
  if (exp == 0)
    v = ldexp((double)frac, -24);
  else if (exp == 31)
    v = frac ? NAN : INFINITY;
  else
    v = ldexp((double)(1024 + frac), exp - 25);
  return (h & 0x8000) ? -v : v;
}

/* Exact for the values of value() (normal, 11 significant bits at most). */
static uint16_t f16_encode(double v) {
  uint16_t sign = v < 0 ? 0x8000 : 0;
  double a = fabs(v);
  int e = 0;
  double m;
  if (a == 0)
    return sign;
  m = frexp(a, &e); /* a = m 2^e, m in [0.5, 1) */
  return (uint16_t)(sign | (uint16_t)((e + 14) << 10) |
                    (uint16_t)((2 * m - 1) * 1024));
}

static double bf16_decode(uint16_t b) {
  uint32_t u = (uint32_t)b << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

/* Exact for values with 8 significant bits at most. */
static uint16_t bf16_encode(double v) {
  float f = (float)v;
  uint32_t u;
  memcpy(&u, &f, 4);
  return (uint16_t)(u >> 16);
}

static void store(shardlin_dtype t, unsigned char *p, double v) {
  uint16_t h;
  float f;
  switch (t) {
  case SHARDLIN_F16:
    h = f16_encode(v);
    memcpy(p, &h, 2);
    return;
  case SHARDLIN_BF16:
    h = bf16_encode(v);
    memcpy(p, &h, 2);
    return;
  case SHARDLIN_F32:
    f = (float)v;
    memcpy(p, &f, 4);
    return;
  case SHARDLIN_F64:
    memcpy(p, &v, 8);
    return;
  }
}

static double load(shardlin_dtype t, const unsigned char *p) {
  uint16_t h;
  float f;
  double d;
  switch (t) {
  case SHARDLIN_F16:
    memcpy(&h, p, 2);
    return f16_decode(h);
  case SHARDLIN_BF16:
    memcpy(&h, p, 2);
    return bf16_decode(h);
  case SHARDLIN_F32:
    memcpy(&f, p, 4);
    return f;
  case SHARDLIN_F64:
    memcpy(&d, p, 8);
    return d;
  }
  return NAN;
}

/*===-- Tensors: a buffer and a view of it
 * ---------------------------------===*/

/* DENSE: row-major (built with shardlin_view_init). LEADING: row-major
 * rows with padded leading strides and an offset (BLAS's ld). COLMAJOR:
 * dim 0 fastest. STRIDED: inner stride 2, padded, offset. */
enum layout { DENSE, LEADING, COLMAJOR, STRIDED, NUM_LAYOUTS };

static const char *layout_name(enum layout l) {
  static const char *names[] = {"dense", "leading", "colmajor", "strided"};
  return names[l];
}

typedef struct tensor {
  shardlin_dtype t;
  int rank;
  int64_t sizes[MAX_RANK], strides[MAX_RANK], offset;
  int64_t elements, cap;
  unsigned char *buf;
  shardlin_view_storage storage;
  shardlin_memref ref;
} tensor;

typedef struct rank_state {
  shardlin_context *ctx;
  int rank, w;
  long checks, failures, prints;
  const char *mode;
} rank_state;

static void fail(rank_state *s, const char *what, const char *detail) {
  ++s->failures;
  if (s->prints++ < MAX_PRINTS) {
    fprintf(stderr, "FAIL [%s W=%d rank %d] %s: %s\n", s->mode, s->w, s->rank,
            what, detail);
    fflush(stderr);
  }
}

static int64_t numel(int rank, const int64_t *sizes) {
  int64_t n = 1;
  int i;
  for (i = 0; i < rank; ++i)
    n *= sizes[i];
  return n;
}

static void unravel(int64_t li, int rank, const int64_t *sizes, int64_t *idx) {
  int i;
  for (i = rank - 1; i >= 0; --i) {
    idx[i] = sizes[i] ? li % sizes[i] : 0;
    li = sizes[i] ? li / sizes[i] : 0;
  }
}

static int64_t ravel(const int64_t *idx, int rank, const int64_t *sizes) {
  int64_t li = 0;
  int i;
  for (i = 0; i < rank; ++i)
    li = li * sizes[i] + idx[i];
  return li;
}

static void tensor_make(tensor *x, shardlin_dtype t, int rank,
                        const int64_t *sizes, enum layout l) {
  int i;
  int64_t last = 0;
  memset(x, 0, sizeof *x);
  x->t = t;
  x->rank = rank;
  for (i = 0; i < rank; ++i)
    x->sizes[i] = sizes[i];
  x->elements = numel(rank, sizes);
  switch (l) {
  case DENSE:
  case LEADING:
  case STRIDED:
    /* Row-major; LEADING and STRIDED pad every leading stride by 3. */
    x->offset = l == DENSE ? 0 : 5;
    for (i = rank - 1; i >= 0; --i)
      x->strides[i] = i == rank - 1 ? (l == STRIDED ? 2 : 1)
                                    : x->strides[i + 1] * sizes[i + 1] +
                                          (l == DENSE ? 0 : 3);
    break;
  case COLMAJOR:
  default:
    x->offset = 3;
    for (i = 0; i < rank; ++i)
      x->strides[i] = i == 0 ? 1 : x->strides[i - 1] * sizes[i - 1];
    break;
  }
  for (i = 0; i < rank; ++i)
    if (sizes[i] > 0)
      last += (sizes[i] - 1) * x->strides[i];
  x->cap = x->offset + last + 4;
  x->buf = malloc((size_t)x->cap * dtype_size(t));
  memset(x->buf, 0xFF, (size_t)x->cap * dtype_size(t));
  if (l == DENSE) {
    shardlin_view_init(&x->ref, &x->storage, x->buf, rank, sizes);
    return;
  }
  x->storage.allocated = x->buf;
  x->storage.aligned = x->buf;
  x->storage.offset = x->offset;
  for (i = 0; i < rank; ++i) {
    x->storage.sizes_and_strides[i] = sizes[i];
    x->storage.sizes_and_strides[rank + i] = x->strides[i];
  }
  x->ref.rank = rank;
  x->ref.descriptor = &x->storage;
}

static void tensor_free(tensor *x) {
  free(x->buf);
  x->buf = NULL;
}

/* The element at row-major index li of the view. */
static unsigned char *at(const tensor *x, int64_t li) {
  int64_t idx[MAX_RANK], off = x->offset;
  int i;
  unravel(li, x->rank, x->sizes, idx);
  for (i = 0; i < x->rank; ++i)
    off += idx[i] * x->strides[i];
  return x->buf + off * (int64_t)dtype_size(x->t);
}

static void set(tensor *x, int64_t li, double v) { store(x->t, at(x, li), v); }
static double get(const tensor *x, int64_t li) { return load(x->t, at(x, li)); }

/* Checks that nothing outside the view was written: those bytes keep the
 * poison. */
static void check_untouched(rank_state *s, const tensor *x, const char *what) {
  const size_t es = dtype_size(x->t);
  unsigned char *used = calloc((size_t)x->cap, 1);
  int64_t li, e;
  size_t b;
  for (li = 0; li < x->elements; ++li)
    used[(at(x, li) - x->buf) / (int64_t)es] = 1;
  for (e = 0; e < x->cap; ++e) {
    if (used[e])
      continue;
    for (b = 0; b < es; ++b)
      if (x->buf[e * (int64_t)es + (int64_t)b] != 0xFF) {
        char detail[96];
        snprintf(detail, sizeof detail,
                 "element %ld of the buffer, outside the view, was written",
                 (long)e);
        fail(s, what, detail);
        free(used);
        return;
      }
  }
  free(used);
}

/* Compares element li of x with ref under |got - ref| <= bound. */
static void check_value(rank_state *s, const char *what, const tensor *x,
                        int64_t li, double ref, double bound) {
  double got = get(x, li);
  ++s->checks;
  if (!(fabs(got - ref) <= bound)) {
    char detail[160];
    snprintf(detail, sizeof detail,
             "element %ld: got %.9g, expected %.9g (bound %.3g)", (long)li, got,
             ref, bound);
    fail(s, what, detail);
  }
}

static int check_ok(rank_state *s, const char *what, shardlin_status st) {
  ++s->checks;
  if (st == SHARDLIN_OK)
    return 1;
  {
    char detail[512];
    snprintf(detail, sizeof detail, "%s: %s", shardlin_status_name(st),
             shardlin_context_message(s->ctx));
    fail(s, what, detail);
  }
  return 0;
}

static void check_traffic(rank_state *s, const char *what, uint64_t bytes0,
                          uint64_t calls0, uint64_t expected) {
  uint64_t bytes = shardlin_context_bytes_sent(s->ctx) - bytes0;
  uint64_t calls = shardlin_context_collective_calls(s->ctx) - calls0;
  ++s->checks;
  if (bytes != expected || calls != 1) {
    char detail[160];
    snprintf(detail, sizeof detail,
             "sent %llu bytes in %llu calls, expected %llu bytes in 1 call",
             (unsigned long long)bytes, (unsigned long long)calls,
             (unsigned long long)expected);
    fail(s, what, detail);
  }
}

/*===-- Chunks, computed here (not with the ABI)
 * ---------------------------===*/

typedef struct range {
  int64_t offset, size;
} range;

/* The range rank `r` holds of a dim of size n under placements p (w) and
 * bounds b (w + 1 of them; NULL: the ceil rule). */
static range chunk_at(int64_t n, int w, const int64_t *p, const int64_t *b,
                      int r) {
  int64_t split = (n + w - 1) / w, begin, end;
  int i = 0;
  range out;
  while (p[i] != r)
    ++i;
  begin = i * split < n ? i * split : n;
  end = (i + 1) * split < n ? (i + 1) * split : n;
  if (b) {
    begin = b[i];
    end = b[i + 1];
  }
  out.offset = begin;
  out.size = end - begin;
  return out;
}

static range chunk_of(int64_t n, int w, const int64_t *p, int r) {
  return chunk_at(n, w, p, NULL, r);
}

/* All permutations of 0..w-1, in lexicographic order. */
static int permutations(int w, int64_t perms[][MAX_W]) {
  int count = 0, i;
  int64_t p[MAX_W];
  for (i = 0; i < w; ++i)
    p[i] = i;
  for (;;) {
    int j, k;
    memcpy(perms[count++], p, sizeof p);
    /* next permutation */
    for (j = w - 2; j >= 0 && p[j] > p[j + 1]; --j)
      ;
    if (j < 0)
      return count;
    for (k = w - 1; p[k] < p[j]; --k)
      ;
    {
      int64_t t = p[j];
      p[j] = p[k];
      p[k] = t;
    }
    for (i = j + 1, k = w - 1; i < k; ++i, --k) {
      int64_t t = p[i];
      p[i] = p[k];
      p[k] = t;
    }
  }
}

/*===-- The collectives
 * ------------------------------------------------------===*/

typedef struct coll_case {
  shardlin_dtype t;
  const int64_t *p, *q; /* placements of the (split) dim, and of concat */
  const int64_t *b;     /* explicit bounds of the (split) dim, or NULL */
  int64_t n;            /* the chunked dim's size */
  enum layout in_layout, out_layout;
  char name[160];
} coll_case;

static void describe(coll_case *c, rank_state *s, const char *op) {
  int i;
  char perm[40] = "";
  for (i = 0; i < s->w; ++i) {
    char one[8];
    snprintf(one, sizeof one, "%s%ld", i ? "," : "", (long)c->p[i]);
    strcat(perm, one);
  }
  snprintf(c->name, sizeof c->name,
           "%s %s n=%ld placements [%s]%s in %s out %s", op,
           dtype_name(c->t), (long)c->n, perm, c->b ? " bounds" : "",
           layout_name(c->in_layout), layout_name(c->out_layout));
}

/* all_gather along `dim` of a tensor of `rank` dims: out is the global
 * G[li] = value(tag, 0, li). */
static void test_all_gather(rank_state *s, coll_case *c, int rank, int dim) {
  int64_t gsizes[MAX_RANK] = {2, c->n, 3}, isizes[MAX_RANK], idx[MAX_RANK];
  tensor in, out;
  int64_t li;
  range own;
  uint64_t b0, c0, es = dtype_size(c->t);
  const uint64_t tag = 100 + (uint64_t)dim;
  if (rank == 2) {
    gsizes[0] = c->n;
    gsizes[1] = 3;
  }
  describe(c, s, dim == 0 ? "all_gather dim 0" : "all_gather dim 1");
  own = chunk_at(c->n, s->w, c->p, c->b, s->rank);
  memcpy(isizes, gsizes, sizeof isizes);
  isizes[dim] = own.size;
  tensor_make(&in, c->t, rank, isizes, c->in_layout);
  tensor_make(&out, c->t, rank, gsizes, c->out_layout);
  for (li = 0; li < in.elements; ++li) {
    unravel(li, rank, isizes, idx);
    idx[dim] += own.offset;
    set(&in, li, value(tag, 0, ravel(idx, rank, gsizes)));
  }
  b0 = shardlin_context_bytes_sent(s->ctx);
  c0 = shardlin_context_collective_calls(s->ctx);
  if (check_ok(
          s, c->name,
          c->b ? shardlin_all_gather_bounds(s->ctx, c->t, &in.ref, &out.ref,
                                            dim, c->p, c->b)
               : shardlin_all_gather(s->ctx, c->t, &in.ref, &out.ref, dim,
                                     c->p))) {
    for (li = 0; li < out.elements; ++li)
      check_value(s, c->name, &out, li, value(tag, 0, li), 0.0);
    check_untouched(s, &out, c->name);
    check_traffic(s, c->name, b0, c0,
                  (uint64_t)in.elements * (uint64_t)(s->w - 1) * es);
  }
  tensor_free(&in);
  tensor_free(&out);
}

/* The bytes this rank sends to the others when rank d's piece is `per`
 * elements times d's chunk of n (all_to_all's and reduce_scatter's rule in
 * Communicator.h: the counts of the other ranks' pieces). */
static uint64_t bytes_to_others(const rank_state *s, const coll_case *c,
                                int64_t per) {
  uint64_t bytes = 0;
  int d;
  for (d = 0; d < s->w; ++d)
    if (d != s->rank)
      bytes += (uint64_t)(per * chunk_at(c->n, s->w, c->p, c->b, d).size) *
               dtype_size(c->t);
  return bytes;
}

/* all_to_all of 2-D tensors: split along sd (size n, placements p),
 * concatenated along cd (size m, placements q). Rank s's input element li
 * is value(tag, s, li). */
static void test_all_to_all(rank_state *s, coll_case *c, int sd, int cd) {
  const int64_t m = 3;
  const uint64_t tag = 200 + (uint64_t)sd;
  int64_t isizes[2], osizes[2], idx[2], li;
  uint64_t b0, c0, expected;
  range own_split = chunk_at(c->n, s->w, c->p, c->b, s->rank);
  range own_concat = chunk_of(m, s->w, c->q, s->rank);
  tensor in, out;
  describe(c, s, sd == 0 ? "all_to_all 0->1" : "all_to_all 1->0");
  isizes[sd] = c->n;
  isizes[cd] = own_concat.size;
  osizes[sd] = own_split.size;
  osizes[cd] = m;
  tensor_make(&in, c->t, 2, isizes, c->in_layout);
  tensor_make(&out, c->t, 2, osizes, c->out_layout);
  for (li = 0; li < in.elements; ++li)
    set(&in, li, value(tag, s->rank, li));
  expected = bytes_to_others(s, c, own_concat.size);
  b0 = shardlin_context_bytes_sent(s->ctx);
  c0 = shardlin_context_collective_calls(s->ctx);
  if (check_ok(s, c->name,
               c->b ? shardlin_all_to_all_bounds(s->ctx, c->t, &in.ref,
                                                 &out.ref, sd, c->p, c->b, cd,
                                                 c->q, NULL)
                    : shardlin_all_to_all(s->ctx, c->t, &in.ref, &out.ref, sd,
                                          c->p, cd, c->q))) {
    for (li = 0; li < out.elements; ++li) {
      /* Out element idx came from the rank whose concat chunk holds
       * idx[cd], from its input at (idx[cd] - that chunk's offset) along
       * cd and (idx[sd] + this rank's split offset) along sd. */
      int from = 0;
      range r = {0, 0};
      int64_t src[2], ssizes[2];
      unravel(li, 2, osizes, idx);
      for (from = 0; from < s->w; ++from) {
        r = chunk_of(m, s->w, c->q, from);
        if (idx[cd] >= r.offset && idx[cd] < r.offset + r.size)
          break;
      }
      src[cd] = idx[cd] - r.offset;
      src[sd] = idx[sd] + own_split.offset;
      ssizes[cd] = r.size;
      ssizes[sd] = c->n;
      check_value(s, c->name, &out, li, value(tag, from, ravel(src, 2, ssizes)),
                  0.0);
    }
    check_untouched(s, &out, c->name);
    check_traffic(s, c->name, b0, c0, expected);
  }
  tensor_free(&in);
  tensor_free(&out);
}

/* reduce_scatter along `dim` of 2-D tensors; rank s's input element li is
 * value(tag, s, li). */
static void test_reduce_scatter(rank_state *s, coll_case *c, int dim) {
  const uint64_t tag = 300 + (uint64_t)dim;
  int64_t isizes[2] = {c->n, 3}, osizes[2], idx[2], li;
  uint64_t b0, c0, expected;
  range own = chunk_at(c->n, s->w, c->p, c->b, s->rank);
  tensor in, out;
  if (dim == 1) {
    isizes[0] = 4;
    isizes[1] = c->n;
  }
  describe(c, s, dim == 0 ? "reduce_scatter dim 0" : "reduce_scatter dim 1");
  osizes[0] = isizes[0];
  osizes[1] = isizes[1];
  osizes[dim] = own.size;
  tensor_make(&in, c->t, 2, isizes, c->in_layout);
  tensor_make(&out, c->t, 2, osizes, c->out_layout);
  for (li = 0; li < in.elements; ++li)
    set(&in, li, value(tag, s->rank, li));
  expected = bytes_to_others(s, c, isizes[1 - dim]);
  b0 = shardlin_context_bytes_sent(s->ctx);
  c0 = shardlin_context_collective_calls(s->ctx);
  if (check_ok(s, c->name,
               c->b ? shardlin_reduce_scatter_bounds(s->ctx, c->t, &in.ref,
                                                     &out.ref, dim, c->p, c->b)
                    : shardlin_reduce_scatter(s->ctx, c->t, &in.ref, &out.ref,
                                              dim, c->p))) {
    for (li = 0; li < out.elements; ++li) {
      double sum = 0;
      int from;
      unravel(li, 2, osizes, idx);
      idx[dim] += own.offset;
      for (from = 0; from < s->w; ++from)
        sum += value(tag, from, ravel(idx, 2, isizes));
      check_value(s, c->name, &out, li, sum, 0.0);
    }
    check_untouched(s, &out, c->name);
    check_traffic(s, c->name, b0, c0, expected);
  }
  tensor_free(&in);
  tensor_free(&out);
}

/* all_reduce of a 2 x 3 tensor (in place on odd ranks): every rank gets
 * the sum; it sends count - m + (W - 1) m elements, m its ceil-rule chunk
 * of the count (Communicator.h). */
static void test_all_reduce(rank_state *s, coll_case *c) {
  const uint64_t tag = 400;
  int64_t sizes[2] = {2, 3}, li;
  const int in_place = s->rank % 2;
  const range mine = chunk_of(6, s->w, c->p, c->p[s->rank]);
  uint64_t b0, c0;
  tensor in, out;
  describe(c, s, in_place ? "all_reduce in place" : "all_reduce");
  tensor_make(&in, c->t, 2, sizes, c->in_layout);
  tensor_make(&out, c->t, 2, sizes, c->out_layout);
  for (li = 0; li < in.elements; ++li)
    set(&in, li, value(tag, s->rank, li));
  b0 = shardlin_context_bytes_sent(s->ctx);
  c0 = shardlin_context_collective_calls(s->ctx);
  if (check_ok(s, c->name,
               shardlin_all_reduce(s->ctx, c->t, &in.ref,
                                   in_place ? &in.ref : &out.ref))) {
    const tensor *got = in_place ? &in : &out;
    for (li = 0; li < got->elements; ++li) {
      double sum = 0;
      int from;
      for (from = 0; from < s->w; ++from)
        sum += value(tag, from, li);
      check_value(s, c->name, got, li, sum, 0.0);
    }
    if (!in_place)
      check_untouched(s, &out, c->name);
    check_traffic(s, c->name, b0, c0,
                  (uint64_t)(6 - mine.size + (s->w - 1) * mine.size) *
                      dtype_size(c->t));
  }
  tensor_free(&in);
  tensor_free(&out);
}

static void test_collectives(rank_state *s) {
  static const enum layout pairs[4][2] = {
      {DENSE, DENSE}, {STRIDED, DENSE}, {DENSE, STRIDED}, {COLMAJOR, LEADING}};
  static const int64_t sizes[3] = {5, 2, 7};
  int64_t perms[24][MAX_W], bounds[MAX_W + 1];
  const int nperm = permutations(s->w, perms);
  int ti, pi, li, ni, i;
  /* 7 at skewed explicit bounds, floor(7 i^2 / W^2): empty chunks first
   * (W = 4: 0, 0, 1, 3, 7). */
  for (i = 0; i <= s->w; ++i)
    bounds[i] = 7 * i * i / (s->w * s->w);
  for (ti = 0; ti < 4; ++ti)
    for (pi = 0; pi < nperm; ++pi)
      for (li = 0; li < 4; ++li)
        for (ni = 0; ni < 3; ++ni) {
          coll_case c;
          c.t = kDtypes[ti];
          c.p = perms[pi];
          c.q = perms[(pi + 1 + li) % nperm];
          c.b = ni == 2 ? bounds : NULL;
          c.n = sizes[ni];
          c.in_layout = pairs[li][0];
          c.out_layout = pairs[li][1];
          test_all_gather(s, &c, 2, 0);
          test_all_gather(s, &c, 3, 1);
          test_all_to_all(s, &c, 0, 1);
          test_all_to_all(s, &c, 1, 0);
          test_reduce_scatter(s, &c, 0);
          test_reduce_scatter(s, &c, 1);
          if (ni == 0)
            test_all_reduce(s, &c);
        }
}

/*===-- The local ops
 * ---------------------------------------------------------===*/

static void test_gemm_case(rank_state *s, shardlin_dtype t, int tl, int tr,
                           int with_bias, int f32_out, int64_t m, int64_t n,
                           int64_t k, enum layout ll, enum layout rl,
                           enum layout ol) {
  const shardlin_dtype ot = f32_out ? SHARDLIN_F32 : t;
  const double u_acc = t == SHARDLIN_F64 ? ldexp(1.0, -53) : ldexp(1.0, -24);
  const double u_out = f32_out || t == SHARDLIN_F32 || t == SHARDLIN_F64
                           ? 0.0
                           : unit_roundoff(t);
  int64_t lsizes[2], rsizes[2], osizes[2] = {m, n}, li;
  tensor lhs, rhs, bias, out;
  char name[200];
  snprintf(name, sizeof name,
           "gemm %s%s m=%ld n=%ld k=%ld tl=%d tr=%d bias=%d lhs %s rhs %s "
           "out %s",
           dtype_name(t), f32_out ? "->f32" : "", (long)m, (long)n, (long)k, tl,
           tr, with_bias, layout_name(ll), layout_name(rl), layout_name(ol));
  lsizes[0] = tl ? k : m;
  lsizes[1] = tl ? m : k;
  rsizes[0] = tr ? n : k;
  rsizes[1] = tr ? k : n;
  tensor_make(&lhs, t, 2, lsizes, ll);
  tensor_make(&rhs, t, 2, rsizes, rl);
  tensor_make(&bias, t, 1, &n, with_bias ? STRIDED : DENSE);
  tensor_make(&out, ot, 2, osizes, ol);
  for (li = 0; li < lhs.elements; ++li)
    set(&lhs, li, value(400, s->rank, li));
  for (li = 0; li < rhs.elements; ++li)
    set(&rhs, li, value(401, s->rank, li));
  for (li = 0; li < n; ++li)
    set(&bias, li, value(402, s->rank, li));
  if (check_ok(s, name,
               shardlin_gemm(s->ctx, t, &lhs.ref, &rhs.ref,
                             with_bias ? &bias.ref : NULL, ot, &out.ref, tl,
                             tr))) {
    for (li = 0; li < out.elements; ++li) {
      const int64_t i = li / n, j = li % n;
      double ref = with_bias ? get(&bias, j) : 0, mag = fabs(ref);
      int64_t p;
      for (p = 0; p < k; ++p) {
        double a = get(&lhs, tl ? p * m + i : i * k + p);
        double b = get(&rhs, tr ? j * k + p : p * n + j);
        ref += a * b;
        mag += fabs(a * b);
      }
      check_value(s, name, &out, li, ref,
                  u_out * fabs(ref) + (double)(k + 2) * u_acc * mag);
    }
    check_untouched(s, &out, name);
  }
  tensor_free(&lhs);
  tensor_free(&rhs);
  tensor_free(&bias);
  tensor_free(&out);
}

static void test_gemm(rank_state *s) {
  static const int64_t shapes[3][3] = {{5, 4, 3}, {4, 3, 0}, {0, 3, 2}};
  int ti, tl, tr, b, f, si, li;
  for (ti = 0; ti < 4; ++ti)
    for (si = 0; si < 3; ++si)
      for (tl = 0; tl < 2; ++tl)
        for (tr = 0; tr < 2; ++tr)
          for (b = 0; b < 2; ++b)
            for (f = 0; f < 2; ++f) {
              const shardlin_dtype t = kDtypes[ti];
              if (f && (b || t == SHARDLIN_F32 || t == SHARDLIN_F64))
                continue;
              for (li = 0; li < NUM_LAYOUTS; ++li)
                test_gemm_case(s, t, tl, tr, b, f, shapes[si][0], shapes[si][1],
                               shapes[si][2], (enum layout)li,
                               (enum layout)((li + 2) % NUM_LAYOUTS),
                               (enum layout)((li + 1) % 3));
            }
}

static void test_bias_add(rank_state *s) {
  static const int64_t sizes[2][3] = {{3, 4, 0}, {2, 3, 5}};
  int ti, ri, li, in_place;
  for (ti = 0; ti < 4; ++ti)
    for (ri = 0; ri < 2; ++ri)
      for (li = 0; li < NUM_LAYOUTS; ++li)
        for (in_place = 0; in_place < 2; ++in_place) {
          const shardlin_dtype t = kDtypes[ti];
          const int rank = ri == 0 ? 2 : 3;
          const int64_t cols = sizes[ri][rank - 1];
          tensor in, bias, out;
          tensor *y = in_place ? &in : &out;
          int64_t e;
          char name[160];
          snprintf(name, sizeof name, "bias_add %s rank %d %s%s", dtype_name(t),
                   rank, layout_name((enum layout)li),
                   in_place ? " in place" : "");
          tensor_make(&in, t, rank, sizes[ri], (enum layout)li);
          tensor_make(&bias, t, 1, &cols, (enum layout)((li + 3) % 4));
          tensor_make(&out, t, rank, sizes[ri],
                      (enum layout)((li + 1) % NUM_LAYOUTS));
          for (e = 0; e < in.elements; ++e)
            set(&in, e, value(500, s->rank, e));
          for (e = 0; e < cols; ++e)
            set(&bias, e, value(501, s->rank, e));
          if (check_ok(
                  s, name,
                  shardlin_bias_add(s->ctx, t, &in.ref, &bias.ref, &y->ref))) {
            for (e = 0; e < y->elements; ++e)
              check_value(s, name, y, e,
                          value(500, s->rank, e) + get(&bias, e % cols), 0.0);
            check_untouched(s, y, name);
          }
          tensor_free(&in);
          tensor_free(&bias);
          tensor_free(&out);
        }
}

static void test_convert(rank_state *s) {
  static const int64_t sizes[3] = {3, 2, 4};
  int ni, li, rank;
  for (ni = 0; ni < 2; ++ni)
    for (li = 0; li < NUM_LAYOUTS; ++li)
      for (rank = 0; rank <= 3; rank += 3) {
        const shardlin_dtype narrow = ni ? SHARDLIN_BF16 : SHARDLIN_F16;
        tensor wide, down, up;
        int64_t e;
        char name[160];
        snprintf(name, sizeof name, "convert f32 <-> %s rank %d %s",
                 dtype_name(narrow), rank, layout_name((enum layout)li));
        tensor_make(&wide, SHARDLIN_F32, rank, sizes, (enum layout)li);
        tensor_make(&down, narrow, rank, sizes,
                    (enum layout)((li + 1) % NUM_LAYOUTS));
        tensor_make(&up, SHARDLIN_F32, rank, sizes,
                    (enum layout)((li + 2) % NUM_LAYOUTS));
        /* Not representable in f16/bf16: the narrowing rounds. */
        for (e = 0; e < wide.elements; ++e)
          set(&wide, e, value(600, s->rank, e) * (1.0 + 1.0 / 3000.0));
        if (check_ok(s, name,
                     shardlin_convert(s->ctx, &wide.ref, SHARDLIN_F32,
                                      &down.ref, narrow))) {
          for (e = 0; e < down.elements; ++e)
            check_value(s, name, &down, e, get(&wide, e),
                        unit_roundoff(narrow) * fabs(get(&wide, e)));
          check_untouched(s, &down, name);
        }
        if (check_ok(s, name,
                     shardlin_convert(s->ctx, &down.ref, narrow, &up.ref,
                                      SHARDLIN_F32))) {
          for (e = 0; e < up.elements; ++e)
            check_value(s, name, &up, e, get(&down, e), 0.0);
          check_untouched(s, &up, name);
        }
        tensor_free(&wide);
        tensor_free(&down);
        tensor_free(&up);
      }
}

static void test_chunk_range(rank_state *s) {
  int64_t perms[24][MAX_W], n;
  const int nperm = permutations(s->w, perms);
  int pi, r;
  for (n = 0; n < 10; ++n)
    for (pi = 0; pi < nperm; ++pi)
      for (r = 0; r < s->w; ++r) {
        range want = chunk_of(n, s->w, perms[pi], r);
        int64_t offset = -1, size = -1;
        shardlin_status st =
            shardlin_chunk_range(n, s->w, perms[pi], r, &offset, &size);
        ++s->checks;
        if (st != SHARDLIN_OK || offset != want.offset || size != want.size) {
          char detail[200];
          snprintf(detail, sizeof detail,
                   "n=%ld rank %d: got %s [%ld, +%ld), expected [%ld, +%ld)",
                   (long)n, r, shardlin_status_name(st), (long)offset,
                   (long)size, (long)want.offset, (long)want.size);
          fail(s, "chunk_range", detail);
        }
      }
}

/* Everything, on one rank. Every rank makes the same calls. */
/* shardlin_context_split as a grid uses it: the ranks split by parity
 * (color rank % 2), ranked in reverse (key -rank); each new context's rank
 * and size, and an f64 all_reduce on it that sums its group's ranks + 1
 * only. */
static void test_split(rank_state *s) {
  shardlin_context *half = NULL;
  double v[1], expect = 0;
  int64_t one = 1;
  int r, size = 0, below = 0;
  shardlin_view_storage vs;
  shardlin_memref vref;
  char what[64];
  for (r = 0; r < s->w; ++r)
    if (r % 2 == s->rank % 2) {
      ++size;
      expect += r + 1;
      if (r > s->rank)
        ++below; /* ranked by key -r: the higher ranks come first */
    }
  if (!check_ok(s, "shardlin_context_split",
                shardlin_context_split(s->ctx, s->rank % 2, -s->rank, &half)))
    return;
  ++s->checks;
  if (shardlin_context_world_size(half) != size ||
      shardlin_context_rank(half) != below) {
    snprintf(what, sizeof what, "rank %d of %d, expected %d of %d",
             shardlin_context_rank(half), shardlin_context_world_size(half),
             below, size);
    fail(s, "shardlin_context_split", what);
  }
  v[0] = s->rank + 1;
  shardlin_view_init(&vref, &vs, v, 1, &one);
  if (check_ok(s, "all_reduce on a split context",
               shardlin_all_reduce(half, SHARDLIN_F64, &vref, &vref))) {
    ++s->checks;
    if (v[0] != expect) {
      snprintf(what, sizeof what, "%g, expected %g", v[0], expect);
      fail(s, "all_reduce on a split context", what);
    }
  }
  shardlin_context_destroy(half);
}

static void run_rank(rank_state *s) {
  s->rank = shardlin_context_rank(s->ctx);
  s->w = shardlin_context_world_size(s->ctx);
  test_chunk_range(s);
  test_collectives(s);
  test_gemm(s);
  test_bias_add(s);
  test_convert(s);
  test_split(s);
  ++s->checks;
  if (shardlin_context_status(s->ctx) != SHARDLIN_OK)
    fail(s, "context status", shardlin_context_message(s->ctx));
}

/*===-- Drivers
 * ------------------------------------------------------------===*/

static void *rank_thread(void *arg) {
  run_rank((rank_state *)arg);
  return NULL;
}

static shardlin_options suite_options(void) {
  shardlin_options o = SHARDLIN_OPTIONS_INIT;
  o.timeout_seconds =
      60; /* a bug that leaves a rank waiting fails, not hangs */
  o.blas_threads = 1;
  return o;
}

/* shardlin_options as a program compiled against an older, smaller
 * shardlin-c/Runtime.h would have it: the header and the timeout, no
 * blas_threads. */
typedef struct older_options {
  size_t size;
  uint32_t magic;
  uint32_t version;
  double timeout_seconds;
} older_options;

/* Creating a one-rank group with `options`: its status and message. */
static shardlin_status create_with(const shardlin_options *options) {
  shardlin_context *ctx = NULL;
  shardlin_status st = shardlin_threads_group_create(1, options, &ctx);
  shardlin_context_destroy(ctx);
  return st;
}

static void expect_created(rank_state *s, const char *what,
                           const shardlin_options *options,
                           shardlin_status want, const char *message) {
  shardlin_status st = create_with(options);
  ++s->checks;
  if (st != want ||
      (message && !strstr(shardlin_last_error_message(), message)))
    fail(s, what, shardlin_last_error_message());
}

/* The options struct as C callers fill it: an older, smaller struct (what
 * lies past its size, here an invalid blas_threads, is never read), one
 * that was never initialized, none at all. */
static void test_options(rank_state *s) {
  struct {
    older_options options;
    int after; /* where blas_threads is in this header's struct */
  } older;
  shardlin_options zeroed;
  memset(&older, 0, sizeof older);
  older.options.size = sizeof older.options;
  older.options.magic = SHARDLIN_OPTIONS_MAGIC;
  older.options.version = SHARDLIN_OPTIONS_VERSION;
  older.options.timeout_seconds = 60;
  older.after = -1;
  ++s->checks;
  if (offsetof(older_options, timeout_seconds) !=
          offsetof(shardlin_options, timeout_seconds) ||
      sizeof(older_options) != offsetof(shardlin_options, blas_threads))
    fail(s, "options layout", "older_options is not a prefix");
  expect_created(s, "an older options struct",
                 (const shardlin_options *)&older, SHARDLIN_OK, NULL);
  memset(&zeroed, 0, sizeof zeroed);
  expect_created(s, "zeroed options", &zeroed, SHARDLIN_INVALID_ARGUMENT,
                 "options->magic is 0x00000000, not SHARDLIN_OPTIONS_MAGIC");
  expect_created(s, "no options", NULL, SHARDLIN_OK, NULL);
}

static int run_threads(void) {
  const shardlin_options o = suite_options();
  rank_state options_state;
  long checks = 0, failures = 0;
  int w;
  memset(&options_state, 0, sizeof options_state);
  options_state.mode = "options";
  options_state.w = 1;
  test_options(&options_state);
  checks += options_state.checks;
  failures += options_state.failures;
  for (w = 1; w <= MAX_W; ++w) {
    shardlin_context *ctx[MAX_W];
    rank_state states[MAX_W];
    pthread_t threads[MAX_W];
    int r;
    shardlin_status st = shardlin_context_create("threads", w, &o, ctx);
    if (st != SHARDLIN_OK) {
      fprintf(stderr, "FAIL: shardlin_context_create(threads, %d): %s: %s\n", w,
              shardlin_status_name(st), shardlin_last_error_message());
      return 1;
    }
    for (r = 0; r < w; ++r) {
      memset(&states[r], 0, sizeof states[r]);
      states[r].ctx = ctx[r];
      states[r].mode = "threads";
      pthread_create(&threads[r], NULL, rank_thread, &states[r]);
    }
    for (r = 0; r < w; ++r) {
      pthread_join(threads[r], NULL);
      checks += states[r].checks;
      failures += states[r].failures;
      shardlin_context_destroy(ctx[r]);
    }
  }
  printf("capi suite (threads, W = 1..%d): %ld checks, %ld failed\n", MAX_W,
         checks, failures);
  return failures == 0 ? 0 : 1;
}

static int run_mpi(void) {
  const shardlin_options o = suite_options();
  shardlin_context *ctx = NULL, *tally = NULL;
  rank_state s;
  double mine[1], all[64];
  shardlin_view_storage ms, as;
  shardlin_memref mref, aref;
  int64_t placements[64], one = 1, w64;
  long failures = 0;
  int i;
  shardlin_status st = shardlin_context_create("mpi", 0, &o, &ctx);
  if (st != SHARDLIN_OK) {
    fprintf(stderr, "FAIL: shardlin_context_create(mpi): %s: %s\n",
            shardlin_status_name(st), shardlin_last_error_message());
    return 1;
  }
  memset(&s, 0, sizeof s);
  s.ctx = ctx;
  s.mode = "mpi";
  run_rank(&s);

  /* Failures summed over ranks, through the ABI on a second context. */
  st = shardlin_mpi_context_create(&o, &tally);
  if (st != SHARDLIN_OK || s.w > 64) {
    fprintf(stderr, "FAIL: the tally context: %s\n",
            shardlin_last_error_message());
    return 1;
  }
  w64 = s.w;
  for (i = 0; i < s.w; ++i)
    placements[i] = i;
  mine[0] = (double)s.failures;
  shardlin_view_init(&mref, &ms, mine, 1, &one);
  shardlin_view_init(&aref, &as, all, 1, &w64);
  st = shardlin_all_gather(tally, SHARDLIN_F64, &mref, &aref, 0, placements);
  if (st != SHARDLIN_OK) {
    fprintf(stderr, "FAIL: the tally: %s\n", shardlin_context_message(tally));
    return 1;
  }
  for (i = 0; i < s.w; ++i)
    failures += (long)all[i];
  if (s.rank == 0)
    printf("capi suite (mpi, W = %d): %ld checks on rank 0, %ld failed on "
           "all ranks\n",
           s.w, s.checks, failures);
  shardlin_context_destroy(tally);
  shardlin_context_destroy(ctx);
  return failures == 0 ? 0 : 1;
}

/* Under mpirun with 2 or more processes: the launch rules of creating
 * contexts, whichever function creates them. A threads group is refused
 * (each process would run every rank), by shardlin_threads_group_create
 * exactly as by shardlin_context_create("threads"): the registry's one
 * rule, the same message but for the function's name; and an mpi context
 * must have the job's size. */
static int run_launch(void) {
  const shardlin_options o = suite_options();
  shardlin_context *ctx = NULL, *threads[2] = {NULL, NULL}, *wrong = NULL;
  rank_state s;
  char by_name[512];
  const char *const rule = "runs all ranks as threads of one process";
  shardlin_status st = shardlin_mpi_context_create(&o, &ctx);
  if (st != SHARDLIN_OK) {
    fprintf(stderr, "FAIL: shardlin_mpi_context_create: %s: %s\n",
            shardlin_status_name(st), shardlin_last_error_message());
    return 1;
  }
  memset(&s, 0, sizeof s);
  s.mode = "launch";
  s.rank = shardlin_context_rank(ctx);
  s.w = shardlin_context_world_size(ctx);
  ++s.checks;
  if (s.w < 2)
    fail(&s, "launch", "run it under mpirun with 2 or more processes");

  st = shardlin_context_create("threads", 2, &o, threads);
  snprintf(by_name, sizeof by_name, "%s", shardlin_last_error_message());
  ++s.checks;
  if (st != SHARDLIN_INVALID_ARGUMENT || threads[0] != NULL ||
      strncmp(by_name, "shardlin_context_create: ", 25) != 0 ||
      !strstr(by_name, rule))
    fail(&s, "shardlin_context_create(threads) under mpirun", by_name);
  st = shardlin_threads_group_create(2, &o, threads);
  ++s.checks;
  if (st != SHARDLIN_INVALID_ARGUMENT || threads[0] != NULL ||
      strncmp(shardlin_last_error_message(),
              "shardlin_threads_group_create: ", 31) != 0 ||
      strcmp(shardlin_last_error_message() + 31, by_name + 25) != 0)
    fail(&s, "shardlin_threads_group_create under mpirun (expected the "
             "message of shardlin_context_create(threads))",
         shardlin_last_error_message());

  st = shardlin_context_create("mpi", s.w + 1, &o, &wrong);
  ++s.checks;
  if (st != SHARDLIN_INVALID_ARGUMENT || wrong != NULL ||
      !strstr(shardlin_last_error_message(), "does not match the MPI job's"))
    fail(&s, "mpi context with a wrong world size",
         shardlin_last_error_message());
  shardlin_context_destroy(ctx);
  printf("capi launch rules (mpi, W = %d, rank %d): %ld checks, %ld failed\n",
         s.w, s.rank, s.checks, s.failures);
  return s.failures == 0 ? 0 : 1;
}

int main(int argc, char **argv) {
  if (argc == 2 && strcmp(argv[1], "threads") == 0)
    return run_threads();
  if (argc == 2 && strcmp(argv[1], "mpi") == 0)
    return run_mpi();
  if (argc == 2 && strcmp(argv[1], "launch") == 0)
    return run_launch();
  fprintf(stderr, "usage: %s threads | mpi | launch (under mpirun)\n",
          argv[0]);
  return 2;
}
