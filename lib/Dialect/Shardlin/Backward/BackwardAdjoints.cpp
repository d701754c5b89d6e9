//===- BackwardAdjoints.cpp - The adjoint of each lowered op --------------===//
//
// BackwardGen::visit: for one op of the lowered forward, the gradients of
// its operands from the gradients of its results (the table is in
// BackwardBuilder.cpp's file comment).
//
//===----------------------------------------------------------------------===//

#include "BackwardGen.h"

#include "ElementwiseAdjoint.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::shardlin;
using namespace mlir::shardlin::detail;

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
    if (auto lowering = op->getAttrOfType<DictionaryAttr>("shardlin.lowering"))
      if (Attribute strategy = lowering.get("strategy"))
        fields.push_back(adjoint.getNamedAttr("strategy", strategy));
    fields.push_back(adjoint.getNamedAttr("backward", adjoint.getUnitAttr()));
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
    else if (form->row[j])
      contribute(in, sumEachRow(c));
    else
      contribute(in, c);
  }
  return success();
}

/// r = init + (the sum of each row of x): dx = dr broadcast along the rows,
/// dinit = dr. A maximum (softmax's) is refused: its gradient goes to the
/// arg max, which the runtime has no op for.
LogicalResult BackwardGen::visitRowReduction(Operation *op,
                                             const RowReduction &red) {
  if (red.combine != RowCombine::Add)
    return op->emitOpError()
           << "cannot be differentiated by shardlin-generate-backward: a "
              "maximum over the last dim (softmax's) has no adjoint here; "
              "only sums over the last dim (a norm's) do";
  auto inType = cast<RankedTensorType>(red.input.getType());
  if (inType.getRank() < 2)
    return op->emitOpError()
           << "cannot be differentiated by shardlin-generate-backward: the "
              "sum of a rank-1 tensor (a whole-tensor sum) has no adjoint "
              "here; only sums over the last dim of each row do";
  Value g = gradient(op->getResult(0));
  contribute(red.init, g);
  if (!active.contains(red.input))
    return success();
  Value rows = g;
  if (!red.keepDim) {
    // R -> R x 1: the keep-dim form the broadcast reads.
    auto type = cast<RankedTensorType>(g.getType());
    SmallVector<int64_t> shape(type.getShape());
    shape.push_back(1);
    SmallVector<ReassociationIndices> groups;
    for (int64_t d = 0; d + 1 < type.getRank(); ++d)
      groups.push_back({d});
    groups.push_back({type.getRank() - 1, type.getRank()});
    SmallVector<OpFoldResult> sizes;
    for (auto [i, d] : llvm::enumerate(type.getShape()))
      sizes.push_back(
          ShapedType::isDynamic(d)
              ? OpFoldResult(
                    tensor::DimOp::create(adjoint, loc(), g, i).getResult())
              : OpFoldResult(adjoint.getIndexAttr(d)));
    sizes.push_back(adjoint.getIndexAttr(1));
    rows = tensor::ExpandShapeOp::create(adjoint, loc(), type.clone(shape), g,
                                         groups, sizes);
  }
  contribute(red.input, broadcastRows(rows, red.input));
  return success();
}

/// o = attention(q, k, v [mask]): dq, dk and dv by shardlin.attention_grad
/// (the softmax recomputed from q and k), with the forward's tables. The
/// mask is an additive constant of the scores: not differentiated (a mask
/// computed from an argument gets no contribution from here). A rank's dk
/// and dv hold only its own query heads' part of its kv heads' gradients;
/// where kv heads are replicated to several ranks, the parts are summed
/// over those ranks through the gradients of what k and v are computed from
/// (a local_slice of a replicated weight: its all_reduce; the gathered x:
/// the all_gather's dual reduce_scatter).
LogicalResult BackwardGen::visitAttention(AttentionOp op) {
  Value g = gradient(op.getResult());
  Value gt = convertTo(g, elementOf(op.getQ()));
  Value mask = op.getMask() ? primal(op.getMask()) : Value();
  const std::pair<Value, StringRef> wrts[] = {
      {op.getQ(), "q"}, {op.getK(), "k"}, {op.getV(), "v"}};
  for (auto [operand, wrt] : wrts) {
    if (!active.contains(operand))
      continue;
    auto d = AttentionGradOp::create(
        adjoint, loc(), operand.getType(), primal(op.getQ()), primal(op.getK()),
        primal(op.getV()), gt, mask, adjoint.getStringAttr(wrt),
        op.getHeadDimAttr(), op.getScaleAttr(), op.getCausalAttr(),
        op.getGroupAttr(), op.getQHeadsAttr(), op.getKvHeadsAttr());
    contribute(operand, d.getResult());
  }
  return success();
}

/// y = rope(x): a rotation of each pair by the position's angle, whose
/// transpose is the rotation by the opposite angle: dx = rope(g) with
/// `inverse` flipped. The tables cos and sin are not differentiated (the
/// frozen rotary tables; an argument gets no contribution from here).
LogicalResult BackwardGen::visitRope(RopeOp op) {
  if (!active.contains(op.getX()))
    return success();
  // In the tables' (and x's) element type, as the op takes them.
  Value g = convertTo(gradient(op.getResult()), elementOf(op.getCos()));
  auto rot = RopeOp::create(
      adjoint, loc(), op.getX().getType(), g, primal(op.getCos()),
      primal(op.getSin()), op.getHeadDimAttr(),
      op.getInverse() ? UnitAttr() : adjoint.getUnitAttr());
  contribute(op.getX(), rot.getResult());
  return success();
}

