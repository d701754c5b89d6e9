//===- CApiTest.cpp - The C ABI's errors, statuses and contexts -----------===//
//
// What shardlin-c/Runtime.h promises when the caller gets something wrong:
// the status code and a message that names the argument with what was
// expected and what was given; nothing written; the sticky rule; and, on the
// threads backend, that a rank whose call is rejected makes the other ranks
// fail at once rather than wait for the timeout (CApiCollectivesTest.cpp).
// The numbers of every op are checked by CApiSuite.c.
//
//===----------------------------------------------------------------------===//

#include "CApiTestSupport.h"
#include "shardlin-c/Runtime.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace {

using namespace shardlin::capi_test;

TEST(CApi, StatusNames) {
  EXPECT_STREQ(shardlin_status_name(SHARDLIN_OK), "ok");
  EXPECT_STREQ(shardlin_status_name(SHARDLIN_INVALID_ARGUMENT),
               "invalid argument");
  EXPECT_STREQ(shardlin_status_name(SHARDLIN_DEADLINE_EXCEEDED),
               "deadline exceeded");
  EXPECT_STREQ(shardlin_status_name(SHARDLIN_ABORTED), "aborted");
  EXPECT_STREQ(shardlin_status_name(SHARDLIN_IO_ERROR), "I/O error");
  EXPECT_STREQ(shardlin_status_name(SHARDLIN_UNAVAILABLE), "unavailable");
  EXPECT_STREQ(shardlin_status_name(SHARDLIN_NOT_FOUND), "not found");
  EXPECT_STREQ(shardlin_status_name(SHARDLIN_RESOURCE_EXHAUSTED),
               "resource exhausted");
  EXPECT_STREQ(shardlin_status_name(SHARDLIN_INTERNAL), "internal");
  EXPECT_STREQ(shardlin_status_name(static_cast<shardlin_status>(42)),
               "unknown");
}

TEST(CApi, DefaultOptions) {
  const shardlin_options o = shardlin_default_options();
  EXPECT_EQ(o.size, sizeof(shardlin_options));
  EXPECT_EQ(o.magic, SHARDLIN_OPTIONS_MAGIC);
  EXPECT_EQ(o.version, SHARDLIN_OPTIONS_VERSION);
  EXPECT_EQ(o.timeout_seconds, 300.0);
  EXPECT_EQ(o.blas_threads, 0);
  const shardlin_options init = SHARDLIN_OPTIONS_INIT;
  EXPECT_EQ(std::memcmp(&init, &o, sizeof o), 0);
}

/// Creates a one-rank threads group with `o`: its status; the context, if
/// any, is destroyed.
shardlin_status createWith(const shardlin_options *o) {
  shardlin_context *ctx = nullptr;
  const shardlin_status st = shardlin_threads_group_create(1, o, &ctx);
  shardlin_context_destroy(ctx);
  return st;
}

