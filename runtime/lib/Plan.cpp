//===- Plan.cpp - Resolving and running a program for one rank ------------===//
//
// Values are stored either in an argument, in a buffer the plan owns, or as a
// view (byte offset) into another value's storage: local_shard and reshapes
// are views, as is a local_chunk along the outermost non-unit dim. A program
// result whose storage the plan owns is written straight into the caller's
// output buffer, so the common case copies nothing at the end.
//
//===----------------------------------------------------------------------===//

#include "shardlin/runtime/Plan.h"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <string>

namespace shardlin::rt {

namespace {

int64_t product(const std::vector<int64_t> &shape, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end; ++i)
    p *= shape[i];
  return p;
}

/// A tensor viewed as [outer, n, inner] around one dim.
struct DimSplit {
  int64_t outer, n, inner;
};

DimSplit splitAround(const std::vector<int64_t> &shape, int64_t dim) {
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
};

/// Builds the exchange tables for pieces that are the ranges `ranges[p]`
/// (indexed by rank) along the middle dim of `view`.
Exchange makeExchange(const DimSplit &view, std::vector<Range> ranges) {
  Exchange ex;
  ex.view = view;
  ex.staged = view.outer != 1;
  int64_t packed = 0;
  for (const Range &r : ranges) {
    int64_t count = view.outer * r.size * view.inner;
    ex.counts.push_back(count);
    ex.displs.push_back(ex.staged ? packed : r.offset * view.inner);
    packed += count;
  }
  ex.ranges = std::move(ranges);
  return ex;
}

/// Packs the ranges of `src` ([outer, n, inner]) into consecutive blocks of
/// `staging` in rank order.
Status packPieces(LocalOps &ops, const Exchange &ex, const char *src,
                  char *staging, size_t elt) {
  const DimSplit &v = ex.view;
  for (size_t p = 0; p < ex.ranges.size(); ++p) {
    const Range &r = ex.ranges[p];
    // An empty piece copies nothing, and its buffers may be null: no
    // pointer arithmetic on them (an offset from null is undefined).
    if (v.outer == 0 || r.size == 0 || v.inner == 0)
      continue;
    SHARDLIN_RETURN_IF_ERROR(ops.copyRows(
        src + r.offset * v.inner * elt, v.n * v.inner * elt,
        staging + ex.displs[p] * elt, r.size * v.inner * elt, v.outer,
        r.size * v.inner * elt));
  }
  return Status::ok();
}

Status unpackPieces(LocalOps &ops, const Exchange &ex, const char *staging,
                    char *dst, size_t elt) {
  const DimSplit &v = ex.view;
  for (size_t p = 0; p < ex.ranges.size(); ++p) {
    const Range &r = ex.ranges[p];
    if (v.outer == 0 || r.size == 0 || v.inner == 0)
      continue; // As in packPieces.
    SHARDLIN_RETURN_IF_ERROR(ops.copyRows(
        staging + ex.displs[p] * elt, r.size * v.inner * elt,
        dst + r.offset * v.inner * elt, v.n * v.inner * elt, v.outer,
        r.size * v.inner * elt));
  }
  return Status::ok();
}

int64_t totalCount(const Exchange &ex) {
  return std::accumulate(ex.counts.begin(), ex.counts.end(), int64_t(0));
}

} // namespace

//===----------------------------------------------------------------------===//
// Plan::Impl
//===----------------------------------------------------------------------===//

struct Plan::Impl {
  Program program;
  int worldSize = 1;
  std::vector<std::vector<int64_t>> shapes;
  std::vector<int> root;             // value -> storage root value
  std::vector<size_t> byteOffset;    // value -> offset within its root
  std::vector<Buffer> buffers;       // root value -> owned buffer
  std::vector<int> boundResult;      // root value -> result index or -1
  std::vector<bool> isArgRoot;

