//===- ImportShardLinearMatch.cpp - Recognizing a linear ------------------===//
//
// The first phase of a linear's import: what a `linalg.matmul` and the ops
// around it mean, read from the IR alone (no layouts, nothing built). The
// forms producers write: an activation x (M x K) times a weight stored
// K x N, or N x K through a transposing `indexing_maps` or a
// `linalg.transpose`; a bias added by a broadcast `linalg.generic`, by
// `linalg.broadcast` + `linalg.add` (or `linalg.elementwise`, `arith.addf`),
// or by initializing the matmul's `outs` with the broadcast bias.
// ImportShardLinear.cpp plans and builds the linear from the match.
//
//===----------------------------------------------------------------------===//

#include "ImportShardInternal.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::shardlin;
using namespace mlir::shardlin::import;

Value mlir::shardlin::import::throughShards(Value v) {
  while (auto s = v.getDefiningOp<shard::ShardOp>())
    v = s.getSrc();
  return v;
}

namespace {

AffineMap map2(MLIRContext *ctx, unsigned a, unsigned b) {
  return AffineMap::get(3, 0,
                        {getAffineDimExpr(a, ctx), getAffineDimExpr(b, ctx)},
                        ctx);
}


bool isSwap(linalg::TransposeOp t) {
  return t && t.hasPureTensorSemantics() &&
         t.getPermutation() == ArrayRef<int64_t>{1, 0};
}

/// The element types shardlin's linears take.
bool isLinearElementType(Type t) {
  return t.isF16() || t.isBF16() || t.isF32() || t.isF64();
}

/// A 2-D map broadcasting a vector along the last dim: (d0, d1) -> (d1).
bool isRowVectorMap(AffineMap map) {
  return map.getNumDims() == 2 && map.getNumResults() == 1 &&
         map.getResult(0) == getAffineDimExpr(1, map.getContext());
}

/// `v` is linalg.broadcast of a rank-1 vector along the last dim of a 2-D
/// tensor, into a tensor.empty: the vector.
Value broadcastVector(Value v) {
  auto bcast = v.getDefiningOp<linalg::BroadcastOp>();
  if (!bcast || !bcast.hasPureTensorSemantics() ||
      bcast.getDimensions() != ArrayRef<int64_t>{0} ||
      !bcast.getInit().getDefiningOp<tensor::EmptyOp>())
    return Value();
  return bcast.getInput();
}

/// `v` is a linalg.generic that copies a vector broadcast along the last dim
/// into a tensor.empty: the vector.
Value genericBroadcastVector(Value v) {
  auto g = v.getDefiningOp<linalg::GenericOp>();
  if (!g || !g.hasPureTensorSemantics() || g.getNumDpsInputs() != 1 ||
      g.getNumDpsInits() != 1 || !g.isAllParallelLoops() ||
      !g.getDpsInits()[0].getDefiningOp<tensor::EmptyOp>())
    return Value();
  SmallVector<AffineMap> maps = g.getIndexingMapsArray();
  if (!isRowVectorMap(maps[0]) || !maps[1].isIdentity())
    return Value();
  Block *body = g.getBody();
  if (body->getOperations().size() != 1 ||
      body->getTerminator()->getOperand(0) != body->getArgument(0))
    return Value();
  return g.getDpsInputs()[0];
}

/// `user` adds a vector broadcast along the last dim to `r`, whose only
/// user it is: the vector. The forms: a linalg.generic or
/// linalg.elementwise add with a (d0, d1) -> (d1) map, and linalg.add or
/// arith.addf of a broadcast vector.
Value biasAddVector(Operation *user, Value r) {
  if (auto addf = dyn_cast<arith::AddFOp>(user)) {
    Value other = addf.getLhs() == r ? addf.getRhs() : addf.getLhs();
    return other == r ? Value() : broadcastVector(other);
  }
  auto linalgOp = dyn_cast<linalg::LinalgOp>(user);
  if (!linalgOp || !linalgOp.hasPureTensorSemantics() ||
      linalgOp.getNumDpsInputs() != 2 || linalgOp.getNumDpsInits() != 1 ||
      !linalgOp.isAllParallelLoops())
    return Value();
  // The body adds its two inputs.
  Block *body = linalgOp.getBlock();
  if (body->getOperations().size() != 2)
    return Value();
  auto add = dyn_cast<arith::AddFOp>(body->front());
  if (!add || body->getTerminator()->getOperand(0) != add.getResult())
    return Value();
  auto args = body->getArguments();
  if (!((add.getLhs() == args[0] && add.getRhs() == args[1]) ||
        (add.getLhs() == args[1] && add.getRhs() == args[0])))
    return Value();
  Value init = linalgOp.getDpsInits()[0];
  if (init != r && !init.getDefiningOp<tensor::EmptyOp>())
    return Value();
  OpOperand *in0 = linalgOp.getDpsInputOperand(0);
  OpOperand *in1 = linalgOp.getDpsInputOperand(1);
  if (in1->get() == r)
    std::swap(in0, in1);
  if (in0->get() != r || !linalgOp.getMatchingIndexingMap(in0).isIdentity())
    return Value();
  AffineMap vectorMap = linalgOp.getMatchingIndexingMap(in1);
  if (vectorMap.isIdentity())
    return broadcastVector(in1->get());
  if (isRowVectorMap(vectorMap) &&
      cast<ShapedType>(in1->get().getType()).getRank() == 1)
    return in1->get();
  return Value();
}

} // namespace

