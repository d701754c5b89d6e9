//===- SingleBlasThread.h - One BLAS thread per in-process rank -*- C++ -*-===//
//
// Tests whose ranks run as threads at the same time give each rank one BLAS
// thread (more would oversubscribe the cores W times over). A test file
// registers the environment once:
//
//   const ::testing::Environment *const singleBlasThread =
//       ::testing::AddGlobalTestEnvironment(
//           new shardlin::rt::test::SingleBlasThread);
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_RUNTIME_TEST_SINGLEBLASTHREAD_H
#define SHARDLIN_RUNTIME_TEST_SINGLEBLASTHREAD_H

#include "shardlin/runtime/backends/Host.h"

#include <gtest/gtest.h>

namespace shardlin::rt::test {

class SingleBlasThread : public ::testing::Environment {
public:
  void SetUp() override { setBlasThreads(1); }
};

} // namespace shardlin::rt::test

#endif // SHARDLIN_RUNTIME_TEST_SINGLEBLASTHREAD_H
