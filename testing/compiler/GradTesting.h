//===- GradTesting.h - Backward functions for tests and examples -*- C++ -*-===//
//
// What the gradient tests (integration_test/Gradient), the training example
// and the data-parallel grid tests share about backward functions
// (docs/training.md):
//  - a case: one sharded linear (LinearTesting.h) or a block model
//    (BlockTesting.h), with the options of --shardlin-generate-backward;
//  - its compilation: the pass, the lowering and the translation of @main,
//    @main_backward and, when the backward takes saved values,
//    @main_forward_saving, into runtime Programs;
//  - random data (the forward's arguments, one dy per rank; never zero,
//    exactly representable in the dtype) and the float64 reference: the
//    analytic gradients of the dense model (numpy style: dx = dy A,
//    dA = sum over ranks of dy^T x, db = sum over ranks of the rows of dy,
//    the activations' derivatives written out), with the magnitude each
//    element's rounding errors scale with;
//  - running the saving forward and the backward on every rank through the
//    in-memory run API (rt::runProgram), and checking every gradient of
//    every rank (a weight's: the rank's own chunk) against the reference.
//
// No MLIR in this header; the compilation is in GradCompile.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_TESTING_GRADTESTING_H
#define SHARDLIN_TESTING_GRADTESTING_H

#include "BlockTesting.h"
#include "LinearTesting.h"
#include "shardlin/runtime/base/Buffer.h"
#include "shardlin/runtime/exec/Execute.h"
#include "shardlin/runtime/program/Program.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace shardlin::testkit {

/// One function @main and how its backward is generated.
struct GradCase {
  enum class Model { Linear, Block } model = Model::Linear;
  LinearSpec linear;
  BlockSpec block;
  /// --shardlin-generate-backward's recompute option: "auto" (with no
  /// memory cap: save everything), "always" or "never".
  std::string recompute = "always";

  int worldSize() const;
  rt::DType dtype() const;
  const std::string &strategy() const;
  bool fuse() const { return model == Model::Block ? block.fuse : true; }
  /// The MLIR text of @main (linearMlir or blockMlir).
  std::string mlir() const;
  /// Rank r's shape of @main's result, and so of dy.
  std::vector<int64_t> outputShapeOf(int rank) const;
  /// A readable, unique gtest-safe name.
  std::string name() const;
};

/// How each argument of @main (and so each result of @main_backward) is
/// spread over the ranks.
struct GradArgument {
  enum class Kind {
    /// Rank-local: each rank its own (an input x).
    Local,
    /// A sharded weight: each rank holds chunk `placements`-wise of dim
    /// `dim`; its gradient is the rank's chunk of the summed gradient.
    Sharded,
    /// The same on every rank (a bias): its gradient is the full sum over
    /// ranks, on every rank.
    Replicated,
    /// The same on every rank, but a plain argument to the compiler (a
    /// bias that only an elementwise chain reads, inside a linalg.generic:
    /// no linear's bias is computed from it): its gradient is rank-local,
    /// each rank's own rows' sum (docs/training.md, "The gradients").
    Plain,
  } kind = Kind::Local;
  /// The global shape (Local: rank 0's shape; see GradCase::inputShapeOf).
  std::vector<int64_t> shape;
  int64_t dim = 0;
  std::vector<int64_t> placements;
};
std::vector<GradArgument> gradArguments(const GradCase &c);

/// The compiled functions of a case.
struct BackwardPrograms {
  rt::Program forward;  // @main, lowered
  rt::Program backward; // @main_backward
  rt::Program saving;   // @main_forward_saving, if numSaved > 0
  /// The saved values @main_backward takes after dy (the results of
  /// @main_forward_saving after @main's).
  size_t numSaved = 0;
};

/// Runs --shardlin-generate-backward with the case's strategy, fusion and
/// recompute options, then --lower-sharded-linear, and translates the
/// functions (a weight gradient's shardlin.from_local is the rank's chunk:
/// a sharded result, as shardlin-run writes it). Compiler diagnostics and
/// the input become the message.
rt::Status compileBackward(const GradCase &c, BackwardPrograms &out);
/// The same for any module text with a public function @`entry` (its
/// backward @`entry`_backward, its saving forward @`entry`_forward_saving).
rt::Status compileBackwardMlir(const std::string &text,
                               const std::string &strategy, bool fuse,
                               const std::string &recompute,
                               BackwardPrograms &out,
                               const std::string &entry = "main");

