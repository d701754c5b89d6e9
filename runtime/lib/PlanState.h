//===- PlanState.h - A plan's state, as the ops' functions see it -*- C++
//-*-===//
//
// Plan.cpp owns the generic part of a plan (storage roots, buffers, binding
// arguments and results, the checks every result gets); each op's resolve
// and execute functions (Ops.cpp, listed in the op table) fill in and read
// one PlanStep through the contexts below.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_RUNTIME_LIB_PLANSTATE_H
#define SHARDLIN_RUNTIME_LIB_PLANSTATE_H

#include "shardlin/runtime/OpTable.h"
#include "shardlin/runtime/Plan.h"

#include <memory>
#include <string>
#include <vector>

namespace shardlin::rt {

inline int64_t product(const std::vector<int64_t> &shape, size_t begin,
                       size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end; ++i)
    p *= shape[i];
  return p;
}

/// A tensor viewed as [outer, n, inner] around one dim.
struct DimSplit {
  int64_t outer, n, inner;
};

inline DimSplit splitAround(const std::vector<int64_t> &shape, int64_t dim) {
  return {product(shape, 0, dim), shape[dim],
          product(shape, dim + 1, shape.size())};
}

/// For one collective: per-rank element counts and displacements in the
/// buffer handed to the communicator, plus, when the data is not contiguous
/// per rank, how to pack into / unpack from a staging buffer.
struct Exchange {
  std::vector<int64_t> counts, displs;
  bool staged = false;
  // For staging: per-rank range along the dim of the [outer, n, inner] view.
  std::vector<Range> ranges;
  DimSplit view{1, 0, 1};

  int64_t totalCount() const;
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
};

struct Plan::Impl {
  Program program;
  int worldSize = 1;
  PlanOptions options;
  std::vector<std::vector<int64_t>> shapes;
  std::vector<int> root;          // value -> storage root value
  std::vector<size_t> byteOffset; // value -> offset within its root
  std::vector<Buffer> buffers;    // root value -> owned buffer
  std::vector<int> boundResult;   // root value -> result index or -1
  std::vector<bool> isArgRoot;
  /// Uses of each value by instructions and program results.
  std::vector<int> uses;

  std::vector<PlanStep> steps;
  std::vector<void *> rootPtr;
  std::unique_ptr<LocalOps> hostOps; // For run() without explicit ops.

  char *ptr(int v) const {
    return static_cast<char *>(rootPtr[root[v]]) + byteOffset[v];
  }
  size_t eltSize(int v) const { return dtypeSize(program.values[v].dtype); }
  int64_t numElements(int v) const {
    return product(shapes[v], 0, shapes[v].size());
  }

  Status resolve(int rank, Allocator &allocator);
  Status execute(Communicator &comm, GemmBackend &gemm, LocalOps &ops);
};

struct OpResolveContext {
  Plan::Impl &plan;
  const Instr &in;
  PlanStep &step;
  /// The instruction's index in the program.
  size_t index;
  int rank;
  /// To fill in: the result's shape on this rank.
  std::vector<int64_t> result;

  const std::vector<int64_t> &operandShape(size_t i) const {
    return plan.shapes[in.operands[i]];
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

#endif // SHARDLIN_RUNTIME_LIB_PLANSTATE_H