/// s = local_slice(t) (rank r's [b_r, e_r) of dim d of t, every rank's t
/// alike; the ranges may overlap): rank r's contribution to dt is g placed
/// at [b_r, e_r) and zeros elsewhere, shardlin.local_place with the same
/// dim and ranges (a copy: an inf or NaN of g stays in its own element),
/// and t's gradient is its sum over the ranks (t is replicated: the
/// all_reduce of finalizeReplicated; of an all_gather's result, the dual
/// reduce_scatter), so that a kv head that several ranks slice gets every
/// rank's part.
LogicalResult BackwardGen::visitLocalSlice(LocalSliceOp op) {
  Value src = op.getSource();
  if (!active.contains(src))
    return success();
  if (!replicated.contains(src) && !collected.contains(src))
    return op.emitOpError()
           << "cannot differentiate the slice of a value that is not the "
              "same on every rank (a replicated argument, or what a "
              "collective gathered)";
  Type acc = accType(src);
  Value g = convertTo(gradient(op.getResult()), acc);
  Value placed = LocalPlaceOp::create(
      adjoint, loc(), withElement(cast<RankedTensorType>(src.getType()), acc),
      g, op.getDimAttr(), op.getRangesAttr());
  contribute(src, placed);
  return success();
}

/// An all_gather's or all_reduce's result, every rank's alike: the dual
/// collective of each rank's own gradient (its sum over ranks: a
/// reduce_scatter, an all_reduce), plus the rank's part of the gradient
/// already summed over ranks (its chunk, all of it).
LogicalResult BackwardGen::visitCollected(Operation *op) {
  Value result = op->getResult(0), input = op->getOperand(0);
  Value local = grads.lookup(result), whole = collectedSummed.lookup(result);
  if (auto gather = dyn_cast<AllGatherOp>(op)) {
    if (local)
      contribute(input, ReduceScatterOp::create(
                            adjoint, loc(),
                            withElement(input.getType(), elementOf(local)),
                            local, gather.getAlong()));
    if (whole)
      contribute(input, LocalChunkOp::create(
                            adjoint, loc(),
                            withElement(input.getType(), elementOf(whole)),
                            whole, gather.getAlong()));
    return success();
  }
  auto reduce = cast<AllReduceOp>(op);
  if (local)
    contribute(input, AllReduceOp::create(adjoint, loc(), local.getType(),
                                          local, reduce.getWorldSize()));
  if (whole)
    contribute(input, whole);
  return success();
}

/// c = local_chunk(b) along S: b every rank's alike (a replicated value, or
/// a collective's result), so its gradient is every rank's chunk gradient,
/// gathered along S.
LogicalResult BackwardGen::visitLocalChunk(LocalChunkOp l) {
  Value src = l.getSource();
  if (!active.contains(src))
    return success();
  if (collected.contains(src)) {
    // Every rank's chunk gradient, gathered: the whole gradient,
    // summed over ranks, every rank's alike.
    Value g = gradient(l.getResult());
    Value whole = AllGatherOp::create(adjoint, loc(),
                                      withElement(src.getType(), elementOf(g)),
                                      g, l.getAlong());
    collectedSummed[src] =
        add(collectedSummed.lookup(src), convertTo(whole, accType(src)));
    return success();
  }
  if (!replicated.contains(src))
    return l.emitOpError()
           << "cannot differentiate the chunk of a rank-local value "
              "(only of a value every rank holds alike, such as a bias)";
  Value &chunk = reps[src].chunks[l.getAlong()];
  chunk = add(chunk, convertTo(gradient(l.getResult()), accType(src)));
  return success();
}

LogicalResult BackwardGen::visit(Operation *op) {
  currentLoc = op->getLoc();
  if (isa<arith::ConstantOp, tensor::EmptyOp, tensor::DimOp>(op))
    return success();
  if (isa<AllGatherOp, AllReduceOp>(op))
    return visitCollected(op);
  if (llvm::none_of(op->getResults(),
                    [&](Value r) { return static_cast<bool>(gradient(r)); }))
    return success();
  if (isChainOp(op))
    return visitElementwise(op);
  if (std::optional<RowReduction> red = matchRowReduction(op))
    return visitRowReduction(op, *red);
  return TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](tensor::CollapseShapeOp c) {
        Value src = c.getSrc();
        Value g = gradient(c.getResult());
        auto type = withElement(src.getType(), elementOf(g));
        SmallVector<OpFoldResult> sizes;
        for (auto [i, d] : llvm::enumerate(type.getShape()))
          sizes.push_back(
              ShapedType::isDynamic(d)
                  ? OpFoldResult(
                        tensor::DimOp::create(adjoint, loc(), shapeOf(src), i)
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
                   narrow == g
                       ? gathered.getResult()
                       : Value(ConvertOp::create(
                             adjoint, loc(),
                             withElement(gathered.getType(), elementOf(g)),
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
      .Case([&](LocalShardOp l) -> LogicalResult {
        auto arg = dyn_cast<BlockArgument>(l.getSource());
        if (!arg)
          return l.emitOpError() << "cannot differentiate the chunk of a "
                                    "sharded value that is not an argument";
        Value g = convertTo(gradient(l.getResult()), elementOf(arg));
        grads[arg] = add(grads.lookup(arg), g);
        return success();
      })
      .Case([&](LocalChunkOp l) { return visitLocalChunk(l); })
      .Case([&](GemmOp g) { return visitGemm(g); })
      .Case([&](AttentionOp a) { return visitAttention(a); })
      .Case([&](RopeOp r) { return visitRope(r); })
      .Case([&](LocalSliceOp l) { return visitLocalSlice(l); })
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
