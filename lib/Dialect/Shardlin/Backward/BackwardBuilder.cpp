//===- BackwardBuilder.cpp - The backward of a lowered function -----------===//
//
// Reverse mode over the SPMD program that --lower-sharded-linear made of a
// function. Differentiating the lowered program rather than shardlin.linear
// makes the backward the dual of whatever the lowering chose (strategy, block
// fusion), and makes the forward values it needs (the gathered X of a block,
// its pre-activations) plain SSA values that the forward can return.
//
// The adjoint of each op, for the gradient g of its result:
//   all_gather along S       reduce_scatter g along S (the rank's
//                            local_chunk of a g already summed over ranks)
//   reduce_scatter along S   all_gather g along S
//   all_to_all split S concat C   all_to_all g split C concat S
//   all_reduce               all_reduce g (a g already summed: g)
//   gemm r = op(l) op(m) + b     gemms with the other transposes; sum_rows g
//   bias_add, convert, reshapes  g, g converted, the inverse reshape
//   local_shard W            g is the rank's chunk's gradient (the result
//                            wraps it with from_local)
//   from_local l (returned)  the rank's chunk of the result's gradient
//   local_chunk b along S    b's gradient is the all_gather along S of
//                            every rank's chunk gradient
//   elementwise ops          ElementwiseAdjoint.cpp; an input read as one
//                            value per row (a norm's R x 1 statistics) gets
//                            the sum of each row of its contribution
//   r = init + sum of each row of x (a norm's reduction over the last dim)
//                            dx = dr broadcast along the rows, dinit = dr
//                            (a maximum, softmax's, is refused)
//   attention q, k, v        attention_grad wrt q, k, v (the forward's head
//                            tables; the mask is not differentiated)
//   rope x                   rope g {inverse} (cos, sin not differentiated)
//   local_slice t (replicated)   g placed at the rank's rows of a zero t
//                            (shardlin.local_place), summed over ranks as t
//                            is replicated: a kv head that several ranks
//                            slice gets every rank's part
// Every collective's adjoint uses the forward's chunk specs, so uneven,
// empty and permuted chunks, and rows of run-time sizes stacked in blocks,
// are exact as they are in the forward.
//
// Replicated values (a bias: the same on every rank) get the sum over ranks
// of every rank's gradient. Their uses on rank-local values contribute per
// rank; when every such value has been processed, each replicated value's
// gradient is the sum of: its contributions already summed over ranks, the
// all_reduce of the per-rank ones (or, for the sum of rows that every rank
// also gathered, the sum of the gathered rows, with no communication), and
// the all_gather of the chunks that local_chunk took.
//
// A replicated result (one tensor of the global view, the same on every
// rank: of an all_reduce, an all_gather, or ops on those and on replicated
// values) has one gradient, every rank's alike: dy is already the sum over
// ranks, and so is what the ops that computed the result from replicated
// values contribute (docs/training.md, "Replicated activations").
//
// Precision: a gradient is kept in the value's element type, except where
// it is a sum over ranks still to be reduced (the gradient of an all_gather
// result, of a replicated value): f32 for f16/bf16, rounded once after the
// reduction, as the forward's partial products are.
//
//===----------------------------------------------------------------------===//

#include "BackwardGen.h"

#include "ElementwiseAdjoint.h"
#include "shardlin/Dialect/Shardlin/Transforms/LoweringSupport.h"

#include "shardlin/Dialect/Shardlin/IR/ShardlinOps.h"
#include "shardlin/Dialect/Shardlin/Transforms/ElementwiseChains.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::shardlin;
using namespace mlir::shardlin::detail;
namespace sd = mlir::shardlin::detail;

bool sd::isCostly(Operation *op) {
  return isa_and_nonnull<AllGatherOp, AllToAllOp, ReduceScatterOp, AllReduceOp,
                         GemmOp>(op);
}

//===----------------------------------------------------------------------===//
// Forward values
//===----------------------------------------------------------------------===//

