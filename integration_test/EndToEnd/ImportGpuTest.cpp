//===- ImportGpuTest.cpp - Upstream shard modules on cuda-local -----------===//
//
// Issue 29's modules in the upstream global view (ImportCases.h: linears of
// both orientations and sharding dims, replicated and sequence-sharded
// activations, uneven sharded_dims_offsets with empty shards, N-D inputs,
// every dtype, MLP / SwiGLU / residual blocks), imported, lowered and run
// through the file runner on the cuda-local backend (W ranks as threads
// sharing one GPU), exactly as ImportEndToEndTest.cpp runs them on threads:
// every rank's output against the float64 reference, the results both per
// rank and assembled. Without a usable GPU every test skips with the reason.
//
//===----------------------------------------------------------------------===//

#include "ImportCases.h"

#include "shardlin/runtime/backends/Cuda.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace shardlin::e2e {
namespace {

class ImportGpu : public ::testing::TestWithParam<ImportCase> {};

TEST_P(ImportGpu, EveryRankMatchesTheReference) {
  std::string why;
  if (!rt::cudaDevicesAvailable(&why))
    GTEST_SKIP() << "no usable CUDA device: " << why;
  char pattern[] = "/tmp/shardlin-import-gpu-XXXXXX";
  ASSERT_NE(mkdtemp(pattern), nullptr);
  const std::string dir = pattern;
  std::string report;
  const int64_t failures =
      runImportCase(GetParam(), "cuda-local", -1, dir, report);
  std::filesystem::remove_all(dir);
  EXPECT_EQ(failures, 0) << report;
}

INSTANTIATE_TEST_SUITE_P(CudaLocal, ImportGpu,
                         ::testing::ValuesIn(importThreadsCases()),
                         [](const ::testing::TestParamInfo<ImportCase> &info) {
                           return info.param.name();
                         });

} // namespace
} // namespace shardlin::e2e