/// The options struct grows as NCCL's ncclConfig_t does: the runtime reads
/// the caller's fields up to the caller's size and refuses a struct that was
/// never initialized or claims a layout it does not know.
TEST(CApi, VersionedOptions) {
  // An older caller's struct ends before blas_threads: what lies beyond its
  // size (here an invalid -1) is not read, and the default is taken.
  shardlin_options o = SHARDLIN_OPTIONS_INIT;
  o.blas_threads = -1;
  o.size = offsetof(shardlin_options, blas_threads);
  EXPECT_EQ(createWith(&o), SHARDLIN_OK) << shardlin_last_error_message();
  o.size = sizeof(shardlin_options);
  EXPECT_EQ(createWith(&o), SHARDLIN_INVALID_ARGUMENT);
  EXPECT_TRUE(
      contains(shardlin_last_error_message(), "options->blas_threads is -1"));
  // The header alone: every field takes its default.
  o.size = offsetof(shardlin_options, version) + sizeof(uint32_t);
  EXPECT_EQ(createWith(&o), SHARDLIN_OK) << shardlin_last_error_message();

  o = shardlin_default_options();
  o.magic = 0;
  EXPECT_EQ(createWith(&o), SHARDLIN_INVALID_ARGUMENT);
  EXPECT_STREQ(shardlin_last_error_message(),
               "shardlin_threads_group_create: options->magic is 0x00000000, "
               "not SHARDLIN_OPTIONS_MAGIC (0x53484c4f): initialize the "
               "options with SHARDLIN_OPTIONS_INIT or "
               "shardlin_default_options()");
  // A struct of the layout before versioning ({timeout, blas_threads}):
  // its bytes are no header, and the magic says so.
  struct Unversioned {
    double timeout_seconds;
    int blas_threads;
  } old = {60.0, 1};
  EXPECT_EQ(createWith(reinterpret_cast<const shardlin_options *>(&old)),
            SHARDLIN_INVALID_ARGUMENT);
  EXPECT_TRUE(
      contains(shardlin_last_error_message(), "not SHARDLIN_OPTIONS_MAGIC"));

  o = shardlin_default_options();
  o.version = SHARDLIN_OPTIONS_VERSION + 1;
  EXPECT_EQ(createWith(&o), SHARDLIN_INVALID_ARGUMENT);
  EXPECT_STREQ(shardlin_last_error_message(),
               ("shardlin_threads_group_create: options->version is " +
                std::to_string(SHARDLIN_OPTIONS_VERSION + 1) +
                "; this runtime reads versions 1 to " +
                std::to_string(SHARDLIN_OPTIONS_VERSION) +
                " (the caller was compiled with a newer shardlin-c/Runtime.h "
                "than this runtime's)")
                   .c_str());
  o.version = 0;
  EXPECT_EQ(createWith(&o), SHARDLIN_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(shardlin_last_error_message(),
                       "options->version is 0; this runtime reads versions "
                       "1 to"));

  o = shardlin_default_options();
  const std::string sizes =
      "; it must be in [16, " + std::to_string(sizeof(shardlin_options)) +
      "] (from the size, magic and version fields to this runtime's whole "
      "shardlin_options)";
  o.size = 8;
  EXPECT_EQ(createWith(&o), SHARDLIN_INVALID_ARGUMENT);
  EXPECT_STREQ(
      shardlin_last_error_message(),
      ("shardlin_threads_group_create: options->size is 8" + sizes).c_str());
  o.size = sizeof(shardlin_options) + 8;
  EXPECT_EQ(createWith(&o), SHARDLIN_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(shardlin_last_error_message(),
                       "options->size is " +
                           std::to_string(sizeof(shardlin_options) + 8)));

  // NULL: the defaults.
  EXPECT_EQ(createWith(nullptr), SHARDLIN_OK);
}

/// A field within an older caller's size is read: its timeout holds.
TEST(CApi, OlderOptionsStructKeepsItsTimeout) {
  shardlin_options o = SHARDLIN_OPTIONS_INIT;
  o.timeout_seconds = 0.2;
  o.size = offsetof(shardlin_options, blas_threads);
  shardlin_context *ctx[2] = {nullptr, nullptr};
  ASSERT_EQ(shardlin_threads_group_create(2, &o, ctx), SHARDLIN_OK)
      << shardlin_last_error_message();
  // Rank 1 never calls: rank 0's all_gather gives up after 0.2 s, not 300.
  const int64_t placements[2] = {0, 1};
  Tensor in({1, 2}), out({2, 2});
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(shardlin_all_gather(ctx[0], SHARDLIN_F32, &in.ref, &out.ref, 0,
                                placements),
            SHARDLIN_DEADLINE_EXCEEDED);
  EXPECT_LT(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count(),
      30.0);
  shardlin_context_destroy(ctx[0]);
  shardlin_context_destroy(ctx[1]);
}

/// The threads backend's launch rule holds for every way of creating its
/// contexts: a process that a launcher started with others is refused, with
/// the registry's one message (the mpirun test of the C suite checks the
/// same under a real launcher).
TEST(CApi, ThreadsRefusedUnderALauncher) {
  ASSERT_EQ(std::getenv("OMPI_COMM_WORLD_SIZE"), nullptr);
  ASSERT_EQ(setenv("OMPI_COMM_WORLD_SIZE", "2", 1), 0);
  shardlin_context *ctx[2] = {nullptr, nullptr};
  const shardlin_status byName =
      shardlin_context_create("threads", 2, nullptr, ctx);
  const std::string byNameMessage = shardlin_last_error_message();
  const shardlin_status group = shardlin_threads_group_create(2, nullptr, ctx);
  const std::string groupMessage = shardlin_last_error_message();
  unsetenv("OMPI_COMM_WORLD_SIZE");
  EXPECT_EQ(byName, SHARDLIN_INVALID_ARGUMENT);
  EXPECT_EQ(group, SHARDLIN_INVALID_ARGUMENT);
  const std::string rule =
      ": the threads backend runs all ranks as threads of one process, but "
      "the launcher started 2 processes; under mpirun use a backend with one "
      "process per rank (mpi, or nccl for GPUs)";
  EXPECT_EQ(byNameMessage, "shardlin_context_create" + rule);
  EXPECT_EQ(groupMessage, "shardlin_threads_group_create" + rule);
  EXPECT_EQ(ctx[0], nullptr);
}

