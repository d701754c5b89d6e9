//===- ImportCases.h - Upstream shard + linalg modules, run end to end -*- C++ -*-===//
//
// The end-to-end cases of issue 29: modules in the upstream global view
// (linalg.matmul in both weight orientations, biases in the forms producers
// write, replicated, sequence-sharded and feature-sharded activations, even
// splits and uneven `sharded_dims_offsets` with empty shards, N-D inputs
// through collapse / expand_shape, MLP blocks with a GELU and SwiGLU blocks
// in arith / math on tensors, bf16 / f16 ones computing them in f32 between
// extf and truncf, with a residual),
// written as MLIR text, imported, lowered and run through the file runner
// (runProgramWithFiles: global files for sharded arguments, or each rank's
// shard; {rank} results) as shardlin-run runs them. Every rank's output is
// compared with a float64 reference of the global computation: its rows of
// it (a sharded result) or all of it (a replicated one).
//
// This header has no MLIR dependency (LinearTesting.h compiles the text).
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_INTEGRATION_TEST_ENDTOEND_IMPORTCASES_H
#define SHARDLIN_INTEGRATION_TEST_ENDTOEND_IMPORTCASES_H

#include "shardlin/runtime/base/DType.h"
#include "shardlin/runtime/exec/Execute.h"
#include "shardlin/runtime/program/Program.h"

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <map>
#include <string>
#include <vector>

namespace shardlin::e2e {

struct ImportCase {
  /// Mlp: x + gelu(x W1 + b1) W2; SwiGlu: x + (silu(x Wg) * (x Wu)) W2.
  enum class Kind { Linear, Mlp, SwiGlu };
  /// The weight as the module holds it: K x N, or N x K through the
  /// transposing indexing_maps (MLIR 22's form) or a linalg.transpose.
  enum class Weight { KN, NKMap, NKTranspose };
  /// The activation's sharding: replicated, split along its leading dim
  /// (batch / sequence), or along its features (a row-wise layer's x).
  enum class X { Replicated, Rows, Features };
  /// The bias: none, a broadcasting linalg.generic, linalg.broadcast +
  /// linalg.add, or the matmul's broadcast init.
  enum class Bias { None, Generic, BroadcastAdd, Init };

  Kind kind = Kind::Linear;
  int w = 4;
  rt::DType dtype = rt::DType::F32;
  /// Linear: N split (col-wise) or K split (row-wise).
  bool colWise = true;
  Weight weight = Weight::KN;
  X x = X::Rows;
  Bias bias = Bias::Generic;
  /// The result replicated (else split like x's rows).
  bool replicatedResult = false;
  /// x's leading dims: {M} (2-D) or {A, B} (3-D, collapsed to A * B rows
  /// around the matmul).
  std::vector<int64_t> batch = {10};
  /// Linear: K and N. Blocks: H (= K = the output's features) and F.
  int64_t k = 16, n = 12;
  /// sharded_dims_offsets of x's leading dim and of the weight's split dim
  /// (the MLP's F), W + 1 values; empty: an even split.
  std::vector<int64_t> rowOffsets;
  std::vector<int64_t> weightOffsets;
  /// Blocks: y = x + block(x).
  bool residual = true;
  /// Sharded x given as each rank's own shard ({rank} files) instead of the
  /// global file.
  bool perRankFiles = false;

  /// A gtest-safe unique name.
  std::string name() const;
  /// x's global shape, the output's.
  std::vector<int64_t> xShape() const;
  std::vector<int64_t> yShape() const;
  /// The collectives the program must hold, by op (others: none), under
  /// strategy=activations.
  std::map<rt::OpCode, int> expectedCollectives() const;
  /// Whether x is split on its rows at uneven offsets: each rank then has
  /// its own row count, which compiled code exchanges (one more collective
  /// call, shardlin.gather_bounds) before stacking the rows.
  bool unevenRows() const;
};

/// gtest names a case by this, not by its bytes.
void PrintTo(const ImportCase &c, std::ostream *os);

/// The module's MLIR text (`func.func @main`, one `shard.grid @tp`).
std::string importMlir(const ImportCase &c);

/// The cases of the threads suite, and those for an MPI job of `w` ranks.
std::vector<ImportCase> importThreadsCases();
std::vector<ImportCase> importMpiCases(int w);

/// Compiles the case (import, lowering with strategy=activations), checks
/// its collectives, writes its inputs under `dir`, runs it through the file
/// runner on `backend` (threads: every rank; mpi: this process's) twice
/// (results as {rank} files, then as one global file) and compares every
/// rank's output this process ran with the float64 reference. `onlyRank` is
/// the rank this process runs (-1: all of them). Returns the number of
/// failures; `report` says what failed.
/// `compile`, if given, compiles the module text instead of the plan
/// executor's compileMlir (the JIT suite's native code: the program's
/// signature and its ranks' executors).
using CompileImport = std::function<rt::Status(
    const std::string &text, rt::Program &program,
    rt::RankCallbacks::MakeExecutor &executor)>;
int64_t runImportCase(const ImportCase &c, const std::string &backend,
                      int onlyRank, const std::string &dir,
                      std::string &report,
                      const CompileImport &compile = {});

/// The cases of the native path (--jit): col-wise linears on a replicated x
/// with a replicated result, every weight and bias form, every dtype, W = 3
/// and 4; and the threads suite's small set at W = 4 (split results through
/// from_local, row-wise layers' replicated results through all_reduce,
/// uneven sharded_dims_offsets with empty shards on the weight and the
/// result's rows) and its MLP and SwiGLU blocks at W = 3, x split on its
/// rows at uneven offsets included (per-rank row counts, which the compiled
/// code exchanges).
std::vector<ImportCase> importJitCases();

} // namespace shardlin::e2e

#endif