Value BackwardGen::primal(Value v) {
  if (auto arg = dyn_cast<BlockArgument>(v))
    return body.getArgument(arg.getArgNumber());
  if (Value p = primals.lookup(v))
    return p;
  Operation *def = v.getDefiningOp();
  if (isCostly(def) && req.save(v)) {
    Value a = body.addArgument(v.getType(), v.getLoc());
    saved.push_back(v);
    primals[v] = a;
    return a;
  }
  IRMapping map;
  for (Value operand : def->getOperands())
    map.map(operand, isa<tensor::DimOp>(def) && operand == def->getOperand(0)
                         ? shapeOf(operand)
                         : primal(operand));
  llvm::SetVector<Value> captured;
  getUsedValuesDefinedAbove(def->getRegions(), captured);
  for (Value c : captured)
    map.map(c, primal(c));
  Operation *copy = recompute.clone(*def, map);
  if (auto generic = dyn_cast<linalg::GenericOp>(copy))
    copy = withShapeOperand(generic, def);
  // A recomputed GEMM says so rather than repeat the forward's figures.
  if (auto lowering =
          copy->getAttrOfType<DictionaryAttr>("shardlin.lowering")) {
    SmallVector<NamedAttribute> fields;
    if (Attribute strategy = lowering.get("strategy"))
      fields.push_back(recompute.getNamedAttr("strategy", strategy));
    fields.push_back(
        recompute.getNamedAttr("recomputed", recompute.getUnitAttr()));
    copy->setAttr("shardlin.lowering", recompute.getDictionaryAttr(fields));
  }
  for (auto [r, c] : llvm::zip(def->getResults(), copy->getResults()))
    primals[r] = c;
  return primals.lookup(v);
}

/// A recomputed elementwise generic that reads no operand of its result's
/// shape (a norm's R x 1 statistics broadcast along the rows, which the
/// forward fuses into its one reader): the runtime takes an elementwise
/// op's shape from such an operand, and the backward reads the broadcast
/// from more than one op. So it reads, as zeroLike does, a value of that
/// shape by an always-true comparison: one that a reader of the forward's
/// `def` reads beside it, computed before it. `generic` as it is if it reads
/// one already or none is found.
Operation *BackwardGen::withShapeOperand(linalg::GenericOp generic,
                                         Operation *def) {
  auto linalgOp = cast<linalg::LinalgOp>(generic.getOperation());
  if (generic->getNumResults() != 1 || !isChainOp(def) ||
      llvm::any_of(linalgOp.getDpsInputOperands(), [&](OpOperand *in) {
        return linalgOp.getMatchingIndexingMap(in).isIdentity();
      }))
    return generic;
  Value v = def->getResult(0);
  auto type = cast<RankedTensorType>(v.getType());
  if (!isa<FloatType>(type.getElementType()))
    return generic;
  Value source;
  for (Operation *user : v.getUsers()) {
    auto reader = dyn_cast<linalg::LinalgOp>(user);
    if (!reader || source)
      continue;
    for (OpOperand *in : reader.getDpsInputOperands()) {
      Value o = in->get();
      auto t = dyn_cast<RankedTensorType>(o.getType());
      Operation *odef = o.getDefiningOp();
      if (o != v && t && t.getShape() == type.getShape() &&
          reader.getMatchingIndexingMap(in).isIdentity() &&
          (!odef || odef->isBeforeInBlock(def))) {
        source = o;
        break;
      }
    }
  }
  if (!source)
    return generic;
  Value full = shapeOf(source);
  MLIRContext *ctx = generic.getContext();
  SmallVector<Value> ins(generic.getInputs());
  ins.push_back(full);
  SmallVector<AffineMap> maps(generic.getIndexingMapsArray());
  maps.insert(maps.begin() + generic.getNumDpsInputs(),
              AffineMap::getMultiDimIdentityMap(type.getRank(), ctx));
  Block *oldBody = generic.getBody();
  const unsigned numIns = generic.getNumDpsInputs();
  OpBuilder::InsertionGuard guard(recompute);
  recompute.setInsertionPoint(generic);
  auto rebuilt = linalg::GenericOp::create(
      recompute, generic.getLoc(), generic->getResultTypes(), ins,
      generic.getOutputs(), maps, generic.getIteratorTypesArray(),
      [&](OpBuilder &b, Location l, ValueRange args) {
        IRMapping body;
        for (auto [i, a] : llvm::enumerate(oldBody->getArguments()))
          body.map(a, args[i < numIns ? i : i + 1]);
        for (Operation &op : oldBody->without_terminator())
          b.clone(op, body);
        Value y = body.lookupOrDefault(oldBody->getTerminator()->getOperand(0));
        Value t = arith::CmpFOp::create(b, l, arith::CmpFPredicate::AlwaysTrue,
                                        args[numIns], args[numIns]);
        Value zero = arith::ConstantOp::create(
            b, l, b.getFloatAttr(type.getElementType(), 0.0));
        linalg::YieldOp::create(
            b, l, Value(arith::SelectOp::create(b, l, t, y, zero)));
      });
  rebuilt->setAttrs(generic->getDiscardableAttrDictionary());
  generic->erase();
  return rebuilt;
}

