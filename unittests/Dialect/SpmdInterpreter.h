//===- SpmdInterpreter.h - Running shardlin IR on W simulated ranks -*- C++
//-*-===//
//
// A test-only float64 interpreter of shardlin functions, high level
// (shardlin.linear, by its definition y = x A^T + b with the global weight)
// or lowered (the collectives, gemm, bias_add, convert, sum_rows,
// from_local, reshapes and the elementwise ops of chains), on W ranks
// in lock step: each op runs on every rank before the next, which is all a
// collective needs. Every element type is computed in float64 (converts are
// exact), so it checks the structure of a program, not its rounding.
//
// It is what lets the backward's gradients be checked numerically without
// the runtime (BackwardNumericTest.cpp): the lowered backward against
// finite differences of the high-level forward.
//
// Collectives follow the dialect's rules (ShardlinOps.td): chunks by the
// chunk rule over a static dim; over a dynamic dim, whole per-rank blocks,
// remembered by the value and by what is computed from it row by row, so a
// later split along that dim gives each rank its block back.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_TEST_UNIT_SPMDINTERPRETER_H
#define SHARDLIN_TEST_UNIT_SPMDINTERPRETER_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace shardlin::testing {

struct Tensor {
  std::vector<int64_t> shape;
  std::vector<double> data;
  /// A dim stacked from every rank's block (a dynamic dim gathered or
  /// concatenated), with the blocks' sizes by chunk, or -1.
  int64_t blockDim = -1;
  std::vector<int64_t> blockSizes;

  int64_t numel() const;
  static Tensor zeros(std::vector<int64_t> shape);
};

/// Runs `f` on `worldSize` ranks. `args[i][r]` is argument i on rank r; a
/// sharded argument is given as its global tensor (the same on every rank),
/// of which local_shard takes each rank's chunk. `results[i][r]` is result
/// i on rank r; a sharded result is the rank's chunk. On failure, returns
/// false and says why in `error`. `bytesSent`, if given, receives the bytes
/// each rank's collectives send, counted as the runtime's CommStats count
/// them (Communicator.h).
bool runSpmd(mlir::func::FuncOp f, int64_t worldSize,
             const std::vector<std::vector<Tensor>> &args,
             std::vector<std::vector<Tensor>> &results, std::string &error,
             std::vector<uint64_t> *bytesSent = nullptr);

} // namespace shardlin::testing

#endif
