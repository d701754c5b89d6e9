//===- CApiSumRowsTest.cpp - shardlin_sum_rows ----------------------------===//
//
// The C ABI's sum_rows (what shardlin-convert-to-llvm calls for
// shardlin.buffer.sum_rows): the column sums of a strided 2-D view (a
// column-major one, packed by the ABI) into a strided 1-D view, equal bit for
// bit to the host's LocalOps (SumRowsTest.cpp checks those against float64);
// f16 summed into f32; 0 rows; and the errors, each naming the argument.
//
//===----------------------------------------------------------------------===//

#include "shardlin-c/Runtime.h"
#include "shardlin/runtime/backends/Host.h"
#include "shardlin/runtime/base/DType.h"
#include "shardlin/runtime/exec/LocalOps.h"

#include "RandomValues.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

namespace rt = shardlin::rt;

namespace {

class CApiSumRows : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_EQ(shardlin_threads_group_create(1, nullptr, &ctx_), SHARDLIN_OK);
  }
  void TearDown() override { shardlin_context_destroy(ctx_); }

  /// Expects INVALID_ARGUMENT with `text` in the message; a fresh context
  /// for the next case (failures stick).
  void expectInvalid(shardlin_status st, const std::string &text) {
    EXPECT_EQ(st, SHARDLIN_INVALID_ARGUMENT);
    std::string message = shardlin_context_message(ctx_);
    EXPECT_NE(message.find(text), std::string::npos) << message;
    shardlin_context_destroy(ctx_);
    ASSERT_EQ(shardlin_threads_group_create(1, nullptr, &ctx_), SHARDLIN_OK);
  }

  shardlin_context *ctx_ = nullptr;
};

/// A view of `data` with the given sizes and element strides.
struct View {
  shardlin_view_storage storage = {};
  shardlin_memref ref = {};
  View(void *data, std::vector<int64_t> sizes, std::vector<int64_t> strides) {
    storage.allocated = storage.aligned = data;
    for (size_t d = 0; d < sizes.size(); ++d) {
      storage.sizes_and_strides[d] = sizes[d];
      storage.sizes_and_strides[sizes.size() + d] = strides[d];
    }
    ref = {static_cast<int64_t>(sizes.size()), &storage};
  }
};

TEST_F(CApiSumRows, StridedViewsGiveTheHostsSums) {
  const int64_t rows = 13, cols = 7;
  // x stored column-major (x[i, j] at j * rows + i): the ABI packs it.
  std::vector<float> x = rt::test::randomValues(rows * cols, 3);
  std::vector<float> dense(rows * cols);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      dense[i * cols + j] = x[j * rows + i];
  std::vector<float> want(cols);
  ASSERT_TRUE(rt::createHostLocalOps()->sumRows(
      dense.data(), rt::DType::F32, want.data(), rt::DType::F32, rows, cols));
  // The result every other element of a buffer; the gaps stay as they were.
  std::vector<float> out(2 * cols, -7.0f);
  View in(x.data(), {rows, cols}, {1, rows}), o(out.data(), {cols}, {2});
  ASSERT_EQ(shardlin_sum_rows(ctx_, SHARDLIN_F32, &in.ref, SHARDLIN_F32, &o.ref),
            SHARDLIN_OK)
      << shardlin_context_message(ctx_);
  for (int64_t j = 0; j < cols; ++j) {
    EXPECT_EQ(std::memcmp(&out[2 * j], &want[j], sizeof(float)), 0) << j;
    EXPECT_EQ(out[2 * j + 1], -7.0f) << j;
  }
}

TEST_F(CApiSumRows, HalfRowsIntoFloatAndNoRows) {
  const int64_t rows = 5, cols = 3;
  std::vector<float> f = rt::test::randomValues(rows * cols, 4);
  std::vector<double> d(f.begin(), f.end());
  std::vector<uint16_t> x(rows * cols);
  rt::convertFromF64(rt::DType::F16, d.data(), x.data(), d.size());
  std::vector<float> want(cols), out(cols, NAN);
  ASSERT_TRUE(rt::createHostLocalOps()->sumRows(
      x.data(), rt::DType::F16, want.data(), rt::DType::F32, rows, cols));
  View in(x.data(), {rows, cols}, {cols, 1}), o(out.data(), {cols}, {1});
  ASSERT_EQ(shardlin_sum_rows(ctx_, SHARDLIN_F16, &in.ref, SHARDLIN_F32, &o.ref),
            SHARDLIN_OK);
  EXPECT_EQ(std::memcmp(out.data(), want.data(), cols * sizeof(float)), 0);
  // No rows: zeros.
  View none(x.data(), {0, cols}, {cols, 1});
  ASSERT_EQ(
      shardlin_sum_rows(ctx_, SHARDLIN_F16, &none.ref, SHARDLIN_F32, &o.ref),
      SHARDLIN_OK);
  EXPECT_EQ(out, std::vector<float>(cols, 0.0f));
}

TEST_F(CApiSumRows, Errors) {
  float x[6] = {1, 2, 3, 4, 5, 6}, y[3];
  View in(x, {2, 3}, {3, 1}), out(y, {3}, {1}), out2(y, {2}, {1});
  View flat(x, {6}, {1}), overlapping(x + 3, {3}, {1});
  expectInvalid(
      shardlin_sum_rows(ctx_, SHARDLIN_F32, &in.ref, SHARDLIN_F64, &out.ref),
      "sums f32 into f64; out_dtype is dtype, or f32 for f16 and bf16");
  expectInvalid(
      shardlin_sum_rows(ctx_, SHARDLIN_F32, &in.ref, SHARDLIN_F32, &out2.ref),
      "out has 2 elements, expected 3 (the columns of in [2, 3])");
  expectInvalid(
      shardlin_sum_rows(ctx_, SHARDLIN_F32, &flat.ref, SHARDLIN_F32, &out.ref),
      "in");
  expectInvalid(shardlin_sum_rows(ctx_, SHARDLIN_F32, &in.ref, SHARDLIN_F32,
                                  &overlapping.ref),
                "out overlaps in in memory");
  expectInvalid(shardlin_sum_rows(ctx_, static_cast<shardlin_dtype>(9),
                                  &in.ref, SHARDLIN_F32, &out.ref),
                "dtype 9 is not a shardlin_dtype");
  EXPECT_EQ(shardlin_sum_rows(nullptr, SHARDLIN_F32, &in.ref, SHARDLIN_F32,
                              &out.ref),
            SHARDLIN_INVALID_ARGUMENT);
}

} // namespace
