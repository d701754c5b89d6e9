//===- BackwardBuilder.cpp - The backward of a lowered function -----------===//
//
// Reverse mode over the SPMD program that --lower-sharded-linear made of a
// function. Differentiating the lowered program rather than shardlin.linear
// makes the backward the dual of whatever the lowering chose (strategy, block
// fusion), and makes the forward values it needs (the gathered X of a block,
// its pre-activations) plain SSA values that the forward can return.
//
// The adjoint of each op, for the gradient g of its result:
//   all_gather along S       reduce_scatter g along S
//   reduce_scatter along S   all_gather g along S
//   all_to_all split S concat C   all_to_all g split C concat S
//   all_reduce               all_reduce g
//   gemm r = op(l) op(m) + b     gemms with the other transposes; sum_rows g
//   bias_add, convert, reshapes  g, g converted, the inverse reshape
//   local_shard W            g is the rank's chunk's gradient (the result
//                            wraps it with from_local_shard)
//   local_chunk b along S    b's gradient is the all_gather along S of
//                            every rank's chunk gradient
//   elementwise ops          ElementwiseAdjoint.cpp
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
// Precision: a gradient is kept in the value's element type, except where
// it is a sum over ranks still to be reduced (the gradient of an all_gather
// result, of a replicated value): f32 for f16/bf16, rounded once after the
// reduction, as the forward's partial products are.
//
//===----------------------------------------------------------------------===//

#include "BackwardBuilder.h"

#include "ElementwiseAdjoint.h"
#include "LoweringSupport.h"

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
  return isa_and_nonnull<AllGatherOp, AllToAllOp, ReduceScatterOp,
                         AllReduceOp, GemmOp>(op);
}

namespace {

bool isHalf(Type t) { return t.isF16() || t.isBF16(); }

Type elementOf(Value v) {
  if (auto s = dyn_cast<ShardedType>(v.getType()))
    return s.getElementType();
  return cast<ShapedType>(v.getType()).getElementType();
}

RankedTensorType withElement(Type shaped, Type elt) {
  return cast<RankedTensorType>(shaped).clone(elt);
}

bool isChainOp(Operation *op) {
  bool member = false;
  return succeeded(isChainMember(*op, member, /*emitErrors=*/false)) &&
         member && !isa<tensor::EmptyOp, arith::ConstantOp>(op);
}

/// Whether `spec` is B rows per rank stacked in rank order (dim 0, the
/// identity placements).
bool isRankOrderRows(ChunkAttr spec) {
  if (spec.getDim() != 0)
    return false;
  for (auto [i, p] : llvm::enumerate(spec.getPlacements()))
    if (p != static_cast<int64_t>(i))
      return false;
  return true;
}

class BackwardGen {
public:
  explicit BackwardGen(const BackwardRequest &r)
      : req(r), forward(r.forward), backward(r.backward),
        fwdBody(forward.getBody().front()),
        body(backward.getBody().front()), recompute(backward.getContext()),
        adjoint(backward.getContext()),
        currentLoc(UnknownLoc::get(backward.getContext())) {}

  FailureOr<SmallVector<Value>> run();

private:
  //===--- Forward values in the backward ---------------------------------===//

  /// The backward's value of forward value `v`: an argument, a saved
  /// argument, or recomputed (before every adjoint op).
  Value primal(Value v);
  /// A backward value with the shape of forward value `v` (for sizes only):
  /// an argument or a value already available when elementwise ops, which
  /// keep shapes, lead to one; else `v` itself.
  Value shapeOf(Value v);
  Value findShape(Value v, unsigned depth);

  //===--- Gradients ------------------------------------------------------===//

  /// The element type a gradient of `v` is kept in (see the file comment).
  Type accType(Value v);
  /// `c` with element type `elt`: as it is, the narrow value it was widened
  /// from, or converted.
  Value convertTo(Value c, Type elt);
  Value add(Value a, Value b);
  Value sumRows(Value t, Type elt);
  Value asRows(Value t);
  Value zeroLike(Value x);
  Location loc() { return currentLoc; }

  void contribute(Value v, Value c);
  /// The sum over all rows of `rows` (rank 2) contributed to vector `v`.
  void contributeRowSums(Value v, Value rows);
  Value gradient(Value v);
  Value finalizeReplicated(Value v);

  LogicalResult visit(Operation *op);
  LogicalResult visitGemm(GemmOp op);
  LogicalResult visitElementwise(Operation *op);