/// One tensor held by one rank: its bytes in the dtype and its shape.
struct RankTensor {
  std::vector<uint8_t> bytes;
  std::vector<int64_t> shape;
};

/// The data of a case, exactly representable in the dtype and never zero:
/// @main's arguments as a block's data holds them (BlockData: `args`
/// indexed like @main's arguments, the global ones with weights whole;
/// `inputs`, the Local argument x per rank) and dy per rank.
struct GradData : BlockData {
  /// [rank]: the gradient of @main's result.
  std::vector<HostTensor> dy;
};
GradData makeGradData(const GradCase &c, uint64_t seed = 1);

/// Rank r's value of @main's argument i: its input, its chunk of a weight,
/// or a bias.
RankTensor argumentOf(const GradCase &c, const GradData &data, size_t i,
                      int rank);

/// A float64 tensor and, per element, the magnitude its rounding errors
/// scale with.
struct GradTensor {
  std::vector<double> value, scale;
};

/// The dense model's gradients: [argument][rank] for Local and Plain
/// arguments, and [argument][0] (summed over every rank's rows) for the
/// others.
using GradReference = std::vector<std::vector<GradTensor>>;
GradReference gradReference(const GradCase &c, const GradData &data);

/// The bound on |g - ref| / scale for the case (GradReference.cpp says
/// why).
double gradErrorBound(const GradCase &c);

/// Compares rank `rank`'s results of @main_backward (one per argument of
/// @main, in the dtype) with the reference: a Local or Plain argument's own
/// gradient, a Sharded one's chunk of the rank, a Replicated one's sum.
/// Returns the failures and appends up to 5 lines per result to `report`.
int64_t checkGradients(const GradCase &c, const GradReference &ref, int rank,
                       const std::vector<RankTensor> &results,
                       std::string &report);

/// checkGradients for every rank of a one-group run: `results[r]` are rank
/// r's, against gradReference(c, data). Returns the failures of all ranks.
int64_t checkAllRanks(const GradCase &c, const GradData &data,
                      const std::vector<std::vector<RankTensor>> &results,
                      std::string &report);

/// The callbacks (rt::RankCallbacks) of a run whose arguments and results
/// are host tensors, for the ranks 0..worldSize-1 of one group: args(rank)
/// gives rank `rank`'s arguments (copied to its device; their shapes give
/// the `?` sizes); results[rank] gets its results, copied back to the host
/// from NaN-filled buffers, so that unwritten elements show. Lives as long
/// as the run.
class TensorCallbacks {
public:
  TensorCallbacks(int worldSize,
                  std::function<std::vector<RankTensor>(int rank)> args,
                  std::vector<std::vector<RankTensor>> &results);
  /// For a compiled program, `executor` is its executors.
  rt::RankCallbacks
  callbacks(const rt::RankCallbacks::MakeExecutor &executor = {});

private:
  std::function<std::vector<RankTensor>(int rank)> args_;
  std::vector<std::vector<RankTensor>> &results_;
  std::vector<std::vector<RankTensor>> inputs_;
  std::vector<std::vector<rt::Buffer>> buffers_;
};

/// Runs `program` on the ranks of `options` (every rank for the in-process
/// backends, this process's for mpi) with args(rank)[i] as argument i of
/// rank `rank` (copied to the rank's device; its shape gives the `?`
/// sizes), and fills results[rank] with the rank's results, copied back to
/// the host (from NaN-filled buffers, so unwritten elements show). For a
/// compiled program, `executor` is its executors.
rt::Status runWithTensors(
    const rt::Program &program, const rt::RunOptions &options,
    const std::function<std::vector<RankTensor>(int rank)> &args,
    std::vector<std::vector<RankTensor>> &results,
    const rt::RankCallbacks::MakeExecutor &executor = {},
    std::vector<rt::RankResult> *ranks = nullptr);