Value BackwardGen::findShape(Value v, unsigned depth) {
  if (auto arg = dyn_cast<BlockArgument>(v))
    return body.getArgument(arg.getArgNumber());
  if (Value p = primals.lookup(v))
    return p;
  Operation *def = v.getDefiningOp();
  if (!def || depth > 32)
    return {};
  auto shape = cast<ShapedType>(v.getType()).getShape();
  auto sameShape = [&](Value o) {
    auto t = dyn_cast<RankedTensorType>(o.getType());
    return t && t.getShape() == shape;
  };
  SmallVector<Value> candidates;
  if (isa<BiasAddOp, ConvertOp>(def))
    candidates.push_back(def->getOperand(0));
  else if (auto linalgOp = dyn_cast<linalg::LinalgOp>(def)) {
    for (OpOperand *in : linalgOp.getDpsInputOperands())
      if (linalgOp.getMatchingIndexingMap(in).isIdentity())
        candidates.push_back(in->get());
  } else if (isChainOp(def))
    llvm::append_range(candidates, def->getOperands());
  for (Value c : candidates)
    if (sameShape(c))
      if (Value found = findShape(c, depth + 1))
        return found;
  return {};
}

Value BackwardGen::shapeOf(Value v) {
  if (Value found = findShape(v, 0))
    return found;
  return primal(v);
}

//===----------------------------------------------------------------------===//
// Gradients
//===----------------------------------------------------------------------===//

Type BackwardGen::accType(Value v) {
  Type elt = elementOf(v);
  if (!isHalf(elt))
    return elt;
  Operation *def = v.getDefiningOp();
  bool sumOverRanks =
      replicated.contains(v) || isa_and_nonnull<AllGatherOp>(def);
  if (auto chunk = dyn_cast_or_null<LocalChunkOp>(def))
    sumOverRanks = replicated.contains(chunk.getSource());
  return sumOverRanks ? Float32Type::get(v.getContext()) : elt;
}

Value BackwardGen::convertTo(Value c, Type elt) {
  auto type = cast<RankedTensorType>(c.getType());
  if (type.getElementType() == elt)
    return c;
  // Exact: c was widened from a value of that type.
  if (auto widened = c.getDefiningOp<ConvertOp>())
    if (widened.getInput().getType().getElementType() == elt &&
        type.getElementType().isF32())
      return widened.getInput();
  return ConvertOp::create(adjoint, loc(), type.clone(elt), c);
}

Value BackwardGen::add(Value a, Value b) {
  if (!a)
    return b;
  if (!b)
    return a;
  return arith::AddFOp::create(adjoint, loc(), a, b);
}

Value BackwardGen::asRows(Value t) {
  auto type = cast<RankedTensorType>(t.getType());
  if (type.getRank() == 2)
    return t;
  int64_t batch = 0;
  return flattenToRows(adjoint, loc(), t, batch);
}

Value BackwardGen::sumRows(Value t, Type elt) {
  auto type = cast<RankedTensorType>(t.getType());
  return SumRowsOp::create(adjoint, loc(),
                           RankedTensorType::get({type.getShape()[1]}, elt), t);
}

namespace {

/// The sizes of `shape` as tensor.empty takes them: those of `of` for the
/// dynamic dims.
SmallVector<Value> dynamicSizes(OpBuilder &b, Location loc,
                                ArrayRef<int64_t> shape, Value of) {
  SmallVector<Value> sizes;
  for (auto [i, d] : llvm::enumerate(shape))
    if (ShapedType::isDynamic(d))
      sizes.push_back(tensor::DimOp::create(b, loc, of, i));
  return sizes;
}

} // namespace