  struct Replicated {
    Value summed, local;
    SmallVector<Value> rows;
    llvm::MapVector<Attribute, Value> chunks;
  };

  const BackwardRequest &req;
  func::FuncOp forward, backward;
  Block &fwdBody;
  Block &body;
  OpBuilder recompute, adjoint;
  Location currentLoc;

  llvm::DenseMap<Value, Value> primals;
  SmallVector<Value> saved;
  llvm::DenseSet<Value> active, replicated;
  llvm::DenseMap<Value, Value> grads;
  llvm::MapVector<Value, Replicated> reps;
  llvm::DenseMap<Value, Value> finalized;
  /// A backward tensor -> its all_gather in rank order of rows.
  llvm::DenseMap<Value, Value> gatheredRows;
  /// During the pass over replicated ops: contributions are already sums
  /// over ranks.
  bool summed = false;
  int64_t worldSize = 0;
};

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
  for (auto [r, c] : llvm::zip(def->getResults(), copy->getResults()))
    primals[r] = c;
  return primals.lookup(v);
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
  bool sumOverRanks = replicated.contains(v) || isa_and_nonnull<AllGatherOp>(def);
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
                           RankedTensorType::get({type.getShape()[1]}, elt),
                           t);
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
  contribute(v, sumRows(rows, rowsElt == acc || isHalf(rowsElt) ? acc
                                                                : rowsElt));
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
                                                       local.getType(), local))
                           : local);
  }
  for (auto &[spec, chunk] : r.chunks)
    total = add(total, AllGatherOp::create(adjoint, loc(),
                                           withElement(v.getType(), acc),
                                           chunk, cast<ChunkAttr>(spec)));
  return total;
}

//===----------------------------------------------------------------------===//
// Adjoints
//===----------------------------------------------------------------------===//

LogicalResult BackwardGen::visitGemm(GemmOp op) {
  Value g = gradient(op.getResult());
  Value lhs = op.getLhs(), rhs = op.getRhs();
  const bool tl = op.getTransposeLhs(), tr = op.getTransposeRhs();
  Type t = elementOf(lhs);
  Value gt = convertTo(g, t);
  // The backward GEMMs say which lowering they are the dual of.
  auto annotate = [&](GemmOp gemm) {
    SmallVector<NamedAttribute> fields;
    if (auto lowering =
            op->getAttrOfType<DictionaryAttr>("shardlin.lowering"))
      if (Attribute strategy = lowering.get("strategy"))
        fields.push_back(adjoint.getNamedAttr("strategy", strategy));
    fields.push_back(
        adjoint.getNamedAttr("backward", adjoint.getUnitAttr()));
    gemm->setAttr("shardlin.lowering", adjoint.getDictionaryAttr(fields));
    return gemm.getResult();
  };
  if (active.contains(lhs)) {
    // d op(l) = g op(m)^T.
    Type type = withElement(lhs.getType(), accType(lhs));
    GemmOp d = tl ? GemmOp::create(adjoint, loc(), type, primal(rhs), gt,
                                   Value(), tr, true)
                  : GemmOp::create(adjoint, loc(), type, gt, primal(rhs),
                                   Value(), false, !tr);
    contribute(lhs, annotate(d));
  }
  if (active.contains(rhs)) {
    // d op(m) = op(l)^T g.
    Type type = withElement(rhs.getType(), accType(rhs));
    GemmOp d = tr ? GemmOp::create(adjoint, loc(), type, gt, primal(lhs),
                                   Value(), true, tl)
                  : GemmOp::create(adjoint, loc(), type, primal(lhs), gt,
                                   Value(), !tl, false);
    contribute(rhs, annotate(d));
  }
  if (Value bias = op.getBias())
    contributeRowSums(bias, g);
  return success();
}

LogicalResult BackwardGen::visitElementwise(Operation *op) {
  Value g = gradient(op->getResult(0));
  FailureOr<ElementwiseForm> form = getElementwiseForm(op);
  if (failed(form))
    return failure();
  Type t = cast<RankedTensorType>(g.getType()).getElementType();
  // Forward values as the derivative reads them: floats in the gradient's
  // type (f32 where the gradient is a sum over ranks still to be done).
  llvm::DenseMap<unsigned, Value> inputs;
  auto primalInput = [&](unsigned i) {
    auto [it, inserted] = inputs.try_emplace(i, Value());
    if (inserted) {
      Value in = form->inputs[i];
      Value p = primal(in);
      it->second = elementOf(in).isInteger(1) ? p : convertTo(p, t);
    }
    return it->second;
  };
  for (auto [j, in] : llvm::enumerate(form->inputs)) {
    if (!active.contains(in) || elementOf(in).isInteger(1))
      continue;
    Value c = emitInputAdjoint(adjoint, loc(), *form, j, g, primalInput);
    if (!c)
      continue;
    if (form->vector[j])
      contributeRowSums(in, asRows(c));
    else
      contribute(in, c);
  }
  return success();
}