TEST(CApi, UnknownAndUnavailableBackends) {
  // A failure leaves no context behind: contexts[0] is NULL after it.
  int notAContext = 0;
  shardlin_context *ctx[2] = {
      reinterpret_cast<shardlin_context *>(&notAContext), nullptr};
  EXPECT_EQ(shardlin_context_create("nope", 2, nullptr, ctx),
            SHARDLIN_INVALID_ARGUMENT);
  EXPECT_EQ(ctx[0], nullptr);
  EXPECT_TRUE(contains(shardlin_last_error_message(),
                       "shardlin_context_create: unknown backend 'nope' (the "
                       "C ABI has threads and mpi"));
  EXPECT_EQ(shardlin_context_create("nccl", 1, nullptr, ctx),
            SHARDLIN_UNAVAILABLE);
  EXPECT_TRUE(contains(shardlin_last_error_message(),
                       "the nccl backend is not available through the C ABI"));
  EXPECT_EQ(shardlin_context_create("cuda-local", 1, nullptr, ctx),
            SHARDLIN_UNAVAILABLE);
  EXPECT_EQ(shardlin_context_create(nullptr, 1, nullptr, ctx),
            SHARDLIN_INVALID_ARGUMENT);
  EXPECT_STREQ(shardlin_last_error_message(),
               "shardlin_context_create: backend is null");
  EXPECT_EQ(ctx[0], nullptr);
}

TEST(CApi, ThreadsWorldSizeAndOptions) {
  shardlin_context *ctx[2] = {nullptr, nullptr};
  EXPECT_EQ(shardlin_context_create("threads", 0, nullptr, ctx),
            SHARDLIN_INVALID_ARGUMENT);
  EXPECT_STREQ(shardlin_last_error_message(),
               "shardlin_context_create: the world size must be in [1, 4096], "
               "got 0");
  EXPECT_EQ(shardlin_threads_group_create(5000, nullptr, ctx),
            SHARDLIN_INVALID_ARGUMENT);
  EXPECT_EQ(shardlin_threads_group_create(2, nullptr, nullptr),
            SHARDLIN_INVALID_ARGUMENT);
  EXPECT_STREQ(shardlin_last_error_message(),
               "shardlin_threads_group_create: contexts is null");

  shardlin_options o = shardlin_default_options();
  o.timeout_seconds = std::nan("");
  EXPECT_EQ(shardlin_threads_group_create(2, &o, ctx),
            SHARDLIN_INVALID_ARGUMENT);
  EXPECT_STREQ(shardlin_last_error_message(),
               "shardlin_threads_group_create: options->timeout_seconds is "
               "NaN");
  EXPECT_EQ(ctx[0], nullptr);
  EXPECT_EQ(ctx[1], nullptr);
  o = shardlin_default_options();
  o.blas_threads = -1;
  EXPECT_EQ(shardlin_threads_group_create(2, &o, ctx),
            SHARDLIN_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(shardlin_last_error_message(),
                       "options->blas_threads is -1; it must be >= 0"));

  // NULL options are the defaults.
  ASSERT_EQ(shardlin_context_create("threads", 2, nullptr, ctx), SHARDLIN_OK);
  EXPECT_EQ(shardlin_context_rank(ctx[1]), 1);
  EXPECT_EQ(shardlin_context_world_size(ctx[1]), 2);
  EXPECT_EQ(shardlin_context_status(ctx[1]), SHARDLIN_OK);
  EXPECT_STREQ(shardlin_context_message(ctx[1]), "");
  EXPECT_EQ(shardlin_context_bytes_sent(ctx[1]), 0u);
  EXPECT_EQ(shardlin_context_collective_calls(ctx[1]), 0u);
  // Destroyed in either order.
  shardlin_context_destroy(ctx[0]);
  shardlin_context_destroy(ctx[1]);
  shardlin_context_destroy(nullptr);
}

