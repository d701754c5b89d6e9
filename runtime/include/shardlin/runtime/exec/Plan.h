//===- Plan.h - A program resolved for one rank -----------------*- C++ -*-===//
//
// Compile once, run many: a Plan resolves every value's concrete shape for
// one rank, allocates its buffers and precomputes each collective's counts
// and displacements from the chunk tables. run() then only moves data and
// calls GEMMs, and can be replayed any number of times.
//
// A program may have plain arguments with dynamic dims (`?`: batch sizes
// known only at run time, possibly different on each rank). Its plan is
// built for one set of sizes, every rank's (DynamicSizes): a collective
// that stacks per-rank rows needs all of them. A new set of sizes needs a
// new plan (PlanCache keeps them).
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_RUNTIME_PLAN_H
#define SHARDLIN_RUNTIME_PLAN_H

#include "shardlin/runtime/base/Buffer.h"
#include "shardlin/runtime/comm/Communicator.h"
#include "shardlin/runtime/exec/CommLane.h"
#include "shardlin/runtime/exec/Gemm.h"
#include "shardlin/runtime/exec/LocalOps.h"
#include "shardlin/runtime/program/Program.h"

#include <memory>
#include <string>
#include <vector>

namespace shardlin::rt {

/// One dynamic dim of a plain argument.
struct DynamicDim {
  size_t arg = 0;
  size_t dim = 0;
};

/// The dynamic (`?`) dims of the program's plain arguments, argument by
/// argument, each argument's in dim order. (Sharded arguments are static.)
std::vector<DynamicDim> dynamicArgDims(const Program &program);

/// The sizes of those dims on every rank: sizes[r][i] is rank r's size of
/// dynamicArgDims(program)[i].
using DynamicSizes = std::vector<std::vector<int64_t>>;

/// This rank's sizes of the dynamic argument dims, from the shapes of its
/// arguments (argShapes[i]: argument i's shape; ignored for arguments
/// without dynamic dims, which may be left empty). Fails if a shape has
/// another rank or differs from the program's static dims, naming the
/// argument (and `what[i]`, e.g. its file, if given) and both shapes.
Status dynamicSizesOf(const Program &program,
                      const std::vector<std::vector<int64_t>> &argShapes,
                      std::vector<int64_t> &sizes,
                      const std::vector<std::string> &what = {});

struct PlanOptions {
  /// Run an `elementwise` instruction that reads the result of the `gemm`
  /// right before it as that GEMM's epilogue (GemmBackend::runWithEpilogue:
  /// on each block of rows of C while it is in cache on the CPU, in
  /// cuBLASLt's epilogue for a bias or GELU on a GPU). false runs the
  /// two one after the other; the results agree within the elementwise op's
  /// bounds, and false exists to compare them.
  bool fuseGemmEpilogues = true;
  /// The row chunks of a fused block's pipeline (docs/runtime.md,
  /// "Overlapping communication with the GEMMs"): -1 takes each
  /// all_gather's `overlap` from the program; 0 or 1 runs every block in
  /// sequence; N >= 2 pipelines every block that can be in N chunks
  /// (at most kMaxOverlapChunks), whatever the program says.
  int overlapChunks = -1;
};

/// What the plan made of a fused block's all_gather that asked to overlap
/// (or, with PlanOptions::overlapChunks >= 2, of every all_gather).
struct PipelineInfo {
  /// The all_gather's instruction index.
  size_t instr = 0;
  /// The chunks it runs in (with at least one row each), or 0: in sequence.
  int chunks = 0;
  /// The last instruction of the block (its reduce_scatter), if pipelined.
  size_t end = 0;
  /// Why it runs in sequence, if it does.
  std::string why;
};

class Plan {
public:
  /// Resolves `program` for `rank` of `worldSize` ranks. Fails if worldSize
  /// differs from the program's, or if a rank-dependent size contradicts a
  /// static one.
  /// A program with dynamic argument dims needs `sizes`, every rank's
  /// (sizes.size() == worldSize); the others take none.
  /// The plan keeps a copy of `program`.
  static Status build(const Program &program, int rank, int worldSize,
                      Allocator &allocator, std::unique_ptr<Plan> &out,
                      const DynamicSizes &sizes = {},
                      const PlanOptions &options = PlanOptions());
  /// The same, sharing `program` (the plans of one run's ranks share one
  /// copy).
  static Status build(std::shared_ptr<const Program> program, int rank,
                      int worldSize, Allocator &allocator,
                      std::unique_ptr<Plan> &out,
                      const DynamicSizes &sizes = {},
                      const PlanOptions &options = PlanOptions());
  ~Plan();

  int rank() const { return rank_; }
  /// The dynamic sizes the plan was built for (empty if none).
  const DynamicSizes &dynamicSizes() const;
  /// Concrete (local) shapes of the arguments and results for this rank.
  const std::vector<int64_t> &argShape(size_t i) const;
  const std::vector<int64_t> &resultShape(size_t i) const;
  DType argType(size_t i) const;
  DType resultType(size_t i) const;
  size_t numArgs() const;
  size_t numResults() const;

  /// Runs the program. args[i] holds argument i with argShape(i) (for a
  /// sharded argument: this rank's chunk); results[i] receives result i with
  /// resultShape(i). All pointers, and the plan's allocator, are on the one
  /// device of the communicator, the GEMM backend and the local ops; on a
  /// GPU the work is enqueued in order and run() does not synchronize.
  ///
  /// A pipelined block issues its collectives to `lane` (CommLane.h), or,
  /// without one, runs them in order within the run (an inline lane): the
  /// same results, without the overlap.
  Status run(Communicator &comm, GemmBackend &gemm, LocalOps &ops,
             const std::vector<const void *> &args,
             const std::vector<void *> &results, CommLane *lane = nullptr);

  /// The fused blocks asked to overlap, and what the plan made of each.
  const std::vector<PipelineInfo> &pipelines() const;
  /// Whether run() pipelines any block (and so can use a lane).
  bool pipelinesAny() const;

  struct Impl;

private:
  Plan() = default;
  int rank_ = 0;
  std::unique_ptr<Impl> impl_;
};

} // namespace shardlin::rt

#endif // SHARDLIN_RUNTIME_PLAN_H