Value BackwardGen::sumEachRow(Value t) {
  auto type = cast<RankedTensorType>(t.getType());
  MLIRContext *ctx = type.getContext();
  const unsigned rank = type.getRank();
  SmallVector<int64_t> shape(type.getShape());
  shape.back() = 1;
  auto rowType = type.clone(shape);
  Value empty = tensor::EmptyOp::create(adjoint, loc(), rowType,
                                        dynamicSizes(adjoint, loc(), shape, t));
  Value zero = arith::ConstantOp::create(
      adjoint, loc(), adjoint.getFloatAttr(type.getElementType(), 0.0));
  Value init = linalg::FillOp::create(adjoint, loc(), zero, empty).result();
  SmallVector<AffineExpr> leading;
  for (unsigned d = 0; d + 1 < rank; ++d)
    leading.push_back(getAffineDimExpr(d, ctx));
  leading.push_back(getAffineConstantExpr(0, ctx));
  SmallVector<AffineMap> maps{AffineMap::getMultiDimIdentityMap(rank, ctx),
                              AffineMap::get(rank, 0, leading, ctx)};
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  iterators.back() = utils::IteratorType::reduction;
  return linalg::GenericOp::create(
             adjoint, loc(), TypeRange{rowType}, ValueRange{t},
             ValueRange{init}, maps, iterators,
             [&](OpBuilder &b, Location l, ValueRange args) {
               linalg::YieldOp::create(
                   b, l, Value(arith::AddFOp::create(b, l, args[0], args[1])));
             })
      .getResult(0);
}

Value BackwardGen::broadcastRows(Value r, Value like) {
  auto rowType = cast<RankedTensorType>(r.getType());
  auto shape = cast<RankedTensorType>(like.getType()).getShape();
  MLIRContext *ctx = rowType.getContext();
  const unsigned rank = shape.size();
  auto type = RankedTensorType::get(shape, rowType.getElementType());
  // The runtime's elementwise ops take their shape from an operand of the
  // result's shape: a backward value of `like`'s, read by an always-true
  // comparison alone (as zeroLike does), so that the result is r exactly.
  Value full = shapeOf(like);
  Value empty = tensor::EmptyOp::create(
      adjoint, loc(), type, dynamicSizes(adjoint, loc(), shape, full));
  SmallVector<AffineExpr> leading;
  for (unsigned d = 0; d + 1 < rank; ++d)
    leading.push_back(getAffineDimExpr(d, ctx));
  leading.push_back(getAffineConstantExpr(0, ctx));
  AffineMap identity = AffineMap::getMultiDimIdentityMap(rank, ctx);
  SmallVector<AffineMap> maps{AffineMap::get(rank, 0, leading, ctx), identity,
                              identity};
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             adjoint, loc(), TypeRange{type}, ValueRange{r, full},
             ValueRange{empty}, maps, iterators,
             [&](OpBuilder &b, Location l, ValueRange args) {
               Value t = arith::CmpFOp::create(
                   b, l, arith::CmpFPredicate::AlwaysTrue, args[1], args[1]);
               Value zero = arith::ConstantOp::create(
                   b, l, b.getFloatAttr(rowType.getElementType(), 0.0));
               linalg::YieldOp::create(
                   b, l,
                   Value(arith::SelectOp::create(b, l, t, args[0], zero)));
             })
      .getResult(0);
}

/// Zeros of `x`'s type: x's elements selected away by an always-true
/// comparison, so that the runtime's elementwise op reads a tensor of the
/// shape (a chain of constants alone has none) and no NaN or infinity of x
/// survives, as x * 0 would let it.
Value BackwardGen::zeroLike(Value x) {
  auto type = cast<RankedTensorType>(x.getType());
  MLIRContext *ctx = type.getContext();
  AffineMap id = AffineMap::getMultiDimIdentityMap(type.getRank(), ctx);
  SmallVector<utils::IteratorType> iterators(type.getRank(),
                                             utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             adjoint, loc(), TypeRange{type}, ValueRange{x}, ValueRange{x},
             ArrayRef<AffineMap>{id, id}, iterators,
             [&](OpBuilder &b, Location l, ValueRange args) {
               Value t = arith::CmpFOp::create(
                   b, l, arith::CmpFPredicate::AlwaysTrue, args[0], args[0]);
               Value zero = arith::ConstantOp::create(
                   b, l, b.getFloatAttr(type.getElementType(), 0.0));
               linalg::YieldOp::create(
                   b, l,
                   Value(arith::SelectOp::create(b, l, t, zero, args[0])));
             })
      .getResult(0);
}