TEST(CApi, NullContext) {
  Tensor a({2, 2}), b({2, 2}), c({2, 2});
  EXPECT_EQ(shardlin_gemm(nullptr, SHARDLIN_F32, &a.ref, &b.ref, nullptr,
                          SHARDLIN_F32, &c.ref, 0, 0),
            SHARDLIN_INVALID_ARGUMENT);
  EXPECT_STREQ(shardlin_last_error_message(), "shardlin_gemm: context is null");
  EXPECT_EQ(shardlin_context_status(nullptr), SHARDLIN_INVALID_ARGUMENT);
  EXPECT_EQ(shardlin_context_rank(nullptr), -1);
  EXPECT_EQ(shardlin_context_world_size(nullptr), -1);
  EXPECT_EQ(c.data[0], 1.5f);
}

/// A context that failed returns its first status from every later call,
/// without doing anything, and its collectives make the other ranks fail at
/// once.
TEST(CApi, StickyStatus) {
  Group g(2);
  const int64_t placements[2] = {1, 0};
  shardlin_status first = SHARDLIN_OK, later = SHARDLIN_OK, gathered[2];
  std::string firstMessage, msg[2];
  Tensor a({2, 3}), b({4, 2}), c({2, 2}, -7.0f);
  Tensor goodB({3, 2}), goodC({2, 2}, -7.0f);
  Tensor in0({2, 2}), in1({3, 2}), out0({5, 2}), out1({5, 2});
  g.run([&](int r) {
    if (r == 0) {
      // 2 x 3 times 4 x 2: the contraction dims differ.
      first = shardlin_gemm(g.ctx[0], SHARDLIN_F32, &a.ref, &b.ref, nullptr,
                            SHARDLIN_F32, &c.ref, 0, 0);
      firstMessage = message(g.ctx[0]);
      // A valid call: refused with the first status, nothing written.
      later = shardlin_gemm(g.ctx[0], SHARDLIN_F32, &a.ref, &goodB.ref, nullptr,
                            SHARDLIN_F32, &goodC.ref, 0, 0);
    }
    // placements {1, 0}: rank 0 holds chunk 1 (2 rows), rank 1 chunk 0 (3).
    gathered[r] = shardlin_all_gather(
        g.ctx[r], SHARDLIN_F32, r == 0 ? &in0.ref : &in1.ref,
        r == 0 ? &out0.ref : &out1.ref, 0, placements);
    msg[r] = message(g.ctx[r]);
  });
  EXPECT_EQ(first, SHARDLIN_INVALID_ARGUMENT);
  EXPECT_EQ(firstMessage,
            "shardlin_gemm (rank 0 of 2): the contraction dims differ: "
            "op(lhs) is 2 x 3 (lhs [2, 3]) but op(rhs) is 4 x 2 (rhs [4, 2])");
  EXPECT_EQ(later, SHARDLIN_INVALID_ARGUMENT);
  EXPECT_EQ(gathered[0], SHARDLIN_INVALID_ARGUMENT);
  EXPECT_EQ(msg[0], firstMessage);
  EXPECT_EQ(shardlin_context_message(g.ctx[0]), firstMessage);
  for (float v : goodC.data)
    EXPECT_EQ(v, -7.0f);
  for (float v : out0.data)
    EXPECT_EQ(v, 1.5f);
  EXPECT_EQ(gathered[1], SHARDLIN_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(msg[1], "invalid arguments on rank 0: rank 0's "
                               "context failed earlier: shardlin_gemm (rank "
                               "0 of 2): the contraction dims differ"));
}

class CApiOneRank : public ::testing::Test {
protected:
  Group g{1};
  shardlin_context *ctx() { return g.ctx[0]; }