  struct Step {
    Exchange send, recv; // recv only for all_gather / all_to_all
    Buffer sendStaging, recvStaging;
    int64_t sendCount = 0; // all_gather: this rank's count
    int64_t m = 0, n = 0, k = 0, lda = 1, ldb = 1;
    DimSplit chunkView{1, 0, 1};
    Range chunkRange;
    bool inPlace = false;
  };
  std::vector<Step> steps;
  std::vector<void *> rootPtr;
  std::unique_ptr<LocalOps> hostOps; // For run() without explicit ops.

  char *ptr(int v) const {
    return static_cast<char *>(rootPtr[root[v]]) + byteOffset[v];
  }
  size_t eltSize(int v) const { return dtypeSize(program.values[v].dtype); }
  int64_t numElements(int v) const { return product(shapes[v], 0, shapes[v].size()); }

  Status error(const Instr &in, const std::string &msg) const {
    std::string where = in.location.empty() ? "" : in.location + ": ";
    return Status::error(where + "shardlin." + opCodeName(in.op) + ": " + msg);
  }

  /// Checks that a shape derived from a value's type fits in int64
  /// elements and bytes, before anything multiplies its dims.
  Status checkSize(const Instr &in, const std::vector<int64_t> &shape,
                   int v) const {
    int64_t count = 0;
    Status sized = checkedNumElements(shape, count, eltSize(v));
    return sized ? sized : error(in, sized.message());
  }

  Status resolve(int rank, Allocator &allocator);
  Status execute(Communicator &comm, GemmBackend &gemm, LocalOps &ops);
};