/// The matmul's x is `collapse` of an N-D tensor, its (biased) result is
/// expanded back by `expand`: both fold into an N-D linear.
bool mlir::shardlin::import::foldsIntoNdLinear(tensor::CollapseShapeOp collapse,
                       tensor::ExpandShapeOp expand) {
  auto src = collapse.getSrcType();
  const int64_t rank = src.getRank();
  if (rank < 3 || !expand || expand.getResultType().getRank() != rank)
    return false;
  SmallVector<ReassociationIndices> want{{}, {rank - 1}};
  for (int64_t i = 0; i + 1 < rank; ++i)
    want[0].push_back(i);
  if (collapse.getReassociationIndices() != want ||
      expand.getReassociationIndices() != want)
    return false;
  ArrayRef<int64_t> in = src.getShape(), out = expand.getResultType().getShape();
  for (int64_t i = 0; i + 1 < rank; ++i)
    if (in[i] != out[i])
      return false;
  return true;
}


bool mlir::shardlin::import::feedsLinearsOnly(Operation *op) {
  if (auto t = dyn_cast<linalg::TransposeOp>(op)) {
    if (!isSwap(t) || t->use_empty())
      return false;
    return llvm::all_of(t->getUses(), [](OpOperand &use) {
      return isa<linalg::MatmulOp>(use.getOwner()) &&
             use.getOperandNumber() == 1;
    });
  }
  auto collapse = dyn_cast<tensor::CollapseShapeOp>(op);
  if (!collapse || !collapse->hasOneUse())
    return false;
  OpOperand &use = *collapse->getUses().begin();
  return isa<linalg::MatmulOp>(use.getOwner()) && use.getOperandNumber() == 0 &&
         collapse.getSrcType().getRank() >= 3;
}

FailureOr<LinearMatch> mlir::shardlin::import::matchMatmul(linalg::MatmulOp op) {
  MLIRContext *ctx = op.getContext();
  if (!op.hasPureTensorSemantics())
    return op.emitError() << "a linalg.matmul on buffers is not supported: "
                             "the import takes tensors";
  LinearMatch m;
  m.op = op;
  m.x = op.getInputs()[0];
  m.rhs = op.getInputs()[1];
  m.init = op.getOutputs()[0];
  auto aType = cast<RankedTensorType>(m.x.getType());
  auto bType = cast<RankedTensorType>(m.rhs.getType());
  auto cType = cast<RankedTensorType>(m.init.getType());
  Type elt = cType.getElementType();
  if (aType.getElementType() != elt || bType.getElementType() != elt ||
      !isLinearElementType(elt))
    return op.emitError()
           << "a matmul of " << aType.getElementType() << " and "
           << bType.getElementType() << " into " << elt
           << " is not supported: shardlin's linears take one element type, "
              "f16, bf16, f32 or f64 (convert with arith.extf/truncf around "
              "the matmul)";
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  const bool plain = maps[0] == map2(ctx, 0, 2) && maps[1] == map2(ctx, 2, 1) &&
                     maps[2] == map2(ctx, 0, 1);
  const bool transposedB = maps[0] == map2(ctx, 0, 2) &&
                           maps[1] == map2(ctx, 1, 2) &&
                           maps[2] == map2(ctx, 0, 1);
  if (!plain && !transposedB)
    return op.emitError()
           << "a matmul with these indexing_maps is not supported: a linear's "
              "weight is K x N ((d0, d2), (d2, d1), (d0, d1)) or N x K "
              "((d0, d2), (d1, d2), (d0, d1))";
  // The weight as stored: through a transpose, the other orientation.
  m.weight = m.rhs;
  m.kn = plain;
  if (auto t = throughShards(m.rhs).getDefiningOp<linalg::TransposeOp>();
      isSwap(t)) {
    m.weight = t.getInput();
    m.kn = !m.kn;
  }
  m.result = op.getResult(0);
  return m;
}

LogicalResult mlir::shardlin::import::matchBias(LinearMatch &m) {
  linalg::MatmulOp op = m.op;
  // The bias: the matmul's init or the add that follows it. Any other init
  // is added after the linear.
  Value init = throughShards(m.init);
  if (auto fill = init.getDefiningOp<linalg::FillOp>();
      fill && isBuildableAnywhere(init) &&
      matchPattern(fill.getInputs()[0], m_AnyZeroFloat())) {
  } else if (Value vec = broadcastVector(init)) {
    m.bias = vec;
  } else if (Value vec = genericBroadcastVector(init)) {
    m.bias = vec;
  } else if (init.getDefiningOp<tensor::EmptyOp>()) {
    return op.emitError() << "the matmul accumulates into a tensor.empty, "
                             "whose contents are undefined; initialize it "
                             "with linalg.fill or a broadcast bias";
  } else {
    m.addend = m.init;
  }
  // The add may read the matmul's result twice (as input and as init).
  Value result = op.getResult(0);
  if (!m.bias && !m.addend && !result.use_empty() &&
      llvm::all_equal(result.getUsers())) {
    Operation *user = *result.getUsers().begin();
    if (Value vec = biasAddVector(user, result)) {
      m.bias = vec;
      m.biasAdd = user;
      m.result = user->getResult(0);
    }
  }
  Type elt = cast<RankedTensorType>(m.init.getType()).getElementType();
  if (m.bias && cast<RankedTensorType>(m.bias.getType()).getElementType() != elt)
    return op.emitError() << "the bias's element type differs from the "
                             "matmul's "
                          << elt;
  return success();
}