  /// Expects `st` to be INVALID_ARGUMENT with `text` in the message, and
  /// starts a fresh context for the next case (the failure sticks).
  void expectInvalid(shardlin_status st, const std::string &text) {
    EXPECT_EQ(st, SHARDLIN_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(message(ctx()), text));
    EXPECT_EQ(shardlin_last_error_message(), message(ctx()));
    shardlin_context_destroy(g.ctx[0]);
    g.ctx[0] = nullptr;
    ASSERT_EQ(shardlin_threads_group_create(1, nullptr, g.ctx.data()),
              SHARDLIN_OK);
  }
};

TEST_F(CApiOneRank, Views) {
  Tensor a({2, 3}), b({3, 4}), c({2, 4}, -7.0f);
  auto gemm = [&](const shardlin_memref *lhs, const shardlin_memref *rhs,
                  const shardlin_memref *out) {
    return shardlin_gemm(ctx(), SHARDLIN_F32, lhs, rhs, nullptr, SHARDLIN_F32,
                         out, 0, 0);
  };
  expectInvalid(gemm(nullptr, &b.ref, &c.ref),
                "shardlin_gemm (rank 0 of 1): lhs is null (a shardlin_memref "
                "is required)");

  Tensor a3({2, 3, 1});
  expectInvalid(gemm(&a3.ref, &b.ref, &c.ref), "lhs has rank 3, expected 2");

  shardlin_memref noDescriptor = {2, nullptr};
  expectInvalid(gemm(&a.ref, &noDescriptor, &c.ref),
                "rhs has a null descriptor");

  Tensor nullData({2, 3});
  nullData.storage.aligned = nullptr;
  expectInvalid(gemm(&nullData.ref, &b.ref, &c.ref),
                "lhs has a null data pointer (aligned) but 6 elements");

  Tensor negative({2, 3});
  negative.storage.sizes_and_strides[1] = -3;
  expectInvalid(gemm(&negative.ref, &b.ref, &c.ref),
                "lhs has a negative size (-3) in dim 1");

  Tensor backwards({2, 3});
  backwards.strides()[1] = -1;
  expectInvalid(gemm(&backwards.ref, &b.ref, &c.ref),
                "lhs has a negative stride (-1) in dim 1; negative strides "
                "are not supported");

  Tensor offset({2, 3});
  offset.storage.offset = -1;
  expectInvalid(gemm(&offset.ref, &b.ref, &c.ref),
                "lhs has a negative offset (-1)");

  Tensor huge({2, 3});
  huge.strides()[0] = std::numeric_limits<int64_t>::max();
  expectInvalid(gemm(&huge.ref, &b.ref, &c.ref), "overflows int64");

  shardlin_memref badRank = {-1, &a.storage};
  expectInvalid(gemm(&badRank, &b.ref, &c.ref),
                "lhs has rank -1, out of range [0, 64]");

  // An output with two indices at one address, and outputs that share
  // memory with an input.
  Tensor broadcast({2, 4});
  broadcast.strides()[0] = 0;
  expectInvalid(gemm(&a.ref, &b.ref, &broadcast.ref),
                "out [2, 4] gives more than one element one address (dim 0 "
                "has stride 0): an output needs one address per element");
  Tensor shared({6, 4});
  shardlin_memref lhsInShared = shared.ref;
  shardlin_view_storage s = shared.storage;
  s.sizes_and_strides[0] = 2;
  s.sizes_and_strides[1] = 3;
  s.sizes_and_strides[2] = 3;
  s.sizes_and_strides[3] = 1;
  lhsInShared.descriptor = &s;
  shardlin_view_storage o = shared.storage;
  o.offset = 4; // rows 1.. of the same buffer, overlapping lhs
  o.sizes_and_strides[0] = 2;
  shardlin_memref outInShared = {2, &o};
  expectInvalid(gemm(&lhsInShared, &b.ref, &outInShared),
                "out overlaps lhs in memory: an output must not share memory "
                "with an input");
  for (float v : c.data)
    EXPECT_EQ(v, -7.0f);
}