Status Plan::Impl::resolve(int rank, Allocator &allocator) {
  const size_t numValues = program.values.size();
  shapes.assign(numValues, {});
  root.resize(numValues);
  std::iota(root.begin(), root.end(), 0);
  byteOffset.assign(numValues, 0);
  buffers.resize(numValues);
  boundResult.assign(numValues, -1);
  isArgRoot.assign(numValues, false);
  rootPtr.assign(numValues, nullptr);
  steps.resize(program.instrs.size());

  for (size_t i = 0; i < program.args.size(); ++i) {
    const Argument &a = program.args[i];
    isArgRoot[i] = true;
    if (!a.sharded) {
      shapes[i] = a.type.shape;
      for (int64_t d : shapes[i])
        if (d == kDynamic)
          return Status::error("argument " + std::to_string(i) +
                               " has a dynamic shape, which is not supported");
      continue;
    }
    if (a.globalShape.size() != a.type.shape.size())
      return Status::error("argument " + std::to_string(i) +
                           ": global and local ranks differ");
    int64_t count = 0;
    Status sized = checkedNumElements(a.globalShape, count,
                                      dtypeSize(a.type.dtype));
    if (!sized)
      return sized.withContext("argument " + std::to_string(i));
    shapes[i] = a.globalShape;
    ChunkLayout layout(a.globalShape[a.sharding.dim], a.sharding.placements);
    shapes[i][a.sharding.dim] = layout.ofRank(rank).size;
  }
  // Sizes are products of dims: every argument's and (below) every result's
  // shape is checked to fit before anything multiplies its dims.
  for (size_t i = 0; i < program.args.size(); ++i) {
    int64_t count = 0;
    Status sized = checkedNumElements(shapes[i], count,
                                      dtypeSize(program.values[i].dtype));
    if (!sized)
      return sized.withContext("argument " + std::to_string(i));
  }

  // Uses per storage root: a bias_add may update its input in place only if
  // nothing else reads that storage.
  std::vector<int> uses(numValues, 0);
  for (const Instr &in : program.instrs)
    for (int v : in.operands)
      ++uses[v];
  for (int v : program.results)
    ++uses[v];

  for (size_t s = 0; s < program.instrs.size(); ++s) {
    const Instr &in = program.instrs[s];
    Step &st = steps[s];
    const int r = in.result;
    const std::vector<int64_t> &outType = program.values[r].shape;
    std::vector<int64_t> out;
    auto view = [&](int of, size_t offset) {
      root[r] = root[of];
      byteOffset[r] = byteOffset[of] + offset;
    };

    switch (in.op) {
    case OpCode::LocalShard: {
      out = shapes[in.operands[0]];
      view(in.operands[0], 0);
      break;
    }
    case OpCode::Reshape: {
      out = outType;
      for (int64_t d : out)
        if (d == kDynamic)
          return error(in, "a reshape to a rank-dependent shape is not "
                           "supported");
      int64_t n = 0;
      Status sized = checkedNumElements(out, n, eltSize(r));
      if (!sized)
        return error(in, sized.message());
      if (n != numElements(in.operands[0]))
        return error(in, "reshape from " + formatShape(shapes[in.operands[0]]) +
                             " to " + formatShape(out) +
                             " changes the element count");
      view(in.operands[0], 0);
      break;
    }
    case OpCode::LocalChunk: {
      const std::vector<int64_t> &src = shapes[in.operands[0]];
      DimSplit v = splitAround(src, in.along.dim);
      ChunkLayout layout(v.n, in.along.placements);
      st.chunkView = v;
      st.chunkRange = layout.ofRank(rank);
      out = src;
      out[in.along.dim] = st.chunkRange.size;
      if (v.outer == 1)
        view(in.operands[0],
             st.chunkRange.offset * v.inner * eltSize(in.operands[0]));
      break;
    }
    case OpCode::AllGather: {
      const std::vector<int64_t> &src = shapes[in.operands[0]];
      int64_t d = in.along.dim;
      if (outType[d] == kDynamic)
        return error(in, "the gathered dim must be static");
      out = src;
      out[d] = outType[d];
      ChunkLayout layout(out[d], in.along.placements);
      if (src[d] != layout.ofRank(rank).size)
        return error(in, "rank " + std::to_string(rank) + " contributes " +
                             std::to_string(src[d]) + " along dim " +
                             std::to_string(d) + " but its chunk of " +
                             std::to_string(out[d]) + " has " +
                             std::to_string(layout.ofRank(rank).size));
      // The gathered shape is new: check its size before any product of it.
      SHARDLIN_RETURN_IF_ERROR(checkSize(in, out, r));
      std::vector<Range> ranges;
      for (int p = 0; p < worldSize; ++p)
        ranges.push_back(layout.ofRank(p));
      st.recv = makeExchange(splitAround(out, d), ranges);
      st.sendCount = st.recv.counts[rank];
      break;
    }
    case OpCode::AllToAll: {
      const std::vector<int64_t> &src = shapes[in.operands[0]];
      int64_t sd = in.split.dim, cd = in.concat.dim;
      if (outType[cd] == kDynamic)
        return error(in, "the concatenated dim must be static");
      ChunkLayout splitLayout(src[sd], in.split.placements);
      ChunkLayout concatLayout(outType[cd], in.concat.placements);
      if (src[cd] != concatLayout.ofRank(rank).size)
        return error(in, "input dim " + std::to_string(cd) + " is " +
                             std::to_string(src[cd]) + " but rank " +
                             std::to_string(rank) + "'s chunk of " +
                             std::to_string(outType[cd]) + " has " +
                             std::to_string(concatLayout.ofRank(rank).size));
      out = src;
      out[sd] = splitLayout.ofRank(rank).size;
      out[cd] = outType[cd];
      SHARDLIN_RETURN_IF_ERROR(checkSize(in, out, r));
      std::vector<Range> sendRanges, recvRanges;
      for (int p = 0; p < worldSize; ++p) {
        sendRanges.push_back(splitLayout.ofRank(p));
        recvRanges.push_back(concatLayout.ofRank(p));
      }
      st.send = makeExchange(splitAround(src, sd), sendRanges);
      st.recv = makeExchange(splitAround(out, cd), recvRanges);
      break;
    }
    case OpCode::ReduceScatter: {
      const std::vector<int64_t> &src = shapes[in.operands[0]];
      int64_t d = in.along.dim;
      ChunkLayout layout(src[d], in.along.placements);
      out = src;
      out[d] = layout.ofRank(rank).size;
      std::vector<Range> ranges;
      for (int p = 0; p < worldSize; ++p)
        ranges.push_back(layout.ofRank(p));
      st.send = makeExchange(splitAround(src, d), ranges);
      break;
    }
    case OpCode::Gemm: {
      const std::vector<int64_t> &a = shapes[in.operands[0]];
      const std::vector<int64_t> &b = shapes[in.operands[1]];
      st.m = in.transposeLhs ? a[1] : a[0];
      int64_t ka = in.transposeLhs ? a[0] : a[1];
      int64_t kb = in.transposeRhs ? b[1] : b[0];
      st.n = in.transposeRhs ? b[0] : b[1];
      if (ka != kb)
        return error(in, "contraction dims differ on rank " +
                             std::to_string(rank) + ": lhs " + formatShape(a) +
                             ", rhs " + formatShape(b));
      st.k = ka;
      st.lda = std::max<int64_t>(1, a[1]);
      st.ldb = std::max<int64_t>(1, b[1]);
      if (in.operands.size() == 3 && shapes[in.operands[2]][0] != st.n)
        return error(in, "bias has " +
                             std::to_string(shapes[in.operands[2]][0]) +
                             " elements but the result has " +
                             std::to_string(st.n) + " columns on rank " +
                             std::to_string(rank));
      out = {st.m, st.n};
      break;
    }
    case OpCode::BiasAdd: {
      out = shapes[in.operands[0]];
      if (out.empty() || shapes[in.operands[1]][0] != out.back())
        return error(in, "bias of " +
                             std::to_string(shapes[in.operands[1]][0]) +
                             " elements for an input of shape " +
                             formatShape(out));
      int rootIn = root[in.operands[0]];
      int rootUses = 0;
      for (size_t v = 0; v < numValues; ++v)
        if (root[v] == rootIn && shapes[v].size() != 0)
          rootUses += uses[v];
      st.inPlace = !isArgRoot[rootIn] && rootUses == 1;
      if (st.inPlace)
        view(in.operands[0], 0);
      break;
    }
    }

    // The rank-resolved shape must agree with every static dim of the type.
    if (out.size() != outType.size())
      return error(in, "result rank " + std::to_string(out.size()) +
                           " differs from its type's " +
                           std::to_string(outType.size()));
    for (size_t d = 0; d < out.size(); ++d)
      if (outType[d] != kDynamic && outType[d] != out[d])
        return error(in, "on rank " + std::to_string(rank) + " the result is " +
                             formatShape(out) + " but its type says " +
                             formatShape(outType));
    int64_t count = 0;
    Status sized = checkedNumElements(out, count, dtypeSize(program.values[r].dtype));
    if (!sized)
      return error(in, sized.message());
    shapes[r] = out;
  }

  // Storage: every root that is not an argument gets a buffer, unless it is
  // a program result, which is written into the caller's output directly.
  for (size_t i = 0; i < program.results.size(); ++i) {
    int v = program.results[i];
    int rv = root[v];
    if (isArgRoot[rv] || byteOffset[v] != 0 || boundResult[rv] != -1)
      continue;
    if (static_cast<int64_t>(numElements(v)) != numElements(rv))
      continue;
    boundResult[rv] = static_cast<int>(i);
  }
  for (size_t v = program.args.size(); v < numValues; ++v) {
    if (root[v] != static_cast<int>(v) || boundResult[v] != -1)
      continue;
    SHARDLIN_RETURN_IF_ERROR(Buffer::allocate(
        allocator, numElements(v) * eltSize(v), buffers[v]));
  }
  for (size_t s = 0; s < program.instrs.size(); ++s) {
    const Instr &in = program.instrs[s];
    Step &st = steps[s];
    size_t elt = eltSize(in.result);
    if (st.send.staged)
      SHARDLIN_RETURN_IF_ERROR(Buffer::allocate(
          allocator, totalCount(st.send) * elt, st.sendStaging));
    if (st.recv.staged)
      SHARDLIN_RETURN_IF_ERROR(Buffer::allocate(
          allocator, totalCount(st.recv) * elt, st.recvStaging));
  }
  return Status::ok();
}