void BackwardGen::contribute(Value v, Value c) {
  if (!active.contains(v))
    return;
  c = convertTo(c, accType(v));
  if (collected.contains(v) && summed) {
    collectedSummed[v] = add(collectedSummed.lookup(v), c);
    return;
  }
  if (!replicated.contains(v)) {
    grads[v] = add(grads.lookup(v), c);
    return;
  }
  Replicated &r = reps[v];
  if (summed)
    r.summed = add(r.summed, c);
  else
    r.local = add(r.local, c);
}

void BackwardGen::contributeRowSums(Value v, Value rows) {
  if (!active.contains(v))
    return;
  if (replicated.contains(v) && !summed) {
    reps[v].rows.push_back(rows); // Summed over ranks when finalized.
    return;
  }
  Type acc = accType(v);
  Type rowsElt = cast<RankedTensorType>(rows.getType()).getElementType();
  contribute(v,
             sumRows(rows, rowsElt == acc || isHalf(rowsElt) ? acc : rowsElt));
}

Value BackwardGen::gradient(Value v) {
  if (replicated.contains(v))
    return finalized.lookup(v);
  return grads.lookup(v);
}

Value BackwardGen::finalizeReplicated(Value v) {
  auto it = reps.find(v);
  if (it == reps.end())
    return {};
  Replicated &r = it->second;
  Type acc = accType(v);
  Value total = r.summed, local = r.local;
  for (Value rows : r.rows) {
    Value narrow = rows;
    if (auto widened = rows.getDefiningOp<ConvertOp>())
      narrow = widened.getInput();
    // Every rank gathered every rank's rows: their sum is the sum over
    // ranks, with no communication.
    if (Value all = gatheredRows.lookup(narrow))
      total = add(total, sumRows(all, acc));
    else
      local = add(local, convertTo(sumRows(rows, isHalf(elementOf(rows))
                                                     ? acc
                                                     : elementOf(rows)),
                                   acc));
  }
  if (local) {
    if (worldSize == 0) {
      emitError(v.getLoc()) << "cannot sum this value's gradient over ranks: "
                               "the function's chunk specs have different "
                               "world sizes";
      return {};
    }
    total = add(total, worldSize > 1
                           ? Value(AllReduceOp::create(adjoint, loc(),
                                                       local.getType(), local,
                                                       worldSize))
                           : local);
  }
  for (auto &[spec, chunk] : r.chunks)
    total = add(total, AllGatherOp::create(adjoint, loc(),
                                           withElement(v.getType(), acc), chunk,
                                           cast<ChunkAttr>(spec)));
  return total;
}

//===----------------------------------------------------------------------===//
// The function
//===----------------------------------------------------------------------===//

namespace {

/// Whether `op` computes a value every rank holds alike from values that
/// are (`isReplicated`): a rank-local op on replicated values only. With
/// `linearOps`, a gemm's and a bias_add's too (a replicated result's).
bool computesReplicated(Operation *op, function_ref<bool(Value)> isReplicated,
                        bool linearOps = false) {
  if (isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp, ConvertOp>(op))
    return isReplicated(op->getOperand(0));
  if (linearOps && isa<GemmOp, BiasAddOp>(op))
    return llvm::all_of(op->getOperands(), isReplicated);
  // A norm's sum over the last dim (its init a constant fill).
  if (std::optional<RowReduction> red = matchRowReduction(op))
    return isReplicated(red->input) &&
           (isReplicated(red->init) || constantOf(red->init).has_value());
  if (!isChainOp(op))
    return false;
  FailureOr<ElementwiseForm> form = getElementwiseForm(op);
  return succeeded(form) && !form->inputs.empty() &&
         llvm::all_of(form->inputs, isReplicated);
}

/// The world size of every chunk spec in the function's argument types and
/// ops, or 0 if they differ (1 if there is none).
int64_t worldSizeOf(func::FuncOp f) {
  int64_t w = 0;
  bool mixed = false;
  auto note = [&](ChunkAttr c) {
    if (w != 0 && w != c.getNumChunks())
      mixed = true;
    w = c.getNumChunks();
  };
  for (Type t : f.getArgumentTypes())
    t.walk(note);
  f.walk([&](Operation *op) { op->getAttrDictionary().walk(note); });
  return mixed ? 0 : (w == 0 ? 1 : w);
}

} // namespace