TEST_F(CApiOneRank, Gemm) {
  Tensor a({2, 3}), b({3, 4}), c({2, 4}), bias({4}), c23({2, 3});
  expectInvalid(shardlin_gemm(ctx(), static_cast<shardlin_dtype>(7), &a.ref,
                              &b.ref, nullptr, SHARDLIN_F32, &c.ref, 0, 0),
                "dtype 7 is not a shardlin_dtype (SHARDLIN_F16 = 0");
  expectInvalid(shardlin_gemm(ctx(), SHARDLIN_F32, &a.ref, &b.ref, nullptr,
                              SHARDLIN_F32, &c23.ref, 0, 0),
                "out is [2, 3], expected [2, 4] (op(lhs) rows x op(rhs) "
                "columns)");
  expectInvalid(shardlin_gemm(ctx(), SHARDLIN_F32, &a.ref, &b.ref, &c.ref,
                              SHARDLIN_F32, &c.ref, 0, 0),
                "bias has rank 2, expected 1");
  Tensor bias3({3});
  expectInvalid(shardlin_gemm(ctx(), SHARDLIN_F32, &a.ref, &b.ref, &bias3.ref,
                              SHARDLIN_F32, &c.ref, 0, 0),
                "bias has 3 elements, expected 4 (out's columns)");
  expectInvalid(shardlin_gemm(ctx(), SHARDLIN_F32, &a.ref, &b.ref, nullptr,
                              SHARDLIN_F16, &c.ref, 0, 0),
                "out_dtype is f16 with f32 operands: it is dtype, or f32 for "
                "f16 and bf16 operands without a bias");
  // The rules of validateGemmOp (GemmValidation.h).
  std::vector<double> a64(6, 1.0), b64(12, 1.0);
  shardlin_view_storage sa, sb;
  shardlin_memref ra, rb;
  const int64_t sizesA[2] = {2, 3}, sizesB[2] = {3, 4};
  ASSERT_EQ(shardlin_view_init(&ra, &sa, a64.data(), 2, sizesA), SHARDLIN_OK);
  ASSERT_EQ(shardlin_view_init(&rb, &sb, b64.data(), 2, sizesB), SHARDLIN_OK);
  expectInvalid(shardlin_gemm(ctx(), SHARDLIN_F64, &ra, &rb, nullptr,
                              SHARDLIN_F32, &c.ref, 0, 0),
                "an f32 result needs f16 or bf16 operands, not f64");
  std::vector<uint16_t> a16(6, 0x3C00), b16(12, 0x3C00), bias16(4, 0);
  shardlin_view_storage sbias;
  shardlin_memref rbias;
  const int64_t four = 4;
  ASSERT_EQ(shardlin_view_init(&ra, &sa, a16.data(), 2, sizesA), SHARDLIN_OK);
  ASSERT_EQ(shardlin_view_init(&rb, &sb, b16.data(), 2, sizesB), SHARDLIN_OK);
  ASSERT_EQ(shardlin_view_init(&rbias, &sbias, bias16.data(), 1, &four),
            SHARDLIN_OK);
  expectInvalid(shardlin_gemm(ctx(), SHARDLIN_F16, &ra, &rb, &rbias,
                              SHARDLIN_F32, &c.ref, 0, 0),
                "a bias with an f32 result is not supported");
  // And a valid one: 1 * 1 summed over k = 3, as f32 from f16.
  ASSERT_EQ(shardlin_gemm(ctx(), SHARDLIN_F16, &ra, &rb, nullptr, SHARDLIN_F32,
                          &c.ref, 0, 0),
            SHARDLIN_OK)
      << message(ctx());
  for (float v : c.data)
    EXPECT_EQ(v, 3.0f);
}

