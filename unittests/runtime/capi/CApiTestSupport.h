//===- CApiTestSupport.h - Helpers of the C ABI's unit tests ----*- C++ -*-===//
//
// A threads group of contexts, a row-major f32 tensor with its view, and
// message helpers, for CApiTest.cpp and CApiCollectivesTest.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_UNITTESTS_RUNTIME_CAPI_CAPITESTSUPPORT_H
#define SHARDLIN_UNITTESTS_RUNTIME_CAPI_CAPITESTSUPPORT_H

#include "shardlin-c/Runtime.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace shardlin::capi_test {

inline ::testing::AssertionResult contains(const std::string &text,
                                    const std::string &part) {
  if (text.find(part) != std::string::npos)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "\"" << text << "\"\n  does not contain \"" << part << "\"";
}

/// The contexts of one threads group, destroyed with it.
struct Group {
  std::vector<shardlin_context *> ctx;
  explicit Group(int w, double timeout = 30) : ctx(w, nullptr) {
    shardlin_options o = shardlin_default_options();
    o.timeout_seconds = timeout;
    o.blas_threads = 1;
    EXPECT_EQ(shardlin_threads_group_create(w, &o, ctx.data()), SHARDLIN_OK)
        << shardlin_last_error_message();
  }
  ~Group() {
    for (shardlin_context *c : ctx)
      shardlin_context_destroy(c);
  }
  /// Runs f(rank) on one thread per rank.
  void run(const std::function<void(int)> &f) {
    std::vector<std::thread> threads;
    for (size_t r = 0; r < ctx.size(); ++r)
      threads.emplace_back([&f, r] { f(static_cast<int>(r)); });
    for (std::thread &t : threads)
      t.join();
  }
};

/// A row-major f32 tensor and its view; elements start as `fill`.
struct Tensor {
  std::vector<float> data;
  shardlin_view_storage storage;
  shardlin_memref ref;
  Tensor(std::vector<int64_t> sizes, float fill = 1.5f) {
    int64_t n = 1;
    for (int64_t s : sizes)
      n *= s;
    data.assign(static_cast<size_t>(n), fill);
    EXPECT_EQ(shardlin_view_init(&ref, &storage, data.data(),
                                 static_cast<int64_t>(sizes.size()),
                                 sizes.data()),
              SHARDLIN_OK);
  }
  int64_t *strides() { return storage.sizes_and_strides + ref.rank; }
};

inline std::string message(shardlin_context *ctx) {
  return shardlin_context_message(ctx);
}

} // namespace shardlin::capi_test

#endif
