//===- LinearTesting.h - One linear: description, MLIR, program -*- C++ -*-===//
//
// What the end-to-end tests, the fault tests and the benchmark share about
// the one layer they all run: the description of a sharded linear
// y = x A^T (+ b), the MLIR text of `func.func @main` computing it, and its
// compilation (parse, lower with a strategy, translate) into a runtime
// Program, the path shardlin-run takes.
//
// The library (ShardlinTesting, testing/compiler/) is built with the compiler
// and links it; this header has no MLIR dependency, so the files that
// include it compile quickly and never see the compiler's headers. It lives
// in bench/ because the benchmark is built without the tests; the runtime
// does not depend on it.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_BENCH_TESTING_LINEARTESTING_H
#define SHARDLIN_BENCH_TESTING_LINEARTESTING_H

#include "shardlin/runtime/base/DType.h"
#include "shardlin/runtime/program/Program.h"
#include "shardlin/runtime/base/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace shardlin::testkit {

/// What a linear and a block (BlockTesting.h) share: the input's batch
/// dims, the placements of the (col-wise) weights, the dtype and the
/// strategy forced on the pass.
struct ShardedSpec {
  /// The input's leading (batch) dims; empty = a 1-D input (one row).
  /// rt::kDynamic marks a dynamic dim (`?` in the MLIR), whose size on each
  /// rank is given by rankBatch.
  std::vector<int64_t> batch = {5};
  /// With dynamic batch dims: rank r's batch dims (all static), one entry
  /// per rank; they may differ between ranks. Empty: every rank's are
  /// `batch`.
  std::vector<std::vector<int64_t>> rankBatch;
  /// placements[c] = the rank that holds chunk c; its size is W.
  std::vector<int64_t> placements = {0};
  rt::DType dtype = rt::DType::F32;
  /// The lowering strategy forced on the pass: "activations" or
  /// "gather-weight" (or "auto").
  std::string strategy = "activations";

  int worldSize() const { return static_cast<int>(placements.size()); }
  /// B: the number of rows the batch dims flatten to (1 for a 1-D input);
  /// with dynamic batch dims, rank 0's.
  int64_t rows() const { return rowsOf(0); }
  /// Whether a batch dim is dynamic.
  bool dynamicBatch() const;
  /// Rank r's batch dims and rows.
  const std::vector<int64_t> &batchOf(int rank) const;
  int64_t rowsOf(int rank) const;

protected:
  /// The batch dims (rank r's, or the type's for rank -1) and then `last`.
  std::vector<int64_t> shapeOf(int rank, int64_t last) const;
};

/// One y = x A^T + b with a sharded weight A (N x K). The defaults are the
/// end-to-end tests' small layer.
struct LinearSpec : ShardedSpec {
  /// The weight's sharded dim: 1 = K split ("row-wise"), 0 = N split
  /// ("col-wise"); the names follow PyTorch's sharded_linear, which computes
  /// with A^T.
  int64_t dim = 1;
  int64_t n = 11;
  int64_t k = 19;
  /// The chunks' explicit boundaries along the sharded dim (W + 1 values
  /// from 0 to its size, `bounds` of #shardlin.chunk), or empty for the
  /// ceil rule.
  std::vector<int64_t> bounds;
  bool bias = true;

  /// The input's and output's types (rt::kDynamic for dynamic dims).
  std::vector<int64_t> inputShape() const { return shapeOf(-1, k); }
  std::vector<int64_t> outputShape() const { return shapeOf(-1, n); }
  /// Rank r's input and output shapes.
  std::vector<int64_t> inputShapeOf(int rank) const { return shapeOf(rank, k); }
  std::vector<int64_t> outputShapeOf(int rank) const {
    return shapeOf(rank, n);
  }
  /// A readable, unique gtest-safe name, e.g. row_W4_p2301_N11K19_B5_bias_f32.
  std::string name() const;
};

/// The MLIR text of `func.func @main` computing the linear.
std::string linearMlir(const LinearSpec &spec);

/// What a failed compilation's message carries after "parsing failed" or
/// "buildProgram failed".
enum class CompileMessage {
  /// ": " and the compiler's diagnostics (the benchmark's one-line form).
  Diagnostics,
  /// ":\n", the diagnostics, then "input:\n" and the MLIR text (the tests').
  DiagnosticsAndInput,
};

/// Parses linearMlir(spec) in a fresh single-threaded MLIRContext, lowers it
/// with spec.strategy and builds the runtime Program of @main. Compiler
/// diagnostics become the message.
/// Parses `text` (a module with a function @main), lowers it with
/// `strategy` (fusing blocks if `fuseBlocks`) and translates it into a
/// Program.
rt::Status compileMlir(const std::string &text, const std::string &strategy,
                       rt::Program &out,
                       CompileMessage message = CompileMessage::DiagnosticsAndInput,
                       bool fuseBlocks = true);

/// One tensor in a test's dtype (`bytes`) and the same values exactly in
/// float64 (`values`).
struct HostTensor {
  std::vector<uint8_t> bytes;
  std::vector<double> values;
};

/// A rank's float64 reference output `y` and, per element, the magnitude
/// its rounding errors scale with (`scale`: the sums of absolute terms).
struct Reference {
  std::vector<double> y;
  std::vector<double> scale;
};

/// Compares `output` (dtype bytes of a rows x cols result) with a float64
/// reference element by element: |y - ref| / scale <= bound (|y - ref| where
/// scale is 0; NaN, for example an unwritten element, fails). Returns the
/// failures (all elements if the size is wrong) and appends up to 5 lines
/// on them, each starting with `who`, to `report`.
int64_t compareWithReference(const std::string &who, rt::DType dtype,
                             const std::vector<uint8_t> &output, int64_t cols,
                             const std::vector<double> &ref,
                             const std::vector<double> &scale, double bound,
                             std::string &report);

/// The placements 0..w-1 rotated by `by`: placements[i] = (i + by) % w
/// (identity for w = 1).
std::vector<int64_t> rotatedPlacements(int w, int by = 1);
/// 0, 1, ..., w-1.
inline std::vector<int64_t> identityPlacements(int w) {
  return rotatedPlacements(w, 0);
}

/// MLIR's spelling of a ranked tensor type ("tensor<5x19xf32>", "?" for
/// rt::kDynamic).
std::string tensorType(const std::vector<int64_t> &shape, rt::DType dtype);
/// "5x19" with sep "x"; `dynamic` spells rt::kDynamic.
std::string joinDims(const std::vector<int64_t> &dims, const char *sep,
                     const char *dynamic = "?");

/// A rank's shape of each argument with dynamic dims (the rest left empty),
/// as RankCallbacks::argShapes gives them: `shape` for argument `input`,
/// the only one that may have dynamic dims.
rt::Status dynamicArgShapes(const rt::Program &program, size_t input,
                            const std::vector<int64_t> &shape,
                            std::vector<std::vector<int64_t>> &shapes);

rt::Status
compileLinear(const LinearSpec &spec, rt::Program &out,
              CompileMessage message = CompileMessage::DiagnosticsAndInput);

} // namespace shardlin::testkit

#endif // SHARDLIN_BENCH_TESTING_LINEARTESTING_H
