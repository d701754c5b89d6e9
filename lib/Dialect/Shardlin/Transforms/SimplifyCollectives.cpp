//===- SimplifyCollectives.cpp - Exact rewrites of lowered collectives ----===//
//
// The lowering emits each linear's collectives and the import each value's
// reshards one at a time; where they meet, the program can move fewer
// bytes. After the patterns of --lower-sharded-linear, on every block:
//
// - all_reduce(p), whose every user takes the rank's rows by one spec S
//   (local_chunk S along dim 0), is reduce_scatter(p, S): the same sum, of
//   which each rank receives only the part it keeps (half the bytes of the
//   bandwidth-optimal all_reduce);
// - local_chunk(all_gather(u, S), S) is u: the gather puts every rank's u at
//   the place of its own chunk, which the local_chunk takes back;
// - all_gather(local_chunk(v, S), S) is v when v is the same on every rank
//   (a replicated argument, or the result of an all_gather or all_reduce):
//   the chunks of one tensor, put together;
// - a collective, local_chunk or local_shard identical to an earlier one of
//   the same block (same operands, attributes and types) is that one; so are
//   the reshapes in front of them (each col-wise linear collapses an N-D x
//   to rows before gathering it).
//
// A collective that carries the lowering's choices for the runtime (a fused
// block's all_gather with `overlap_chunks`) is left as it is.
//
// Each rewrite gives every rank the same values as before, for any chunks
// (uneven, empty, permuted). They apply only where the chunked dim is static
// and no `bounds` operand is present: a collective that stacks a dynamic dim
// uses the blocks of the ranks' run-time sizes, which a local_chunk (the
// chunk rule over the dim's size) does not.
//
//===----------------------------------------------------------------------===//

#include "SimplifyCollectives.h"

#include "shardlin/Dialect/Shardlin/IR/ArgAttrs.h"
#include "shardlin/Dialect/Shardlin/IR/OpAttrs.h"
#include "shardlin/Dialect/Shardlin/IR/ShardlinOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace mlir::shardlin;
using namespace mlir::shardlin::detail;

namespace {

/// Whether `a` (of a tensor whose dim `a.dim` has static size `n`) and `b`
/// give every rank the same part.
bool sameSpec(ChunkAttr a, ChunkAttr b, int64_t n) {
  return a.getDim() == b.getDim() && !ShapedType::isDynamic(n) &&
         a.sameChunks(b, n);
}

/// Whether `v` has the same value on every rank.
bool isReplicatedValue(Value v) {
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    auto func = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
    return func && arg.getOwner()->isEntryBlock() &&
           func.getArgAttr(arg.getArgNumber(), kReplicatedArgAttrName);
  }
  return isa_and_present<AllGatherOp, AllReduceOp>(v.getDefiningOp());
}

/// Whether `op` carries a choice of the lowering that the runtime reads
/// (a fused block's all_gather that starts an overlapped pipeline:
/// `shardlin.lowering = {overlap_chunks = N}`): left as it is.
bool isPinned(Operation *op) { return op->hasAttr("shardlin.lowering"); }

/// all_reduce whose users are all local_chunk of one spec: reduce_scatter.
bool rewriteAllReduce(AllReduceOp op, SimplifiedCollectives &stats) {
  if (op.getResult().use_empty())
    return false;
  auto type = cast<RankedTensorType>(op.getType());
  LocalChunkOp first;
  for (Operation *user : op.getResult().getUsers()) {
    auto chunk = dyn_cast<LocalChunkOp>(user);
    if (!chunk)
      return false;
    ChunkAttr along = chunk.getAlong();
    // The rows (dim 0), as every reduce_scatter the lowering emits splits.
    if (along.getNumChunks() != static_cast<int64_t>(op.getWorldSize()) ||
        along.getDim() != 0)
      return false;
    const int64_t n = type.getShape()[along.getDim()];
    if (ShapedType::isDynamic(n))
      return false;
    if (!first) {
      first = chunk;
      continue;
    }
    if (!sameSpec(first.getAlong(), along, n) ||
        first.getType() != chunk.getType())
      return false;
  }
  OpBuilder b(op);
  auto scatter = ReduceScatterOp::create(b, op.getLoc(), first.getType(),
                                         op.getInput(), first.getAlong());
  for (Operation *user : llvm::make_early_inc_range(op.getResult().getUsers())) {
    user->getResult(0).replaceAllUsesWith(scatter.getResult());
    user->erase();
  }
  op.erase();
  ++stats.reduceScatters;
  return true;
}

/// local_chunk(all_gather(u, S), S): u.
bool rewriteChunkOfGather(LocalChunkOp op, SimplifiedCollectives &stats) {
  auto gather = op.getSource().getDefiningOp<AllGatherOp>();
  if (!gather || isPinned(gather) || gather.getBounds() ||
      gather.getInput().getType() != op.getType())
    return false;
  auto type = cast<RankedTensorType>(gather.getType());
  ChunkAttr along = gather.getAlong();
  if (!sameSpec(along, op.getAlong(), type.getShape()[along.getDim()]))
    return false;
  op.getResult().replaceAllUsesWith(gather.getInput());
  op.erase();
  ++stats.roundTrips;
  return true;
}

