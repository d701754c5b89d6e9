//===- ImportEndToEndTest.cpp - Upstream shard modules on threads ---------===//
//
// Issue 29's modules in the upstream global view (ImportCases.h), imported,
// lowered and run through the file runner on the threads backend: every
// rank's output against the float64 reference, the collectives of each
// program, the results both per rank and assembled.
//
//===----------------------------------------------------------------------===//

#include "ImportCases.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

namespace shardlin::e2e {
namespace {

class ImportEndToEnd : public ::testing::TestWithParam<ImportCase> {};

TEST_P(ImportEndToEnd, EveryRankMatchesTheReference) {
  char pattern[] = "/tmp/shardlin-import-XXXXXX";
  ASSERT_NE(mkdtemp(pattern), nullptr);
  const std::string dir = pattern;
  std::string report;
  const int64_t failures =
      runImportCase(GetParam(), "threads", -1, dir, report);
  std::filesystem::remove_all(dir);
  EXPECT_EQ(failures, 0) << report;
}

INSTANTIATE_TEST_SUITE_P(
    Threads, ImportEndToEnd, ::testing::ValuesIn(importThreadsCases()),
    [](const ::testing::TestParamInfo<ImportCase> &info) {
      return info.param.name();
    });

} // namespace
} // namespace shardlin::e2e
