//===- ImportShardPropagation.cpp - Shardings from the users back ---------===//
//
// The import's walk gives a value without an annotation the layout of its
// producer (forward). Where the module states, further down, the layout a
// value's users take it in (`shard.shard ... annotate_for_users`, or a
// stated sharding of an elementwise result), the producer can often give
// that layout directly: a col-wise linear on the rank's rows produces the
// rank's features of all rows (`rows -> features`) as cheaply as its rows.
// Taking the users' layout there saves the reshard (an all_gather and a
// local_chunk) at the annotation, and lets the pair of linears lower as one
// block, whatever annotations the module carries between them.
//
// propagateBackward() computes, before the walk, the layout each such
// unannotated value is preferred in (FunctionImporter::preferred_):
// - a stated layout, split, is needed by the value it annotates (through
//   shard.shard ops), and an elementwise op needs it of its operands
//   (vectors broadcast along the last dim and values built anywhere
//   excepted);
// - a value keeps a need only where all its uses take it in that layout (an
//   annotation of that layout, or an elementwise op whose result needs it),
//   the other operands of its elementwise producer are in that layout,
//   replicated or built anywhere (no conflict), and a linalg.matmul that
//   produces it gives that layout directly: x on its rows, the weight split
//   along N into the needed chunks (no N-D reshape around it);
// - what fails is dropped, until nothing changes.
// A preferred layout is what the walk gives the value where its producer
// can; it never adds a reshard (FunctionImporter::define). A stated layout
// always wins.
//
// The walk marks each all_gather that a stated layout forces
// (kStatedReshardAttrName, markStatedReshards): --lower-sharded-linear
// reports those its simplifications leave with explain=true, and drops the
// mark.
//
//===----------------------------------------------------------------------===//

#include "ImportShardInternal.h"
#include "shardlin/Dialect/Shardlin/IR/OpAttrs.h"

#include "mlir/IR/Diagnostics.h"

using namespace mlir;
using namespace mlir::shardlin;
using namespace mlir::shardlin::import;

namespace {

/// The layout the module states for the result of shard.shard `op`.
std::optional<ValueLayout> shardLayout(shard::ShardOp op, const Grid &grid,
                                       const FunctionImporter &importer) {
  if (!op.getAnnotateForUsers())
    return importer.statedLayout(op.getResult());
  // Diagnosed by the walk, where it matters.
  ScopedDiagnosticHandler silence(op.getContext(),
                                  [](Diagnostic &) { return success(); });
  FailureOr<ValueLayout> l =
      parseSharding(op.getSharding(), op.getResult().getType(), grid, op);
  if (failed(l))
    return std::nullopt;
  return *l;
}

/// Whether `operand` of elementwise `op` is a vector broadcast along the
/// last dim (which the walk takes whole, or its chunk of the features).
bool isVectorOperand(Operation *op, OpOperand &operand) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  return linalgOp && linalgOp.isDpsInput(&operand) &&
         !linalgOp.getMatchingIndexingMap(&operand).isIdentity() &&
         isa<ShapedType>(operand.get().getType());
}

/// The tensor operands of elementwise `op` that take its layout.
SmallVector<Value> layoutOperands(Operation *op) {
  SmallVector<Value> values;
  for (OpOperand &operand : op->getOpOperands())
    if (isa<RankedTensorType>(operand.get().getType()) &&
        !isVectorOperand(op, operand) && !isBuildableAnywhere(operand.get()))
      values.push_back(operand.get());
  return values;
}

} // namespace