LogicalResult BackwardGen::visit(Operation *op) {
  currentLoc = op->getLoc();
  if (isa<arith::ConstantOp, tensor::EmptyOp, tensor::DimOp>(op))
    return success();
  if (llvm::none_of(op->getResults(),
                    [&](Value r) { return static_cast<bool>(gradient(r)); }))
    return success();
  if (isChainOp(op))
    return visitElementwise(op);
  return TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](tensor::CollapseShapeOp c) {
        Value src = c.getSrc();
        Value g = gradient(c.getResult());
        auto type = withElement(src.getType(), elementOf(g));
        SmallVector<OpFoldResult> sizes;
        for (auto [i, d] : llvm::enumerate(type.getShape()))
          sizes.push_back(
              ShapedType::isDynamic(d)
                  ? OpFoldResult(tensor::DimOp::create(adjoint, loc(),
                                                       shapeOf(src), i)
                                     .getResult())
                  : OpFoldResult(adjoint.getIndexAttr(d)));
        contribute(src, tensor::ExpandShapeOp::create(
                            adjoint, loc(), type, g,
                            c.getReassociationIndices(), sizes));
        return success();
      })
      .Case([&](tensor::ExpandShapeOp e) {
        Value g = gradient(e.getResult());
        contribute(e.getSrc(),
                   tensor::CollapseShapeOp::create(
                       adjoint, loc(),
                       withElement(e.getSrc().getType(), elementOf(g)), g,
                       e.getReassociationIndices()));
        return success();
      })
      .Case([&](AllGatherOp a) {
        Value g = gradient(a.getResult());
        contribute(a.getInput(),
                   ReduceScatterOp::create(
                       adjoint, loc(),
                       withElement(a.getInput().getType(), elementOf(g)), g,
                       a.getAlong()));
        return success();
      })
      .Case([&](ReduceScatterOp r) {
        Value g = gradient(r.getResult());
        // Gather the narrow values a widening convert came from: half the
        // bytes, and exactly the same values.
        Value narrow = g;
        if (auto widened = g.getDefiningOp<ConvertOp>())
          narrow = widened.getInput();
        auto gathered = AllGatherOp::create(
            adjoint, loc(),
            withElement(r.getInput().getType(), elementOf(narrow)), narrow,
            r.getAlong());
        if (isRankOrderRows(r.getAlong()))
          gatheredRows[narrow] = gathered;
        contribute(r.getInput(),
                   narrow == g ? gathered.getResult()
                               : Value(ConvertOp::create(
                                     adjoint, loc(),
                                     withElement(gathered.getType(),
                                                 elementOf(g)),
                                     gathered)));
        return success();
      })
      .Case([&](AllToAllOp a) {
        Value g = gradient(a.getResult());
        contribute(a.getInput(),
                   AllToAllOp::create(
                       adjoint, loc(),
                       withElement(a.getInput().getType(), elementOf(g)), g,
                       /*split=*/a.getConcat(), /*concat=*/a.getSplit()));
        return success();
      })
      .Case([&](AllReduceOp a) {
        Value g = gradient(a.getResult());
        contribute(a.getInput(),
                   AllReduceOp::create(adjoint, loc(), g.getType(), g));
        return success();
      })
      .Case([&](LocalShardOp l) -> LogicalResult {
        auto arg = dyn_cast<BlockArgument>(l.getSource());
        if (!arg)
          return l.emitOpError() << "cannot differentiate the chunk of a "
                                    "sharded value that is not an argument";
        Value g = convertTo(gradient(l.getResult()), elementOf(arg));
        grads[arg] = add(grads.lookup(arg), g);
        return success();
      })
      .Case([&](LocalChunkOp l) -> LogicalResult {
        Value src = l.getSource();
        if (!active.contains(src))
          return success();
        if (!replicated.contains(src))
          return l.emitOpError()
                 << "cannot differentiate the chunk of a rank-local value "
                    "(only of a value every rank holds alike, such as a bias)";
        Value &chunk = reps[src].chunks[l.getAlong()];
        chunk = add(chunk, convertTo(gradient(l.getResult()), accType(src)));
        return success();
      })
      .Case([&](GemmOp g) { return visitGemm(g); })
      .Case([&](BiasAddOp b) {
        Value g = gradient(b.getResult());
        contribute(b.getInput(), g);
        contributeRowSums(b.getBias(), asRows(g));
        return success();
      })
      .Case([&](ConvertOp c) {
        contribute(c.getInput(), gradient(c.getResult()));
        return success();
      })
      .Default([&](Operation *other) {
        return other->emitOpError()
               << "cannot be differentiated by shardlin-generate-backward";
      });
}

} // namespace

