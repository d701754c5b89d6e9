//===- PlanState.h - A plan's state, as the ops' functions see it -*- C++
//-*-===//
//
// Plan.cpp owns the generic part of a plan (storage roots, buffers, binding
// arguments and results, the checks every result gets); each op's resolve
// and execute functions (exec/ops/*.cpp, listed in OpKernels.h) fill in and
// read one PlanStep through the contexts below.
//
// A program whose plain arguments have dynamic dims (run-time batch sizes,
// which may differ between ranks) is resolved for every rank in lockstep,
// instruction by instruction: a collective along a dynamic dim reads the
// other ranks' sizes of its operand (OpResolveContext::peerOperandShape),
// and a value stacked from per-rank blocks remembers them (RowBlocks), so
// that a later reduce_scatter or all_to_all splits it into the same blocks.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_RUNTIME_LIB_EXEC_PLANSTATE_H
#define SHARDLIN_RUNTIME_LIB_EXEC_PLANSTATE_H

#include "exec/Exchange.h"
#include "shardlin/runtime/program/OpTable.h"
#include "shardlin/runtime/exec/Plan.h"

#include <memory>
#include <string>
#include <vector>

namespace shardlin::rt {

/// The blocks a dynamic dim of a value was assembled from, by chunk: an
/// all_gather (or an all_to_all's concat) along a dynamic dim makes chunk c
/// the block of rank placements[c]; gemm (its rows), elementwise, bias_add
/// and convert keep their operand's blocks. A reduce_scatter or all_to_all
/// that splits a dynamic dim splits it into these blocks. dim < 0: none.
struct RowBlocks {
  int64_t dim = -1;
  std::vector<int64_t> sizes;
  bool operator==(const RowBlocks &o) const {
    return dim == o.dim && sizes == o.sizes;
  }
};

/// What one instruction needs at run time, resolved for one rank.
struct PlanStep {
  Exchange send, recv; // The collectives' tables (recv: gather, all-to-all).
  Buffer sendStaging, recvStaging;
  int64_t sendCount = 0; // all_gather: this rank's count
  int64_t m = 0, n = 0, k = 0, lda = 1, ldb = 1;
  DimSplit chunkView{1, 0, 1};
  Range chunkRange;
  bool inPlace = false;
  /// elementwise: the operands' kinds (their pointers are filled in at each
  /// run) and the result as rows x cols (cols: the last dim).
  std::vector<ExprOperand> exprOperands;
  int64_t rows = 0, cols = 0;
  /// gemm: the index of the elementwise instruction it runs as its
  /// epilogue, or -1. elementwise: whether the gemm before it runs it.
  int epilogue = -1;
  bool inGemmEpilogue = false;
  /// Device memory the op needs while it runs (attention's score blocks),
  /// allocated with the plan's buffers.
  int64_t scratchBytes = 0;
  Buffer scratch;
};

/// One chunk of a pipelined block (exec/Pipeline.cpp): a window of rows of
/// every rank, gathered, computed on and reduced apart from the others.
/// The block's values hold the chunks one after the other (chunk-major):
/// chunk i's rows of every rank, in the gather's order, from slabStart.
struct PipelineChunk {
  int64_t slabStart = 0, slabRows = 0;
  /// This rank's rows of the gather's operand and of the block's result.
  int64_t ownStart = 0, ownRows = 0;
  /// all_gather: elements of each rank, and where they land in the
  /// gathered value (from its start).
  std::vector<int64_t> gatherCounts, gatherDispls;
  /// reduce_scatter: the segment of each rank, from the slab's start.
  std::vector<int64_t> reduceCounts, reduceDispls;
};

/// A fused block run as a pipeline of row chunks.
struct Pipeline {
  /// Its all_gather and reduce_scatter.
  size_t gather = 0, reduce = 0;
  /// Instructions between them that do not read the block's rows (views
  /// and conversions of weights): run first, in order.
  std::vector<size_t> prologue;
  /// The rest (gemm, elementwise, bias_add, convert on the rows), in
  /// order, run on each chunk.
  std::vector<size_t> body;
  std::vector<PipelineChunk> chunks;
  /// Elements per row of the gathered operand and of the reduced one.
  int64_t gatherRow = 0, reduceRow = 0;
};

struct Plan::Impl {
  explicit Impl(std::shared_ptr<const Program> owned)
      : ownedProgram(std::move(owned)), program(*ownedProgram) {}