/// The layout the walk will give `v` from its producers, where that follows
/// from the stated layouts alone (arguments, annotations, elementwise ops,
/// linears); nullopt where it does not.
std::optional<ValueLayout>
FunctionImporter::predictedLayout(
    Value v, llvm::DenseMap<Value, std::optional<ValueLayout>> &memo) {
  if (std::optional<ValueLayout> stated = statedLayout(v))
    return stated;
  if (isa<BlockArgument>(v))
    return ValueLayout::replicated();
  if (auto it = memo.find(v); it != memo.end())
    return it->second;
  memo[v] = std::nullopt; // Cycles cannot occur in one block; be safe.
  std::optional<ValueLayout> result;
  Operation *def = v.getDefiningOp();
  if (auto shardOp = dyn_cast<shard::ShardOp>(def)) {
    // Its users take the value in the layout it states.
    result = shardOp.getAnnotateForUsers()
                 ? shardLayout(shardOp, grid_, *this)
                 : predictedLayout(shardOp.getSrc(), memo);
  } else if (isElementwise(def) && !isBuildableAnywhere(v)) {
    // A split operand gives its layout (split operands agree, or the walk
    // reports a conflict); replicated ones only if all are known.
    bool known = true;
    for (Value operand : layoutOperands(def)) {
      std::optional<ValueLayout> l = predictedLayout(operand, memo);
      known &= l.has_value();
      if (l && !l->isReplicated()) {
        result = l;
        break;
      }
    }
    if (!result && known)
      result = ValueLayout::replicated();
  } else if (auto matmul = dyn_cast<linalg::MatmulOp>(def)) {
    result = predictedLinearLayout(matmul, memo);
  }
  memo[v] = result;
  return result;
}

/// The layout of matmul `op`'s result by the linear's table
/// (docs/interop.md, "The linear's layouts"), where x's is predicted.
std::optional<ValueLayout> FunctionImporter::predictedLinearLayout(
    linalg::MatmulOp op,
    llvm::DenseMap<Value, std::optional<ValueLayout>> &memo) {
  FailureOr<LinearMatch> m;
  {
    ScopedDiagnosticHandler silence(op.getContext(),
                                    [](Diagnostic &) { return success(); });
    m = matchMatmul(op);
  }
  if (failed(m) || m->x.getDefiningOp<tensor::CollapseShapeOp>())
    return std::nullopt;
  std::optional<ValueLayout> xl = predictedLayout(m->x, memo);
  std::optional<ValueLayout> wl = statedLayout(m->weight);
  if (!xl)
    return std::nullopt;
  if (!wl || wl->isReplicated() || xl->dim == 0)
    return xl; // A local matmul on x's rows, or a rows -> rows linear.
  if (!xl->isReplicated() || wl->dim != (m->kn ? 1 : 0))
    return ValueLayout::replicated(); // A K split's sum, whole.
  auto type = cast<RankedTensorType>(op.getResult(0).getType());
  return splitLayout(op.getContext(), grid_, type.getRank() - 1,
                     type.getShape().back(),
                     wl->chunks.getBoundsFor(type.getShape().back()));
}

/// Whether matmul `op` gives its result in `want` directly: x on its rows,
/// the weight split along N into want's chunks.
bool FunctionImporter::producesDirectly(
    linalg::MatmulOp op, const ValueLayout &want,
    llvm::DenseMap<Value, std::optional<ValueLayout>> &memo) {
  auto resultType = cast<RankedTensorType>(op.getResult(0).getType());
  if (want.isReplicated() || want.dim != resultType.getRank() - 1)
    return false;
  FailureOr<LinearMatch> m;
  {
    // The walk reports what does not match, once.
    ScopedDiagnosticHandler silence(op.getContext(),
                                    [](Diagnostic &) { return success(); });
    m = matchMatmul(op);
  }
  if (failed(m) || m->x.getDefiningOp<tensor::CollapseShapeOp>())
    return false;
  std::optional<ValueLayout> wl = statedLayout(m->weight);
  if (!wl || wl->isReplicated() || wl->dim != (m->kn ? 1 : 0))
    return false;
  const int64_t n = resultType.getShape().back();
  if (!wl->chunks.sameChunks(want.chunks, n))
    return false;
  std::optional<ValueLayout> xl = predictedLayout(m->x, memo);
  return xl && !xl->isReplicated() && xl->dim == 0;
}