/// A case's backward on every rank: @main_forward_saving first if the
/// backward takes saved values (its saved results passed on, every rank
/// its own), then @main_backward with @main's arguments, dy and the saved
/// values. results[rank] are the rank's gradients.
struct BackwardRun {
  const rt::Program *backward = nullptr;
  const rt::Program *saving = nullptr;
  size_t numSaved = 0;
  rt::RankCallbacks::MakeExecutor backwardExecutor, savingExecutor;
};
BackwardRun backwardRunOf(const BackwardPrograms &programs);
rt::Status runBackward(const GradCase &c, const GradData &data,
                       const BackwardRun &run, const rt::RunOptions &options,
                       std::vector<std::vector<RankTensor>> &results);

/// Runs `program` on a data-parallel grid (docs/training.md, "Grids") as
/// runWithTensors does on one group: options.replicas replicas of
/// options.worldSize ranks (0: the program's) through rt::runProgram, on
/// any backend; args(replica, rank) are the rank's arguments, and after the
/// execution each result in `averaged` is averaged over the replicas
/// (rt::averageOverReplicas, in the rank's device memory).
/// results[replica][rank] are the rank's results (those of the ranks this
/// process ran; the others are empty).
rt::Status runGridWithTensors(
    const rt::Program &program, const rt::RunOptions &options,
    const std::function<std::vector<RankTensor>(int replica, int rank)> &args,
    std::vector<std::vector<std::vector<RankTensor>>> &results,
    const std::vector<size_t> &averaged,
    const rt::RankCallbacks::MakeExecutor &executor = {});

/// Options of a run under mpirun: the mpi backend, `worldSize` ranks (of
/// one replica, on a grid), the suite's `comm`, one BLAS thread per rank.
inline rt::RunOptions mpiRunOptions(int worldSize, const rt::CommOptions &comm) {
  rt::RunOptions options;
  options.backend = "mpi";
  options.worldSize = worldSize;
  options.comm = comm;
  options.blasThreads = 1;
  return options;
}

/// A case's backward on a grid of options.replicas = data.size() replicas:
/// replica d runs the saving forward (if any) and the backward on data[d]
/// (runBackward's steps, through runGridWithTensors), and the gradient of
/// every parameter (a sharded weight's chunk, a replicated bias) is
/// averaged over the replicas. results[d][rank] are the gradients of
/// replica d's rank.
rt::Status runBackwardOnGrid(
    const GradCase &c, const std::vector<GradData> &data,
    const BackwardRun &run, const rt::RunOptions &options,
    std::vector<std::vector<std::vector<RankTensor>>> &results);

/// The reference on a grid of data.size() replicas, replica `replica`'s
/// view: its own input gradients, and each parameter's gradient averaged
/// over the replicas (values and scales alike). The averaging adds one
/// rounding of the sum and an exact halving for DP = 2 (a power of 2): in
/// f32 and f64, far below gradErrorBound's fixed bounds.
GradReference gridReference(const GradCase &c,
                            const std::vector<GradData> &data, int replica);

/// A linear case (its `strategy` forced on the pass) and a block case (h =
/// 8; the other fields BlockSpec's defaults).
GradCase gradLinearCase(int64_t dim, int64_t n, int64_t k,
                        std::vector<int64_t> placements,
                        std::vector<int64_t> batch, bool bias, rt::DType dtype,
                        const char *recompute,
                        const char *strategy = "activations");
GradCase gradBlockCase(BlockKind kind, Activation act, OpForm form,
                       std::vector<int64_t> placements, int64_t f,
                       rt::DType dtype, bool fuse, bool residual,
                       const char *recompute);

/// The gradient suite: a representative sweep over both sharding dims and
/// strategies, fused and unfused MLP and SwiGLU blocks with residuals,
/// uneven, empty and permuted chunks, N-D and 1-D inputs, per-rank batch
/// sizes, every dtype, recomputed and saved.
std::vector<GradCase> gradSuite();

} // namespace shardlin::testkit

#endif // SHARDLIN_TESTING_GRADTESTING_H
