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
  GradCase col;
  col.model = GradCase::Model::Linear;
  col.linear.dim = 0;
  col.linear.n = 7;
  col.linear.k = 9;
  col.linear.placements = {2, 0, 1};
  col.linear.batch = {4};
  col.linear.bias = true;
  col.linear.dtype = rt::DType::F32;
  col.recompute = "always";
  all.push_back(col);

  GradCase row = col;
  row.linear.dim = 1;
  row.linear.n = 6;
  row.linear.k = 5;
  row.linear.placements = {1, 0};
  row.linear.batch = {rt::kDynamic};
  row.linear.rankBatch = {{3}, {0}};
  row.linear.dtype = rt::DType::F64;
  row.recompute = "never";
  all.push_back(row);

  GradCase mlp;
  mlp.model = GradCase::Model::Block;
  mlp.block.activation = Activation::GeluTanh;
  mlp.block.h = 8;
  mlp.block.f = 10;
  mlp.block.placements = {1, 0};
  mlp.block.residual = true;
  mlp.block.dtype = rt::DType::F64;
  mlp.recompute = "never";
  all.push_back(mlp);
  return all;
}

} // namespace shardlin::testkit

#endif // SHARDLIN_INTEGRATION_TEST_GRADIENT_GRADGRIDCASES_H