void FunctionImporter::propagateBackward() {
  // The needs, from every stated layout back through shard.shard and
  // elementwise ops; a value needed in two layouts is needed in none.
  llvm::DenseMap<Value, ValueLayout> need;
  llvm::DenseSet<Value> conflicting;
  SmallVector<std::pair<Value, ValueLayout>> work;
  func_.walk([&](shard::ShardOp op) {
    if (std::optional<ValueLayout> l = shardLayout(op, grid_, *this);
        l && !l->isReplicated())
      work.push_back({op.getSrc(), *l});
  });
  while (!work.empty()) {
    auto [v, l] = work.pop_back_val();
    if (std::optional<ValueLayout> stated = statedLayout(v);
        stated && *stated != l)
      continue;
    Operation *def = v.getDefiningOp();
    if (!def)
      continue;
    if (auto shardOp = dyn_cast<shard::ShardOp>(def)) {
      work.push_back({shardOp.getSrc(), l});
      continue;
    }
    if (conflicting.contains(v))
      continue;
    auto [it, inserted] = need.try_emplace(v, l);
    if (!inserted) {
      if (it->second != l) {
        conflicting.insert(v);
        need.erase(it);
      }
      continue;
    }
    if (isElementwise(def) && !isBuildableAnywhere(v))
      for (Value operand : layoutOperands(def))
        work.push_back({operand, l});
  }
  for (Value v : conflicting)
    need.erase(v);

  // Keep what the walk can give without a reshard, until nothing changes.
  llvm::DenseMap<Value, std::optional<ValueLayout>> memo;
  auto usesTakeIt = [&](Value v, const ValueLayout &l) {
    for (OpOperand &use : v.getUses()) {
      Operation *user = use.getOwner();
      if (auto shardOp = dyn_cast<shard::ShardOp>(user)) {
        if (shardLayout(shardOp, grid_, *this) != std::optional(l))
          return false;
        continue;
      }
      if (!isElementwise(user) || isVectorOperand(user, use))
        return false;
      auto it = need.find(user->getResult(0));
      if (it == need.end() || it->second != l)
        return false;
    }
    return true;
  };
  auto producerGivesIt = [&](Value v, const ValueLayout &l) {
    Operation *def = v.getDefiningOp();
    if (auto matmul = dyn_cast<linalg::MatmulOp>(def))
      return producesDirectly(matmul, l, memo);
    if (!isElementwise(def))
      return false;
    for (Value operand : layoutOperands(def)) {
      if (auto it = need.find(operand); it != need.end() && it->second == l)
        continue;
      std::optional<ValueLayout> other = statedLayout(operand);
      if (!other && isa<BlockArgument>(operand))
        other = ValueLayout::replicated();
      if (!other || (!other->isReplicated() && *other != l))
        return false;
    }
    return true;
  };
  while (true) {
    SmallVector<Value> dropped;
    for (auto &[v, l] : need)
      if (!usesTakeIt(v, l) || !producerGivesIt(v, l))
        dropped.push_back(v);
    if (dropped.empty())
      break;
    for (Value v : dropped)
      need.erase(v);
  }
  for (auto &[v, l] : need)
    preferred_[v] = l;
}

std::optional<ValueLayout> FunctionImporter::statedLayout(Value v) const {
  auto it = declared_.find(v);
  if (it == declared_.end())
    return std::nullopt;
  return it->second;
}

void FunctionImporter::markStatedReshards(Operation *after, Value v,
                                          const ValueLayout &from,
                                          const ValueLayout &to,
                                          bool forUsers) {
  Block *block = b_.getInsertionBlock();
  if (!block)
    return;
  auto begin = after ? std::next(after->getIterator()) : block->begin();
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "the sharding stated for "
     << (forUsers ? "the users of this value" : "this value") << " ("
     << describe(to) << "; its producer gives " << describe(from) << ")";
  for (Operation &op : llvm::make_range(begin, block->end()))
    if (isa<AllGatherOp>(op))
      op.setAttr(kStatedReshardAttrName,
                 StringAttr::get(v.getContext(), os.str()));
}