TEST_F(CApiOneRank, CollectiveArguments) {
  const int64_t one[1] = {0}, outOfRange[1] = {1};
  Tensor in({4, 2}), out({4, 2}), wrongRank({4, 2, 1});
  expectInvalid(
      shardlin_all_gather(ctx(), SHARDLIN_F32, &in.ref, &out.ref, 2, one),
      "along_dim 2 is out of range for in of rank 2");
  expectInvalid(
      shardlin_all_gather(ctx(), SHARDLIN_F32, &in.ref, &out.ref, 0, nullptr),
      "along_placements is null (expected the 1 ranks' "
      "placements)");
  expectInvalid(shardlin_all_gather(ctx(), SHARDLIN_F32, &in.ref, &out.ref, 0,
                                    outOfRange),
                "along_placements: placement 1 at position 0 is out of range "
                "[0, 0]");
  expectInvalid(shardlin_reduce_scatter(ctx(), SHARDLIN_F32, &in.ref,
                                        &wrongRank.ref, 0, one),
                "in [4, 2] has rank 2 but out [4, 2, 1] has rank 3");
  expectInvalid(shardlin_all_to_all(ctx(), SHARDLIN_F32, &in.ref, &out.ref, 0,
                                    one, 0, one),
                "split_dim and concat_dim are both 0");
  Tensor wide({4, 3});
  expectInvalid(shardlin_all_to_all(ctx(), SHARDLIN_F32, &in.ref, &wide.ref, 0,
                                    one, 1, one),
                "in [4, 2] has 2 along concat_dim 1 but rank 0's chunk of 3 "
                "(chunk 0 of 1, split 3) has 3 (out is [4, 3])");
  expectInvalid(
      shardlin_all_gather(ctx(), SHARDLIN_F32, &in.ref, &in.ref, 0, one),
      "out overlaps in in memory");
  // A valid W = 1 all_gather is a copy; it counts a call and no bytes.
  for (size_t i = 0; i < in.data.size(); ++i)
    in.data[i] = static_cast<float>(i) + 0.25f;
  ASSERT_EQ(shardlin_all_gather(ctx(), SHARDLIN_F32, &in.ref, &out.ref, 0, one),
            SHARDLIN_OK);
  EXPECT_EQ(out.data, in.data);
  EXPECT_EQ(shardlin_context_collective_calls(ctx()), 1u);
  EXPECT_EQ(shardlin_context_bytes_sent(ctx()), 0u);
}

TEST_F(CApiOneRank, BiasAddAndConvert) {
  Tensor x({2, 3}), bias({3}), y({2, 3}), bias4({4});
  expectInvalid(
      shardlin_bias_add(ctx(), SHARDLIN_F32, &x.ref, &bias4.ref, &y.ref),
      "bias has 4 elements, expected 3 (the last dim of in [2, 3])");
  // In place is the same view twice; another overlap is refused.
  shardlin_view_storage shifted = x.storage;
  shifted.offset = 1;
  shifted.sizes_and_strides[0] = 1;
  shardlin_memref partial = {2, &shifted};
  shardlin_view_storage one = x.storage;
  one.sizes_and_strides[0] = 1;
  shardlin_memref firstRow = {2, &one};
  expectInvalid(
      shardlin_bias_add(ctx(), SHARDLIN_F32, &firstRow, &bias.ref, &partial),
      "out overlaps in in memory: an output must not share memory "
      "with an input (in place, pass the same view for both)");
  ASSERT_EQ(shardlin_bias_add(ctx(), SHARDLIN_F32, &x.ref, &bias.ref, &x.ref),
            SHARDLIN_OK);
  for (float v : x.data)
    EXPECT_EQ(v, 3.0f);

  expectInvalid(
      shardlin_convert(ctx(), &x.ref, SHARDLIN_F64, &y.ref, SHARDLIN_F16),
      "converts f64 to f16; convert is f32 to f16 or bf16, or back");
  expectInvalid(shardlin_convert(ctx(), &x.ref, SHARDLIN_F32, &y.ref,
                                 static_cast<shardlin_dtype>(-1)),
                "to -1 is not a shardlin_dtype");
}

/// A view too large to pack: the scratch allocation fails with INTERNAL,
/// nothing is touched.
TEST_F(CApiOneRank, PackingThatCannotBeAllocated) {
  float cells[3] = {1.0f, 2.0f, 3.0f};
  shardlin_view_storage in = {}, out = {};
  in.allocated = in.aligned = &cells[0];
  in.sizes_and_strides[0] = int64_t(1) << 44;
  in.sizes_and_strides[1] = 0; // every element at one address: readable
  out = in;
  // out claims 2^44 elements from &cells[2] (after in's one address): the
  // call must fail before it writes any.
  out.allocated = out.aligned = &cells[2];
  out.sizes_and_strides[1] = 1;
  shardlin_memref inRef = {1, &in}, outRef = {1, &out};
  EXPECT_EQ(
      shardlin_convert(ctx(), &inRef, SHARDLIN_F32, &outRef, SHARDLIN_F16),
      SHARDLIN_RESOURCE_EXHAUSTED);
  EXPECT_TRUE(contains(message(ctx()), "host allocation of"));
}