  /// Shared by the plans of every rank resolved in lockstep.
  std::shared_ptr<const Program> ownedProgram;
  const Program &program;
  int worldSize = 1;
  /// Every rank's sizes of the program's dynamic argument dims (empty for a
  /// program without them).
  DynamicSizes dynamicSizes;
  PlanOptions options;
  std::vector<std::vector<int64_t>> shapes;
  /// value -> the blocks of its dynamic dim, if it was stacked from them.
  std::vector<RowBlocks> blocks;
  std::vector<int> root;          // value -> storage root value
  std::vector<size_t> byteOffset; // value -> offset within its root
  std::vector<Buffer> buffers;    // root value -> owned buffer
  std::vector<int> boundResult;   // root value -> result index or -1
  std::vector<bool> isArgRoot;
  /// Uses of each value by instructions and program results.
  std::vector<int> uses;

  std::vector<PlanStep> steps;
  std::vector<void *> rootPtr;
  /// The pipelined blocks, what was asked of each all_gather (Plan::
  /// pipelines), and each instruction's pipeline (or -1).
  std::vector<Pipeline> pipelines;
  std::vector<PipelineInfo> pipelineInfo;
  std::vector<int> pipelineOf;

  char *ptr(int v) const {
    return static_cast<char *>(rootPtr[root[v]]) + byteOffset[v];
  }
  size_t eltSize(int v) const { return dtypeSize(program.values[v].dtype); }
  int64_t numElements(int v) const {
    return product(shapes[v], 0, shapes[v].size());
  }

  /// Sizes the tables and resolves the arguments' shapes on `rank`.
  Status resolveArguments(int rank);
  /// Resolves instruction `s` on `rank`; `peers` (indexed by rank, this
  /// plan included) are the plans of every rank, resolved up to `s`, or
  /// null for a program without dynamic argument dims.
  Status resolveInstr(size_t s, int rank, const std::vector<Impl *> *peers);
  /// Allocates the storage of every resolved value.
  Status allocate(Allocator &allocator);
  Status execute(Communicator &comm, GemmBackend &gemm, LocalOps &ops,
                 CommLane *lane);
  /// Runs instruction `s` with its kernel.
  Status executeInstr(size_t s, Communicator &comm, GemmBackend &gemm,
                      LocalOps &ops);
  /// Finds the blocks to pipeline (exec/Pipeline.cpp), after every
  /// instruction was resolved for this rank.
  void findPipelines(int rank);
  /// Runs pipeline `p` (exec/Pipeline.cpp).
  Status runPipeline(const Pipeline &p, Communicator &comm, GemmBackend &gemm,
                     LocalOps &ops, CommLane &lane);
};

struct OpResolveContext {
  Plan::Impl &plan;
  const Instr &in;
  PlanStep &step;
  /// The instruction's index in the program.
  size_t index;
  int rank;
  /// Every rank's plan (see Plan::Impl::resolveInstr), or null.
  const std::vector<Plan::Impl *> *peers;
  /// To fill in: the result's shape on this rank.
  std::vector<int64_t> result;
  /// To fill in, if the result has them: its row blocks.
  RowBlocks resultBlocks;

  const std::vector<int64_t> &operandShape(size_t i) const {
    return plan.shapes[in.operands[i]];
  }
  const RowBlocks &operandBlocks(size_t i) const {
    return plan.blocks[in.operands[i]];
  }
  /// Operand i's shape on rank `p`; only with peers.
  const std::vector<int64_t> &peerOperandShape(int p, size_t i) const {
    return (*peers)[p]->shapes[in.operands[i]];
  }
  /// The result's type's shape (kDynamic where it depends on the rank).
  const std::vector<int64_t> &resultType() const {
    return plan.program.values[in.result].shape;
  }
  size_t operandEltSize(size_t i) const { return plan.eltSize(in.operands[i]); }
  /// Makes the result a view of operand i's storage at a byte offset.
  void viewOperand(size_t i, size_t byteOffset) {
    int of = in.operands[i];
    plan.root[in.result] = plan.root[of];
    plan.byteOffset[in.result] = plan.byteOffset[of] + byteOffset;
  }
  /// An error about this op, with its location and name.
  Status error(const std::string &msg) const;
  /// Checks that a shape fits in int64 elements and bytes (of the result's
  /// element type) before anything multiplies its dims.
  Status checkSize(const std::vector<int64_t> &shape) const;
};

struct OpExecuteContext {
  Plan::Impl &plan;
  const Instr &in;
  PlanStep &step;
  Communicator &comm;
  GemmBackend &gemm;
  LocalOps &ops;

  char *operand(size_t i) const { return plan.ptr(in.operands[i]); }
  char *result() const { return plan.ptr(in.result); }
  DType dtype() const { return plan.program.values[in.result].dtype; }
  size_t eltSize() const { return dtypeSize(dtype()); }
};

} // namespace shardlin::rt

#endif // SHARDLIN_RUNTIME_LIB_EXEC_PLANSTATE_H
