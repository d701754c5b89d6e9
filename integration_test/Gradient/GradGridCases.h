//===- GradGridCases.h - The cases of the DP x TP grid tests ----*- C++ -*-===//
//
// Shared by GradGridTest.cpp (threads) and GradGridMpiTest.cpp: a col-wise
// linear over TP = 3 (uneven, permuted), a row-wise one over TP = 2 with
// per-rank batch sizes (one rank has no rows), and a fused MLP block with a
// residual over TP = 2, in f32 and f64 (the averaging's one rounding stays
// far below their bounds, GradTesting.h's gridReference). Replica d's data
// comes from seed gridSeed(d).
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_INTEGRATION_TEST_GRADIENT_GRADGRIDCASES_H
#define SHARDLIN_INTEGRATION_TEST_GRADIENT_GRADGRIDCASES_H

#include "GradTesting.h"

namespace shardlin::testkit {

inline uint64_t gridSeed(int replica) { return 101 + uint64_t(replica); }

inline std::vector<GradCase> gridCases() {
  std::vector<GradCase> all;
  all.push_back(
      gradLinearCase(0, 7, 9, {2, 0, 1}, {4}, true, rt::DType::F32, "always"));
  GradCase row = gradLinearCase(1, 6, 5, {1, 0}, {rt::kDynamic}, true,
                                rt::DType::F64, "never");
  row.linear.rankBatch = {{3}, {0}};
  all.push_back(row);
  all.push_back(gradBlockCase(BlockKind::Mlp, Activation::GeluTanh,
                              OpForm::Arith, {1, 0}, 10, rt::DType::F64, true,
                              true, "never"));
  return all;
}

} // namespace shardlin::testkit

#endif // SHARDLIN_INTEGRATION_TEST_GRADIENT_GRADGRIDCASES_H