TEST(CApi, ViewInit) {
  float data[6];
  shardlin_view_storage s;
  shardlin_memref v;
  const int64_t sizes[3] = {2, 1, 3};
  ASSERT_EQ(shardlin_view_init(&v, &s, data, 3, sizes), SHARDLIN_OK);
  EXPECT_EQ(v.rank, 3);
  EXPECT_EQ(v.descriptor, &s);
  EXPECT_EQ(s.aligned, data);
  EXPECT_EQ(s.offset, 0);
  const int64_t expected[6] = {2, 1, 3, 3, 3, 1};
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(s.sizes_and_strides[i], expected[i]) << i;
  EXPECT_EQ(shardlin_view_init(&v, &s, data, 0, nullptr), SHARDLIN_OK);
  EXPECT_EQ(shardlin_view_init(&v, &s, data, 9, sizes),
            SHARDLIN_INVALID_ARGUMENT);
  EXPECT_STREQ(shardlin_last_error_message(),
               "shardlin_view_init: rank 9 is out of range [0, 8]");
  const int64_t negative[1] = {-2};
  EXPECT_EQ(shardlin_view_init(&v, &s, data, 1, negative),
            SHARDLIN_INVALID_ARGUMENT);
  EXPECT_STREQ(shardlin_last_error_message(),
               "shardlin_view_init: size -2 of dim 0 is negative");
  EXPECT_EQ(shardlin_view_init(nullptr, &s, data, 1, sizes),
            SHARDLIN_INVALID_ARGUMENT);
  EXPECT_EQ(shardlin_view_init(&v, &s, data, 2, nullptr),
            SHARDLIN_INVALID_ARGUMENT);
}

TEST(CApi, ChunkRangeErrors) {
  const int64_t ok[3] = {2, 0, 1}, twice[3] = {0, 0, 1};
  int64_t offset = -1, size = -1;
  ASSERT_EQ(shardlin_chunk_range(5, 3, ok, 2, &offset, &size), SHARDLIN_OK);
  // split 2: rank 2 holds chunk 0, [0, 2).
  EXPECT_EQ(offset, 0);
  EXPECT_EQ(size, 2);
  EXPECT_EQ(shardlin_chunk_range(5, 3, twice, 0, &offset, &size),
            SHARDLIN_INVALID_ARGUMENT);
  EXPECT_STREQ(shardlin_last_error_message(),
               "shardlin_chunk_range: placements: rank 0 appears twice "
               "(positions 0 and 1)");
  EXPECT_EQ(shardlin_chunk_range(5, 3, ok, 3, &offset, &size),
            SHARDLIN_INVALID_ARGUMENT);
  EXPECT_STREQ(shardlin_last_error_message(),
               "shardlin_chunk_range: rank 3 is not in [0, 2]");
  EXPECT_EQ(shardlin_chunk_range(-1, 3, ok, 0, &offset, &size),
            SHARDLIN_INVALID_ARGUMENT);
  EXPECT_EQ(shardlin_chunk_range(5, 0, ok, 0, &offset, &size),
            SHARDLIN_INVALID_ARGUMENT);
  EXPECT_EQ(shardlin_chunk_range(5, 3, nullptr, 0, &offset, &size),
            SHARDLIN_INVALID_ARGUMENT);
  EXPECT_EQ(shardlin_chunk_range(5, 3, ok, 0, nullptr, &size),
            SHARDLIN_INVALID_ARGUMENT);
}

TEST(CApi, ThreadContext) {
  Group g(2);
  EXPECT_EQ(shardlin_thread_context(), nullptr);
  shardlin_set_thread_context(g.ctx[0]);
  EXPECT_EQ(shardlin_thread_context(), g.ctx[0]);
  shardlin_context *seen[2] = {g.ctx[0], g.ctx[0]};
  g.run([&](int r) {
    seen[r] = shardlin_thread_context(); // a new thread has none
    shardlin_set_thread_context(g.ctx[r]);
    if (shardlin_thread_context() != g.ctx[r])
      seen[r] = g.ctx[0];
  });
  EXPECT_EQ(seen[0], nullptr);
  EXPECT_EQ(seen[1], nullptr);
  EXPECT_EQ(shardlin_thread_context(), g.ctx[0]);
  // Destroying the thread's context clears it.
  shardlin_context_destroy(g.ctx[0]);
  g.ctx[0] = nullptr;
  EXPECT_EQ(shardlin_thread_context(), nullptr);
}

} // namespace
