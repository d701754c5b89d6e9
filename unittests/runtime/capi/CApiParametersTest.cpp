//===- CApiParametersTest.cpp - shardlin_parameter_read -------------------===//
//
// Issue 40: a C program that calls compiled code itself binds an
// externalized parameter by name: its rank's chunk (a range of one dim) or
// the whole tensor, into a dense or strided view; each mismatch is refused
// with its own code and message, and the view is left as it was.
//
//===----------------------------------------------------------------------===//

#include "shardlin-c/Runtime.h"
#include "shardlin/runtime/tooling/Safetensors.h"

#include "../tooling/TempDirTest.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace {

using namespace shardlin::rt;
using shardlin::rt::testutil::TempDirTest;

class CApiParameters : public TempDirTest {
protected:
  void SetUp() override {
    TempDirTest::SetUp();
    for (int i = 0; i < 30; ++i)
      w_.push_back(0.25f * float(i + 1) * (i % 2 ? -1.0f : 1.0f));
    file_ = path("model.safetensors");
    const float bias[3] = {1.0f, 2.0f, 3.0f};
    ASSERT_TRUE(writeSafetensors(file_, {{"fc.bias", DType::F32, {3}, bias},
                                         {"fc.weight", DType::F32, {5, 6},
                                          w_.data()}})
                    .isOk());
  }
  std::vector<float> w_;
  std::string file_;
};

TEST_F(CApiParameters, ReadsARanksChunkOrTheWholeTensor) {
  // Rows [1, 3) into a dense 2 x 6 view.
  std::vector<float> rows(12, -99.0f);
  shardlin_memref view;
  shardlin_view_storage storage;
  const int64_t rowSizes[2] = {2, 6};
  ASSERT_EQ(shardlin_view_init(&view, &storage, rows.data(), 2, rowSizes),
            SHARDLIN_OK);
  ASSERT_EQ(shardlin_parameter_read(file_.c_str(), "fc.weight", SHARDLIN_F32,
                                    0, 1, 2, &view),
            SHARDLIN_OK)
      << shardlin_last_error_message();
  for (int i = 0; i < 12; ++i)
    EXPECT_EQ(rows[i], w_[6 + i]) << i;

  // Columns [2, 5) into a strided 5 x 3 view of a 5 x 4 buffer: the
  // fourth column stays poisoned.
  std::vector<float> cols(20, -99.0f);
  const int64_t colSizes[2] = {5, 3};
  ASSERT_EQ(shardlin_view_init(&view, &storage, cols.data(), 2, colSizes),
            SHARDLIN_OK);
  storage.sizes_and_strides[2] = 4; // the row stride
  ASSERT_EQ(shardlin_parameter_read(file_.c_str(), "fc.weight", SHARDLIN_F32,
                                    1, 2, 3, &view),
            SHARDLIN_OK)
      << shardlin_last_error_message();
  for (int r = 0; r < 5; ++r) {
    for (int c = 0; c < 3; ++c)
      EXPECT_EQ(cols[r * 4 + c], w_[r * 6 + 2 + c]) << r << "," << c;
    EXPECT_EQ(cols[r * 4 + 3], -99.0f);
  }

  // The whole tensor (dim -1).
  std::vector<float> whole(30, -99.0f);
  const int64_t wholeSizes[2] = {5, 6};
  ASSERT_EQ(shardlin_view_init(&view, &storage, whole.data(), 2, wholeSizes),
            SHARDLIN_OK);
  ASSERT_EQ(shardlin_parameter_read(file_.c_str(), "fc.weight", SHARDLIN_F32,
                                    -1, 0, 0, &view),
            SHARDLIN_OK);
  EXPECT_EQ(whole, w_);
}

TEST_F(CApiParameters, RefusesWhatDoesNotMatch) {
  std::vector<float> rows(12, -99.0f);
  shardlin_memref view;
  shardlin_view_storage storage;
  const int64_t sizes[2] = {2, 6};
  ASSERT_EQ(shardlin_view_init(&view, &storage, rows.data(), 2, sizes),
            SHARDLIN_OK);
  auto read = [&](const char *path, const char *name, shardlin_dtype dtype,
                  int64_t dim, int64_t offset, int64_t size) {
    return shardlin_parameter_read(path, name, dtype, dim, offset, size,
                                   &view);
  };
  EXPECT_EQ(read(file_.c_str(), "fc.wieght", SHARDLIN_F32, 0, 1, 2),
            SHARDLIN_NOT_FOUND);
  EXPECT_NE(std::string(shardlin_last_error_message())
                .find("has no tensor 'fc.wieght' (it holds 'fc.bias', "
                      "'fc.weight')"),
            std::string::npos)
      << shardlin_last_error_message();
  EXPECT_EQ(read(path("none.safetensors").c_str(), "fc.weight", SHARDLIN_F32,
                 0, 1, 2),
            SHARDLIN_NOT_FOUND);
  EXPECT_EQ(read(file_.c_str(), "fc.weight", SHARDLIN_F64, 0, 1, 2),
            SHARDLIN_INVALID_ARGUMENT);
  EXPECT_NE(std::string(shardlin_last_error_message())
                .find("is F32, not the dtype's F64"),
            std::string::npos)
      << shardlin_last_error_message();
  EXPECT_EQ(read(file_.c_str(), "fc.weight", SHARDLIN_F32, 0, 4, 2),
            SHARDLIN_INVALID_ARGUMENT);
  EXPECT_NE(std::string(shardlin_last_error_message())
                .find("the range [4, 4 + 2) is not within dim 0"),
            std::string::npos)
      << shardlin_last_error_message();
  EXPECT_EQ(read(file_.c_str(), "fc.weight", SHARDLIN_F32, 2, 0, 1),
            SHARDLIN_INVALID_ARGUMENT);
  EXPECT_EQ(read(file_.c_str(), "fc.weight", SHARDLIN_F32, 0, 0, 3),
            SHARDLIN_INVALID_ARGUMENT);
  EXPECT_NE(std::string(shardlin_last_error_message())
                .find("out has shape [2, 6] but the chunk of tensor "
                      "'fc.weight'"),
            std::string::npos)
      << shardlin_last_error_message();
  EXPECT_EQ(read(nullptr, "fc.weight", SHARDLIN_F32, 0, 1, 2),
            SHARDLIN_INVALID_ARGUMENT);
  for (float v : rows)
    EXPECT_EQ(v, -99.0f);
}

} // namespace
