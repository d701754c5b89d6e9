//===- ViewOps.cpp - Views of values, chunks and constants ----------------===//
//
// The ops whose result is (mostly) a view of their operand: a sharded
// argument's local chunk, a reshape, this rank's chunk along a dim (a copy
// only when the chunk is not contiguous; the same for a local_slice's
// per-rank range), a sharded result's chunk, and the
// rank's part of a program constant (a copy).
//
//===----------------------------------------------------------------------===//

#include "exec/OpKernels.h"

namespace shardlin::rt {

Status resolveLocalShard(OpResolveContext &ctx) {
  ctx.result = ctx.operandShape(0);
  ctx.viewOperand(0, 0);
  return Status::ok();
}

namespace {

/// The row blocks of a reshape's result: blocks of the operand's dim 0
/// stay blocks of the result's dim 0 when every block holds whole rows of
/// the result (splitting rows into sequences, [W*B*S, F] -> [W*B, S, F], or
/// merging them back), each block of the same elements; none otherwise.
/// With the reshape's groups (Instr::reshapeGroups) they are rescaled by
/// the other dims of dim 0's group, which holds even where a dim outside
/// it is 0 (a rank without heads); else by the rows' element counts.
RowBlocks reshapedBlocks(const RowBlocks &in,
                         const std::vector<int64_t> &groups,
                         const std::vector<int64_t> &from,
                         const std::vector<int64_t> &to) {
  if (in.dim != 0 || to.empty())
    return {};
  // Each block's rows times `inner` over `outer`.
  int64_t inner = 1, outer = 1;
  if (!groups.empty()) {
    const bool collapse = from.size() > to.size();
    const std::vector<int64_t> &big = collapse ? from : to;
    int64_t &scale = collapse ? inner : outer;
    for (size_t d = 1; d < groups.size(); ++d)
      if (groups[d] == 0)
        scale *= big[d];
  } else {
    for (size_t d = 1; d < from.size(); ++d)
      inner *= from[d];
    for (size_t d = 1; d < to.size(); ++d)
      outer *= to[d];
  }
  if (outer == 0)
    return {};
  RowBlocks out{0, {}};
  for (int64_t rows : in.sizes) {
    // The reshape checked the element count: rows * inner fits in int64.
    if ((rows * inner) % outer != 0)
      return {};
    out.sizes.push_back(rows * inner / outer);
  }
  return out;
}

/// Dynamic result dim `d` of a reshape with groups (Instr::reshapeGroups).
/// Expanding: operand dim g (its group's) over the product of the group's
/// other result dims, when those are static; left dynamic (inferred from
/// the element count) otherwise, or when they hold no elements. Collapsing:
/// the product of its group's operand dims.
Status sizeFromGroup(OpResolveContext &ctx, size_t d) {
  const std::vector<int64_t> &groups = ctx.in.reshapeGroups;
  const std::vector<int64_t> &src = ctx.operandShape(0);
  const std::vector<int64_t> &type = ctx.resultType();
  if (src.size() > type.size()) {
    int64_t n = 1;
    for (size_t i = 0; i < groups.size(); ++i)
      if (groups[i] == static_cast<int64_t>(d) &&
          __builtin_mul_overflow(n, src[i], &n))
        return ctx.error("a reshape of " + formatShape(src) +
                         " overflows a 64-bit size");
    ctx.result[d] = n;
    return Status::ok();
  }
  const int64_t g = groups[d];
  int64_t others = 1;
  for (size_t e = 0; e < groups.size(); ++e) {
    if (e == d || groups[e] != g)
      continue;
    if (type[e] == kDynamic || __builtin_mul_overflow(others, type[e], &others))
      return Status::ok();
  }
  const int64_t n = src[size_t(g)];
  if (others == 0)
    return Status::ok();
  if (n % others != 0)
    return ctx.error("reshape from " + formatShape(src) + " to " +
                     formatShape(type) + ": operand dim " + std::to_string(g) +
                     " (" + std::to_string(n) + ") is not a multiple of " +
                     std::to_string(others));
  ctx.result[d] = n / others;
  return Status::ok();
}

} // namespace

Status resolveReshape(OpResolveContext &ctx) {
  ctx.result = ctx.resultType();
  // Dynamic dims come from the second operand's same dims, if there is one
  // (an expand_shape's output sizes); one left is inferred from the count.
  int inferred = -1;
  for (size_t d = 0; d < ctx.result.size(); ++d) {
    if (ctx.result[d] == kDynamic && ctx.in.operands.size() == 2)
      ctx.result[d] = ctx.operandShape(1)[d];
    if (ctx.result[d] == kDynamic && !ctx.in.reshapeGroups.empty())
      SHARDLIN_RETURN_IF_ERROR(sizeFromGroup(ctx, d));
    if (ctx.result[d] != kDynamic)
      continue;
    if (inferred >= 0)
      return ctx.error("a reshape to " + formatShape(ctx.resultType()) +
                       " has more than one dynamic dim and no value to take "
                       "them from");
    inferred = static_cast<int>(d);
  }
  const int64_t count = ctx.plan.numElements(ctx.in.operands[0]);
  if (inferred >= 0) {
    // The product of the other dims (checked like any shape).
    std::vector<int64_t> others = ctx.result;
    others[inferred] = 1;
    int64_t known = 0;
    Status sized =
        checkedNumElements(others, known, ctx.plan.eltSize(ctx.in.result));
    if (!sized)
      return ctx.error(sized.message());
    if (known == 0)
      return ctx.error("cannot infer dim " + std::to_string(inferred) +
                       " of a reshape from " +
                       formatShape(ctx.operandShape(0)) + " to " +
                       formatShape(ctx.resultType()) +
                       ": its other dims hold no elements");
    if (count % known != 0)
      return ctx.error("reshape from " + formatShape(ctx.operandShape(0)) +
                       " to " + formatShape(ctx.resultType()) +
                       ": the element count " + std::to_string(count) +
                       " is not a multiple of " + std::to_string(known));
    ctx.result[inferred] = count / known;
  }
  int64_t n = 0;
  Status sized =
      checkedNumElements(ctx.result, n, ctx.plan.eltSize(ctx.in.result));
  if (!sized)
    return ctx.error(sized.message());
  if (n != count)
    return ctx.error("reshape from " + formatShape(ctx.operandShape(0)) +
                     " to " + formatShape(ctx.result) +
                     " changes the element count");
  ctx.resultBlocks = reshapedBlocks(ctx.operandBlocks(0), ctx.in.reshapeGroups,
                                    ctx.operandShape(0), ctx.result);
  ctx.viewOperand(0, 0);
  return Status::ok();
}

Status resolveLocalChunk(OpResolveContext &ctx) {
  const std::vector<int64_t> &src = ctx.operandShape(0);
  DimSplit v = splitAround(src, ctx.in.along.dim);
  const ChunkSpec &spec = ctx.in.along;
  // Static sizes were checked against the bounds by Program::validate.
  if (!spec.bounds.empty())
    if (std::string problem = checkBounds(spec.bounds, spec.numChunks(), v.n);
        !problem.empty())
      return ctx.error("the operand " + formatShape(src) + ": " + problem);
  ChunkLayout layout(v.n, spec);
  ctx.step.chunkView = v;
  ctx.step.chunkRange = layout.ofRank(ctx.rank);
  ctx.result = src;
  ctx.result[ctx.in.along.dim] = ctx.step.chunkRange.size;
  if (v.outer == 1)
    ctx.viewOperand(0, ctx.step.chunkRange.offset * v.inner *
                           ctx.operandEltSize(0));
  return Status::ok();
}

Status executeLocalChunk(OpExecuteContext &ctx) {
  const DimSplit &v = ctx.step.chunkView;
  const Range &r = ctx.step.chunkRange;
  if (v.outer == 1)
    return Status::ok(); // A view.
  if (v.outer == 0 || r.size == 0 || v.inner == 0)
    return Status::ok(); // Nothing to copy (and maybe null buffers).
  const size_t elt = ctx.eltSize();
  return ctx.ops.copyRows(
      ctx.operand(0) + r.offset * v.inner * elt, v.n * v.inner * elt,
      ctx.result(), r.size * v.inner * elt, v.outer, r.size * v.inner * elt);
}

/// local_slice: this rank's [b, e) of the dim, the same view or strided
/// copy of its rows as a local_chunk (executeLocalChunk), the range read
/// from the instruction's per-rank table instead of a chunk layout.
Status resolveLocalSlice(OpResolveContext &ctx) {
  const std::vector<int64_t> &src = ctx.operandShape(0);
  const size_t pairs = ctx.in.ranges.size() / 2;
  if (pairs != static_cast<size_t>(ctx.plan.worldSize))
    return ctx.error("its ranges have " + std::to_string(pairs) +
                     " pairs but the run has " +
                     std::to_string(ctx.plan.worldSize) + " ranks");
  const int64_t dim = ctx.in.sliceDim[0];
  DimSplit v = splitAround(src, dim);
  const int64_t b = ctx.in.ranges[2 * size_t(ctx.rank)];
  const int64_t e = ctx.in.ranges[2 * size_t(ctx.rank) + 1];
  if (e > v.n)
    return ctx.error("rank " + std::to_string(ctx.rank) + "'s range [" +
                     std::to_string(b) + ", " + std::to_string(e) +
                     ") exceeds dim " + std::to_string(dim) + " of " +
                     formatShape(src));
  ctx.step.chunkView = v;
  ctx.step.chunkRange = Range{b, e - b};
  ctx.result = src;
  ctx.result[size_t(dim)] = e - b;
  if (v.outer == 1)
    ctx.viewOperand(0, b * v.inner * ctx.operandEltSize(0));
  return Status::ok();
}

/// The operand, this rank's chunk of a sharded result, as it is: its size
/// along the spec's dim must be the rank's chunk's.
Status resolveFromLocal(OpResolveContext &ctx) {
  const ChunkSpec &spec = ctx.in.along;
  const std::vector<int64_t> &src = ctx.operandShape(0);
  const int64_t n = spec.bounds.back(); // verifyFromLocal: bounds are given
  const Range mine = ChunkLayout(n, spec).ofRank(ctx.rank);
  const int64_t size = src[static_cast<size_t>(spec.dim)];
  if (size != mine.size)
    return ctx.error("rank " + std::to_string(ctx.rank) + "'s operand " +
                     formatShape(src) + " has " + std::to_string(size) +
                     " elements along dim " + std::to_string(spec.dim) +
                     ", but its chunk of the sharded result (of " +
                     std::to_string(n) + ") has " + std::to_string(mine.size));
  ctx.result = src;
  ctx.resultBlocks = ctx.operandBlocks(0);
  ctx.viewOperand(0, 0);
  return Status::ok();
}

/// constant: the rank's part of an entry of the program's constants table
/// (Program::constants), all of it or, for a split one, the rank's chunk
/// along the spec's dim. It is copied from the table into the value's
/// storage at every run (host memory into the plan's device: copyRows reads
/// host memory on every device), so that an op that writes its result in
/// place over it cannot change what the next run reads; only the rank's
/// chunk is copied, a strided copy of its rows when the split dim is not
/// the outermost.
const Constant &constantOf(const Plan::Impl &plan, const Instr &in) {
  // verifyConstant checked the index.
  return plan.program.constants[static_cast<size_t>(in.constantIndex[0])];
}

Status resolveConstant(OpResolveContext &ctx) {
  const Constant &c = constantOf(ctx.plan, ctx.in);
  ctx.result = c.shape;
  if (c.sharded) {
    // Program::validate checked the spec against the shape.
    const size_t dim = static_cast<size_t>(c.sharding.dim);
    ChunkLayout layout(c.shape[dim], c.sharding);
    ctx.step.chunkRange = layout.ofRank(ctx.rank);
    ctx.result[dim] = ctx.step.chunkRange.size;
  }
  return ctx.checkSize(ctx.result);
}

Status executeConstant(OpExecuteContext &ctx) {
  const Constant &c = constantOf(ctx.plan, ctx.in);
  if (!c.sharded) {
    if (c.bytes.empty())
      return Status::ok();
    return ctx.ops.copyRows(c.bytes.data(), c.bytes.size(), ctx.result(),
                            c.bytes.size(), 1, c.bytes.size());
  }
  // The chunk [offset, offset + size) of the split dim in every row of the
  // dims before it: rows x (size x the inner dims' elements) bytes, read at
  // a stride of the whole dim.
  const size_t dim = static_cast<size_t>(c.sharding.dim);
  const Range chunk = ctx.step.chunkRange;
  const int64_t inner = product(c.shape, dim + 1, c.shape.size()) *
                        static_cast<int64_t>(dtypeSize(c.dtype));
  const int64_t rows = product(c.shape, 0, dim);
  const size_t rowBytes = static_cast<size_t>(chunk.size * inner);
  if (rows == 0 || rowBytes == 0)
    return Status::ok(); // An empty chunk.
  return ctx.ops.copyRows(c.bytes.data() + chunk.offset * inner,
                          static_cast<size_t>(c.shape[dim] * inner),
                          ctx.result(), rowBytes, rows, rowBytes);
}

std::vector<OpKernel> viewKernels() {
  return {{OpCode::LocalShard, resolveLocalShard, executeNothing},
          {OpCode::Reshape, resolveReshape, executeNothing},
          {OpCode::LocalChunk, resolveLocalChunk, executeLocalChunk},
          {OpCode::FromLocal, resolveFromLocal, executeNothing},
          {OpCode::Constant, resolveConstant, executeConstant},
          {OpCode::LocalSlice, resolveLocalSlice, executeLocalChunk}};
}

} // namespace shardlin::rt
