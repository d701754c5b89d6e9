/*===- ranks.h - What the C examples share: inputs, one run per rank ------===*/
/*
 * Header-only, C99, included by examples/c-api/linear.c and
 * examples/aot/main.c (and by the test of dynamic batch dims compiled ahead
 * of time, integration_test/Aot): their deterministic inputs, and running
 * one function per rank on the runtime's contexts:
 *
 *   `threads`  W ranks as threads of this process, one context each;
 *   `mpi`      this process's rank under mpirun (the job's size).
 */
#ifndef SHARDLIN_EXAMPLES_COMMON_RANKS_H
#define SHARDLIN_EXAMPLES_COMMON_RANKS_H

#include "shardlin-c/Runtime.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

enum { EXAMPLE_MAX_RANKS = 64 };

/* Deterministic inputs in [-1, 1]: element (i, j) of tensor `tensor` of
 * rank r (0 for what every rank has the same of). */
static float example_input(int tensor, int r, int i, int j) {
  unsigned h = (unsigned)(tensor * 7919 + r * 104729 + i * 131 + j * 17);
  h ^= h >> 13;
  h *= 0x5bd1e995u;
  h ^= h >> 15;
  return (float)((double)(h % 2001u) / 1000.0 - 1.0);
}

/* One rank's work on its context: 0 if it passed. */
typedef int (*example_rank_fn)(shardlin_context *ctx);

typedef struct example_rank {
  shardlin_context *ctx;
  example_rank_fn fn;
  int failed;
} example_rank;

static void *example_rank_thread(void *arg) {
  example_rank *rank = (example_rank *)arg;
  rank->failed = rank->fn(rank->ctx) != 0;
  return NULL;
}

/* Creates the contexts of `backend` ("threads": w ranks; "mpi": this
 * process's rank, w unused) with `options` (NULL: the defaults), runs `fn`
 * on each rank of this process (the threads' at once) and destroys them.
 * need_w > 0: the number of ranks the program was built for, which the job
 * must have. Returns the exit status: 0 if every rank passed, else 1. */
static int example_run_ranks(const char *backend, int w, int need_w,
                             const shardlin_options *options,
                             example_rank_fn fn) {
  shardlin_context *contexts[EXAMPLE_MAX_RANKS] = {NULL};
  example_rank ranks[EXAMPLE_MAX_RANKS];
  pthread_t threads[EXAMPLE_MAX_RANKS];
  const int mpi = strcmp(backend, "mpi") == 0;
  const int here = mpi ? 1 : w; /* the ranks of this process */
  int r, failed = 0;
  shardlin_status st;
  if (here < 1 || here > EXAMPLE_MAX_RANKS) {
    fprintf(stderr, "%d ranks: 1 to %d on threads\n", w, EXAMPLE_MAX_RANKS);
    return 1;
  }
  st = shardlin_context_create(backend, mpi ? 0 : w, options, contexts);
  if (st != SHARDLIN_OK) {
    fprintf(stderr, "%s: %s\n", shardlin_status_name(st),
            shardlin_last_error_message());
    return 1;
  }
  if (need_w > 0 && shardlin_context_world_size(contexts[0]) != need_w) {
    fprintf(stderr, "the program runs on %d ranks, not %d (mpirun -np %d)\n",
            need_w, shardlin_context_world_size(contexts[0]), need_w);
    for (r = 0; r < here; ++r)
      shardlin_context_destroy(contexts[r]);
    return 1;
  }
  for (r = 0; r < here; ++r) {
    ranks[r].ctx = contexts[r];
    ranks[r].fn = fn;
    ranks[r].failed = 1;
  }
  if (here == 1) {
    example_rank_thread(&ranks[0]);
  } else {
    for (r = 0; r < here; ++r)
      if (pthread_create(&threads[r], NULL, example_rank_thread, &ranks[r]) !=
          0) {
        fprintf(stderr, "pthread_create failed\n");
        return 1; /* the threads started wait in a collective: exit */
      }
    for (r = 0; r < here; ++r)
      pthread_join(threads[r], NULL);
  }
  for (r = 0; r < here; ++r) {
    failed |= ranks[r].failed;
    shardlin_context_destroy(contexts[r]);
  }
  return failed ? 1 : 0;
}

#endif /* SHARDLIN_EXAMPLES_COMMON_RANKS_H */