Status Plan::Impl::execute(Communicator &comm, GemmBackend &gemm,
                           LocalOps &ops) {
  for (size_t s = 0; s < program.instrs.size(); ++s) {
    const Instr &in = program.instrs[s];
    Step &st = steps[s];
    const int r = in.result;
    const DType dt = program.values[r].dtype;
    const size_t elt = dtypeSize(dt);
    Status status;
    switch (in.op) {
    case OpCode::LocalShard:
    case OpCode::Reshape:
      break;
    case OpCode::LocalChunk: {
      if (st.chunkView.outer == 1)
        break; // A view.
      const DimSplit &v = st.chunkView;
      if (v.outer == 0 || st.chunkRange.size == 0 || v.inner == 0)
        break; // Nothing to copy (and maybe null buffers, as in packPieces).
      status = ops.copyRows(
          ptr(in.operands[0]) + st.chunkRange.offset * v.inner * elt,
          v.n * v.inner * elt, ptr(r), st.chunkRange.size * v.inner * elt,
          v.outer, st.chunkRange.size * v.inner * elt);
      break;
    }
    case OpCode::AllGather: {
      char *recv = st.recv.staged ? static_cast<char *>(st.recvStaging.data())
                                  : ptr(r);
      status = comm.allGatherV(ptr(in.operands[0]), st.sendCount, recv,
                               st.recv.counts, st.recv.displs, dt);
      if (status && st.recv.staged)
        status = unpackPieces(ops, st.recv, recv, ptr(r), elt);
      break;
    }
    case OpCode::AllToAll: {
      const char *send = ptr(in.operands[0]);
      if (st.send.staged) {
        status = packPieces(ops, st.send, send,
                            static_cast<char *>(st.sendStaging.data()), elt);
        send = static_cast<const char *>(st.sendStaging.data());
      }
      char *recv = st.recv.staged ? static_cast<char *>(st.recvStaging.data())
                                  : ptr(r);
      if (status)
        status = comm.allToAllV(send, st.send.counts, st.send.displs, recv,
                                st.recv.counts, st.recv.displs, dt);
      if (status && st.recv.staged)
        status = unpackPieces(ops, st.recv, recv, ptr(r), elt);
      break;
    }
    case OpCode::ReduceScatter: {
      const char *send = ptr(in.operands[0]);
      if (st.send.staged) {
        status = packPieces(ops, st.send, send,
                            static_cast<char *>(st.sendStaging.data()), elt);
        send = static_cast<const char *>(st.sendStaging.data());
      }
      if (status)
        status = comm.reduceScatterV(send, st.send.counts, st.send.displs,
                                     ptr(r), dt);
      break;
    }
    case OpCode::Gemm: {
      GemmOp op;
      op.m = st.m;
      op.n = st.n;
      op.k = st.k;
      op.transA = in.transposeLhs;
      op.transB = in.transposeRhs;
      op.dtype = dt;
      op.a = ptr(in.operands[0]);
      op.lda = st.lda;
      op.b = ptr(in.operands[1]);
      op.ldb = st.ldb;
      op.bias = in.operands.size() == 3 ? ptr(in.operands[2]) : nullptr;
      op.c = ptr(r);
      op.ldc = std::max<int64_t>(1, st.n);
      status = gemm.run(op);
      break;
    }
    case OpCode::BiasAdd: {
      int64_t cols = shapes[r].back();
      int64_t rows = cols == 0 ? 0 : numElements(r) / cols;
      status = ops.biasAdd(ptr(in.operands[0]), ptr(in.operands[1]), ptr(r),
                           rows, cols, dt);
      break;
    }
    }
    if (!status)
      return status.withContext(
          (in.location.empty() ? std::string() : in.location + ": ") +
          "shardlin." + opCodeName(in.op) + " on rank " +
          std::to_string(comm.rank()));
  }
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// Plan
//===----------------------------------------------------------------------===//

Plan::~Plan() = default;

Status Plan::build(const Program &program, int rank, int worldSize,
                   Allocator &allocator, std::unique_ptr<Plan> &out) {
  SHARDLIN_RETURN_IF_ERROR(program.validate());
  if (worldSize < 1)
    return Status::error("world size must be >= 1, got " +
                         std::to_string(worldSize));
  if (program.worldSize != 0 && program.worldSize != worldSize)
    return Status::error("the program '" + program.name + "' is sharded over " +
                         std::to_string(program.worldSize) +
                         " ranks (its placements) but the world size is " +
                         std::to_string(worldSize));
  if (rank < 0 || rank >= worldSize)
    return Status::error("rank " + std::to_string(rank) +
                         " is out of range for world size " +
                         std::to_string(worldSize));
  std::unique_ptr<Plan> plan(new Plan());
  plan->rank_ = rank;
  plan->impl_ = std::make_unique<Impl>();
  plan->impl_->program = program;
  plan->impl_->worldSize = worldSize;
  SHARDLIN_RETURN_IF_ERROR(plan->impl_->resolve(rank, allocator));
  out = std::move(plan);
  return Status::ok();
}

size_t Plan::numArgs() const { return impl_->program.args.size(); }
size_t Plan::numResults() const { return impl_->program.results.size(); }
const std::vector<int64_t> &Plan::argShape(size_t i) const {
  return impl_->shapes[i];
}
const std::vector<int64_t> &Plan::resultShape(size_t i) const {
  return impl_->shapes[impl_->program.results[i]];
}
DType Plan::argType(size_t i) const { return impl_->program.values[i].dtype; }
DType Plan::resultType(size_t i) const {
  return impl_->program.values[impl_->program.results[i]].dtype;
}

Status Plan::run(Communicator &comm, GemmBackend &gemm,
                 const std::vector<const void *> &args,
                 const std::vector<void *> &results) {
  if (!impl_->hostOps)
    impl_->hostOps = createHostLocalOps();
  return run(comm, gemm, *impl_->hostOps, args, results);
}

Status Plan::run(Communicator &comm, GemmBackend &gemm, LocalOps &ops,
                 const std::vector<const void *> &args,
                 const std::vector<void *> &results) {
  Impl &im = *impl_;
  if (!(comm.device() == gemm.device()) || !(ops.device() == gemm.device()))
    return Status::error("the communicator (" + deviceName(comm.device()) +
                         "), GEMM backend (" + deviceName(gemm.device()) +
                         ") and local ops (" + deviceName(ops.device()) +
                         ") must be on one device");
  if (args.size() != im.program.args.size())
    return Status::error("expected " + std::to_string(im.program.args.size()) +
                         " arguments, got " + std::to_string(args.size()));
  if (results.size() != im.program.results.size())
    return Status::error("expected " +
                         std::to_string(im.program.results.size()) +
                         " results, got " + std::to_string(results.size()));
  if (comm.rank() != rank_ || comm.worldSize() != im.worldSize)
    return Status::error("plan built for rank " + std::to_string(rank_) +
                         " of " + std::to_string(im.worldSize) +
                         " run on rank " + std::to_string(comm.rank()) +
                         " of " + std::to_string(comm.worldSize()));
  for (size_t i = 0; i < args.size(); ++i)
    im.rootPtr[i] = const_cast<void *>(args[i]);
  for (size_t v = im.program.args.size(); v < im.rootPtr.size(); ++v)
    im.rootPtr[v] = im.boundResult[v] >= 0 ? results[im.boundResult[v]]
                                           : im.buffers[v].data();
  SHARDLIN_RETURN_IF_ERROR(im.execute(comm, gemm, ops));
  for (size_t i = 0; i < results.size(); ++i) {
    int v = im.program.results[i];
    if (im.boundResult[im.root[v]] == static_cast<int>(i))
      continue;
    size_t bytes = im.numElements(v) * im.eltSize(v);
    SHARDLIN_RETURN_IF_ERROR(
        ops.copyRows(im.ptr(v), bytes, results[i], bytes, 1, bytes));
  }
  return Status::ok();
}

} // namespace shardlin::rt