/// Which forward values are active, and which every rank holds alike:
/// the replicated arguments and what ops on replicated values alone compute
/// from them (their gradient summed over ranks: `replicated`), the results
/// of all_gather and all_reduce (`collected`), and what ops on those alone
/// compute towards a result (a replicated result: its gradient is one
/// tensor, every rank's alike, and so is theirs).
void BackwardGen::classify() {
  for (BlockArgument a : fwdBody.getArguments()) {
    active.insert(a);
    if (req.replicatedArgs.test(a.getArgNumber()))
      replicated.insert(a);
  }
  llvm::DenseSet<Value> sameLater;
  auto same = [&](Value v) {
    return isSame(v) || sameLater.contains(v) || constantOf(v).has_value();
  };
  for (Operation &op : fwdBody) {
    if (llvm::any_of(op.getOperands(),
                     [&](Value v) { return active.contains(v); }))
      for (Value r : op.getResults())
        active.insert(r);
    const bool collective = isa<AllGatherOp, AllReduceOp>(op);
    if (collective ||
        llvm::any_of(op.getOperands(),
                     [&](Value v) { return afterCollective.contains(v); }))
      for (Value r : op.getResults())
        afterCollective.insert(r);
    if (collective) {
      collected.insert(op.getResult(0));
      continue;
    }
    if (computesReplicated(&op,
                           [&](Value v) { return replicated.contains(v); })) {
      for (Value r : op.getResults())
        replicated.insert(r);
      continue;
    }
    if (op.getNumResults() == 1 && afterCollective.contains(op.getResult(0)) &&
        computesReplicated(&op, same, /*linearOps=*/true))
      sameLater.insert(op.getResult(0));
  }
  // From the results back: what of sameLater a replicated result is
  // computed from gets a gradient every rank holds alike.
  SmallVector<Value> work(fwdBody.getTerminator()->getOperands());
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (!sameLater.contains(v) || !replicated.insert(v).second)
      continue;
    llvm::append_range(work, v.getDefiningOp()->getOperands());
  }
}

FailureOr<SmallVector<Value>> BackwardGen::run() {
  func::FuncOp fwd = forward;
  worldSize = worldSizeOf(fwd);
  const unsigned numArgs = fwd.getNumArguments();
  classify();

  currentLoc = fwd.getLoc();
  adjoint.setInsertionPointToEnd(&body);
  // Recomputed forward ops go before this marker, adjoint ops after it.
  Operation *fence = arith::ConstantIndexOp::create(adjoint, loc(), 0);
  recompute.setInsertionPoint(fence);

  // The gradients of the results seed the reverse pass.
  if (failed(seedResultGradients(numArgs)))
    return failure();

  // Rank-local values first; then the replicated ones computed from the
  // arguments, whose gradients are complete (summed over ranks) once every
  // rank-local use is processed. A replicated value computed from a
  // collective's result is complete when its ops are reached in reverse
  // order, and is processed there: the rank-local ops before it need it.
  SmallVector<Operation *> ops;
  for (Operation &op : fwdBody.without_terminator())
    ops.push_back(&op);
  auto isReplicatedOp = [&](Operation *op) {
    return op->getNumResults() == 1 && replicated.contains(op->getResult(0));
  };
  auto visitReplicated = [&](Operation *op) -> LogicalResult {
    currentLoc = op->getLoc();
    finalized[op->getResult(0)] = finalizeReplicated(op->getResult(0));
    if (reps.count(op->getResult(0)) && !finalized[op->getResult(0)])
      return failure();
    return visit(op);
  };
  for (Operation *op : llvm::reverse(ops)) {
    if (!isReplicatedOp(op)) {
      if (failed(visit(op)))
        return failure();
      continue;
    }
    if (!afterCollective.contains(op->getResult(0)))
      continue;
    summed = true;
    LogicalResult visited = visitReplicated(op);
    summed = false;
    if (failed(visited))
      return failure();
  }
  summed = true;
  for (Operation *op : llvm::reverse(ops))
    if (isReplicatedOp(op) && !afterCollective.contains(op->getResult(0)) &&
        failed(visitReplicated(op)))
      return failure();

  // Each argument's gradient, in its own type.
  currentLoc = fwd.getLoc();
  SmallVector<Value> results;
  for (BlockArgument a : fwdBody.getArguments()) {
    Type elt = elementOf(a);
    Value g = grads.lookup(a);
    if (replicated.contains(a)) {
      g = finalizeReplicated(a);
      if (reps.count(a) && !g)
        return failure();
    }
    if (auto sharded = dyn_cast<ShardedType>(a.getType())) {
      Value local = g ? convertTo(g, elt)
                      : zeroLike(LocalShardOp::create(
                            adjoint, loc(), sharded.getLocalType(), primal(a)));
      results.push_back(
          FromLocalOp::create(adjoint, loc(), sharded, local));
      continue;
    }
    results.push_back(g ? convertTo(g, elt) : zeroLike(primal(a)));
  }
  auto backRet = func::ReturnOp::create(adjoint, loc(), results);

  return pruneAndFinish(backRet);
}