//===----------------------------------------------------------------------===//
// The function
//===----------------------------------------------------------------------===//

namespace {

/// Whether `op` computes a value every rank holds alike from values that
/// are (`isReplicated`): a rank-local op on replicated values only.
bool computesReplicated(Operation *op,
                        function_ref<bool(Value)> isReplicated) {
  if (isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp, ConvertOp>(op))
    return isReplicated(op->getOperand(0));
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

FailureOr<SmallVector<Value>> BackwardGen::run() {
  func::FuncOp fwd = forward;
  worldSize = worldSizeOf(fwd);
  const unsigned numArgs = fwd.getNumArguments();
  for (BlockArgument a : fwdBody.getArguments()) {
    active.insert(a);
    if (req.replicatedArgs.test(a.getArgNumber()))
      replicated.insert(a);
  }
  for (Operation &op : fwdBody) {
    if (llvm::any_of(op.getOperands(),
                     [&](Value v) { return active.contains(v); }))
      for (Value r : op.getResults())
        active.insert(r);
    if (computesReplicated(&op,
                           [&](Value v) { return replicated.contains(v); }))
      for (Value r : op.getResults())
        replicated.insert(r);
  }

  currentLoc = fwd.getLoc();
  adjoint.setInsertionPointToEnd(&body);
  // Recomputed forward ops go before this marker, adjoint ops after it.
  Operation *fence = arith::ConstantIndexOp::create(adjoint, loc(), 0);
  recompute.setInsertionPoint(fence);

  // The gradients of the results seed the reverse pass.
  auto ret = cast<func::ReturnOp>(fwdBody.getTerminator());
  for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
    Value dy = body.getArgument(numArgs + i);
    if (auto sharded = dyn_cast<ShardedType>(v.getType())) {
      auto arg = dyn_cast<BlockArgument>(v);
      if (!arg)
        return ret.emitOpError() << "cannot differentiate a sharded result "
                                    "that is not an argument";
      grads[arg] = add(grads.lookup(arg),
                       LocalShardOp::create(adjoint, loc(),
                                            sharded.getLocalType(), dy));
      continue;
    }
    contribute(v, dy);
  }

  // Rank-local values first; then the replicated ones, whose gradients are
  // complete (summed over ranks) once every rank-local use is processed.
  SmallVector<Operation *> ops;
  for (Operation &op : fwdBody.without_terminator())
    ops.push_back(&op);
  auto isReplicatedOp = [&](Operation *op) {
    return op->getNumResults() == 1 && replicated.contains(op->getResult(0));
  };
  for (Operation *op : llvm::reverse(ops))
    if (!isReplicatedOp(op) && failed(visit(op)))
      return failure();
  summed = true;
  for (Operation *op : llvm::reverse(ops)) {
    if (!isReplicatedOp(op))
      continue;
    currentLoc = op->getLoc();
    finalized[op->getResult(0)] = finalizeReplicated(op->getResult(0));
    if (reps.count(op->getResult(0)) && !finalized[op->getResult(0)])
      return failure();
    if (failed(visit(op)))
      return failure();
  }

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
      Value local =
          g ? convertTo(g, elt)
            : zeroLike(LocalShardOp::create(adjoint, loc(),
                                            sharded.getLocalType(),
                                            primal(a)));
      results.push_back(
          FromLocalShardOp::create(adjoint, loc(), sharded, local));
      continue;
    }
    results.push_back(g ? convertTo(g, elt) : zeroLike(primal(a)));
  }
  auto backRet = func::ReturnOp::create(adjoint, loc(), results);

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
  (void)fence; // Erased above: nothing reads it.
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
  backward.setType(FunctionType::get(
      fwd.getContext(), body.getArgumentTypes(), backRet.getOperandTypes()));
  return kept;
}

FailureOr<SmallVector<Value>> sd::buildBackward(const BackwardRequest &request) {
  return BackwardGen(request).run();
}
