//===- TempDirTest.h - A fixture with a fresh directory per test -*- C++ -*-===//
#ifndef SHARDLIN_RUNTIME_TEST_TEMPDIRTEST_H
#define SHARDLIN_RUNTIME_TEST_TEMPDIRTEST_H

#include <gtest/gtest.h>

#include <stdlib.h>

#include <filesystem>
#include <string>
#include <system_error>

namespace shardlin::rt::testutil {

/// A fresh directory per test (under gtest's TempDir), removed afterwards.
class TempDirTest : public ::testing::Test {
protected:
  void SetUp() override {
    std::string tmpl = ::testing::TempDir() + "shardlin-test-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  /// `name` inside the test's directory.
  std::string path(const std::string &name) const {
    return (std::filesystem::path(dir_) / name).string();
  }
  std::string dir_;
};

} // namespace shardlin::rt::testutil

#endif // SHARDLIN_RUNTIME_TEST_TEMPDIRTEST_H
