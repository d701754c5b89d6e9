//===- TempDirTest.h - A fixture with a fresh directory per test -*- C++ -*-===//
#ifndef SHARDLIN_RUNTIME_TEST_TEMPDIRTEST_H
#define SHARDLIN_RUNTIME_TEST_TEMPDIRTEST_H

#include <gtest/gtest.h>

#include <stdlib.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>
#include <vector>

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
  /// The names in the test's directory, sorted.
  std::vector<std::string> listing() const {
    std::vector<std::string> names;
    for (const auto &e : std::filesystem::directory_iterator(dir_))
      names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }
  std::string dir_;
};

/// The bytes of the file at `p` (none if it cannot be read).
inline std::vector<uint8_t> readFile(const std::string &p) {
  std::ifstream in(p, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

} // namespace shardlin::rt::testutil

#endif // SHARDLIN_RUNTIME_TEST_TEMPDIRTEST_H