/// The results' gradients (the backward's extra arguments) given to what
/// computed the results: the reverse pass starts from them.
LogicalResult BackwardGen::seedResultGradients(unsigned numArgs) {
  auto ret = cast<func::ReturnOp>(fwdBody.getTerminator());
  for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
    Value dy = body.getArgument(numArgs + i);
    if (auto sharded = dyn_cast<ShardedType>(v.getType())) {
      // The rank's chunk of the result's gradient is the gradient of the
      // rank's chunk: of a sharded argument, or of the local value that
      // from_local made the result of (an imported module's split result).
      Value chunk =
          LocalShardOp::create(adjoint, loc(), sharded.getLocalType(), dy);
      if (auto fromLocal = v.getDefiningOp<FromLocalOp>()) {
        contribute(fromLocal.getSource(), chunk);
        continue;
      }
      auto arg = dyn_cast<BlockArgument>(v);
      if (!arg)
        return ret.emitOpError() << "cannot differentiate a sharded result "
                                    "that is neither an argument nor made by "
                                    "shardlin.from_local";
      grads[arg] = add(grads.lookup(arg), chunk);
      continue;
    }
    // A result every rank holds alike is one tensor: its gradient is every
    // rank's alike, already the whole (summed) one.
    const bool global = isSame(v);
    if (global && req.replicatedResults)
      req.replicatedResults->set(i);
    summed = global;
    contribute(v, dy);
    summed = false;
  }

  return success();
}

/// Erases what a later adjoint made unnecessary (a convert that a narrow
/// value replaced, a sum of rows that gathered rows replaced) and the saved
/// values nothing reads, and gives the backward its type: the forward
/// values it takes after all.
SmallVector<Value> BackwardGen::pruneAndFinish(func::ReturnOp backRet) {
  // What a later adjoint made unnecessary (a convert that a narrow value
  // replaced, a sum of rows that gathered rows replaced), and the marker.
  bool changed = true;
  while (changed) {
    changed = false;
    for (Operation &op : llvm::make_early_inc_range(llvm::reverse(body)))
      if (&op != backRet && isOpTriviallyDead(&op)) {
        op.erase();
        changed = true;
      }
  }
  // (The fence that ordered recomputed and adjoint ops is dead: erased.)
  // A saved value whose only reader was erased is not passed after all.
  SmallVector<Value> kept;
  const unsigned firstSaved = body.getNumArguments() - saved.size();
  llvm::BitVector unused(body.getNumArguments());
  for (auto [i, v] : llvm::enumerate(saved)) {
    if (body.getArgument(firstSaved + i).use_empty())
      unused.set(firstSaved + i);
    else
      kept.push_back(v);
  }
  body.eraseArguments(unused);
  backward.setType(FunctionType::get(forward.getContext(), body.getArgumentTypes(),
                                     backRet.getOperandTypes()));
  return kept;
}

FailureOr<SmallVector<Value>>
sd::buildBackward(const BackwardRequest &request) {
  return BackwardGen(request).run();
}