/// all_gather(local_chunk(v, S), S) of a replicated v: v.
bool rewriteGatherOfChunk(AllGatherOp op, SimplifiedCollectives &stats) {
  auto chunk = op.getInput().getDefiningOp<LocalChunkOp>();
  if (!chunk || isPinned(op) || op.getBounds() ||
      chunk.getSource().getType() != op.getType() ||
      !isReplicatedValue(chunk.getSource()))
    return false;
  auto type = cast<RankedTensorType>(op.getType());
  ChunkAttr along = op.getAlong();
  if (!sameSpec(along, chunk.getAlong(), type.getShape()[along.getDim()]))
    return false;
  op.getResult().replaceAllUsesWith(chunk.getSource());
  op.erase();
  ++stats.roundTrips;
  return true;
}

/// The ops merged with an identical earlier one: the collectives and local
/// parts, and the reshapes (and their sizes) that the lowering builds in
/// front of them for each linear (an N-D x collapsed to rows once per
/// linear that reads it).
bool isDeduplicated(Operation *op) {
  return isa<AllGatherOp, AllToAllOp, ReduceScatterOp, AllReduceOp,
             LocalChunkOp, LocalShardOp, tensor::CollapseShapeOp,
             tensor::ExpandShapeOp, tensor::DimOp>(op) &&
         !isPinned(op);
}

/// Replaces every deduplicated op of `block` that repeats an earlier one.
bool deduplicate(Block &block, SimplifiedCollectives &stats) {
  bool changed = false;
  llvm::DenseMap<llvm::hash_code, SmallVector<Operation *, 2>> seen;
  for (Operation &op : llvm::make_early_inc_range(block)) {
    if (!isDeduplicated(&op))
      continue;
    llvm::hash_code hash = OperationEquivalence::computeHash(
        &op, OperationEquivalence::directHashValue,
        OperationEquivalence::ignoreHashValue,
        OperationEquivalence::IgnoreLocations);
    SmallVector<Operation *, 2> &same = seen[hash];
    Operation *earlier = nullptr;
    for (Operation *candidate : same)
      if (OperationEquivalence::isEquivalentTo(
              candidate, &op, OperationEquivalence::IgnoreLocations))
        earlier = candidate;
    if (!earlier) {
      same.push_back(&op);
      continue;
    }
    op.replaceAllUsesWith(earlier);
    op.erase();
    ++stats.duplicates;
    changed = true;
  }
  return changed;
}

/// One sweep of the three rewrites over `block`.
bool rewriteBlock(Block &block, SimplifiedCollectives &stats) {
  bool changed = false;
  // An all_reduce's rewrite erases its users, which come after it: those
  // first, out of the walk.
  SmallVector<AllReduceOp> reduces(block.getOps<AllReduceOp>());
  for (AllReduceOp reduce : reduces)
    changed |= rewriteAllReduce(reduce, stats);
  // These erase only the op at hand.
  for (Operation &op : llvm::make_early_inc_range(block)) {
    if (auto chunk = dyn_cast<LocalChunkOp>(op))
      changed |= rewriteChunkOfGather(chunk, stats);
    else if (auto gather = dyn_cast<AllGatherOp>(op))
      changed |= rewriteGatherOfChunk(gather, stats);
  }
  return changed;
}

/// Drops the collectives and local parts that nothing reads any more (all
/// pure), users first.
void eraseDead(Block &block) {
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(block)))
    if (isDeduplicated(&op) && isOpTriviallyDead(&op))
      op.erase();
}

} // namespace

SimplifiedCollectives
mlir::shardlin::detail::simplifyCollectives(Operation *root) {
  SimplifiedCollectives stats;
  SmallVector<Block *> blocks;
  root->walk([&](Block *block) { blocks.push_back(block); });
  for (Block *block : blocks) {
    // Each rewrite removes an op, so this ends; a rewrite can expose
    // another (a duplicate's users now share one gather).
    bool changed = true;
    while (changed) {
      changed = deduplicate(*block, stats);
      changed |= rewriteBlock(*block, stats);
      eraseDead(*block);
    }
  }
  return stats;
}

void mlir::shardlin::detail::reportStatedReshards(Operation *root,
                                                  bool explain) {
  root->walk([&](AllGatherOp op) {
    auto text = op->getAttrOfType<StringAttr>(kStatedReshardAttrName);
    if (!text)
      return;
    op->removeAttr(kStatedReshardAttrName);
    if (!explain)
      return;
    InFlightDiagnostic r = op.emitRemark();
    r << "this all_gather is the cost of " << text.getValue()
      << ": without it the value stays in its producer's layout";
    // Every rank sends its chunk to the W - 1 others: the largest chunk.
    auto type = cast<RankedTensorType>(op.getType());
    ChunkAttr along = op.getAlong();
    if (!type.hasStaticShape())
      return;
    const int64_t n = type.getShape()[along.getDim()];
    SmallVector<int64_t> bounds = along.getBoundsFor(n);
    int64_t chunk = 0;
    for (size_t c = 0; c + 1 < bounds.size(); ++c)
      chunk = std::max(chunk, bounds[c + 1] - bounds[c]);
    const int64_t row = type.getNumElements() / std::max<int64_t>(n, 1);
    const int64_t bytes = chunk * row * (along.getNumChunks() - 1) *
                          int64_t(type.getElementTypeBitWidth() / 8);
    r << " (up to " << bytes << " bytes sent per rank)";
  });
}
