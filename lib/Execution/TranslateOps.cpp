//===- TranslateOps.cpp - Instructions the translator builds itself -------===//

#include "TranslateOps.h"

#include "shardlin/Dialect/Shardlin/Transforms/ElementwiseChains.h"
#include "shardlin/runtime/program/OpTable.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"

using namespace mlir;
using namespace mlir::shardlin;
using namespace mlir::shardlin::translation;
namespace rt = ::shardlin::rt;

rt::ChunkSpec translation::toChunkSpec(ChunkAttr chunk) {
  rt::ChunkSpec spec;
  spec.dim = chunk.getDim();
  spec.placements.assign(chunk.getPlacements().begin(),
                         chunk.getPlacements().end());
  if (chunk.hasExplicitBounds())
    spec.bounds.assign(chunk.getBounds().begin(), chunk.getBounds().end());
  return spec;
}

rt::ChunkSpec translation::toChunkSpec(ShardedType type) {
  ChunkAttr chunk = type.getSharding();
  rt::ChunkSpec spec = toChunkSpec(chunk);
  const int64_t n = type.getShape()[chunk.getDim()];
  if (chunk.hasBlock() && !chunk.hasExplicitBounds() &&
      !ShapedType::isDynamic(n)) {
    SmallVector<int64_t> bounds = chunk.getBoundsFor(n);
    spec.bounds.assign(bounds.begin(), bounds.end());
  }
  return spec;
}

FailureOr<Value> translation::dimsSource(ArrayRef<OpFoldResult> sizes,
                                    RankedTensorType type, bool leading) {
  Value like;
  for (auto [position, size] : llvm::enumerate(sizes)) {
    auto v = dyn_cast<Value>(size);
    if (!v)
      continue;
    auto dim = v.getDefiningOp<tensor::DimOp>();
    std::optional<int64_t> index = dim ? dim.getConstantIndex() : std::nullopt;
    if (!dim || !index || *index != static_cast<int64_t>(position))
      return failure();
    int64_t rank = cast<RankedTensorType>(dim.getSource().getType()).getRank();
    if ((leading ? rank < type.getRank() : rank != type.getRank()) ||
        (like && dim.getSource() != like))
      return failure();
    like = dim.getSource();
  }
  return like;
}

int translation::appendPower(rt::ExprProgram &expr, int base,
                             int64_t exponent) {
  auto add = [&](rt::ExprNode n) -> FailureOr<int> {
    expr.nodes.push_back(n);
    return static_cast<int>(expr.nodes.size()) - 1;
  };
  auto binary = [&](rt::ExprOp op, int lhs, int rhs) {
    rt::ExprNode n;
    n.op = op;
    n.args[0] = lhs;
    n.args[1] = rhs;
    return add(n);
  };
  auto one = [&] {
    rt::ExprNode n;
    n.op = rt::ExprOp::Const;
    n.value = 1.0;
    return add(n);
  };
  FailureOr<int> result = expandPower(
      base, exponent,
      [&](int lhs, int rhs) { return binary(rt::ExprOp::Mul, lhs, rhs); },
      [&](int x) -> FailureOr<int> {
        FailureOr<int> c = one();
        return binary(rt::ExprOp::Div, *c, x);
      },
      one);
  return *result; // The callbacks above never fail.
}

FailureOr<int> translation::elementwiseOperand(Operation &root, Value v,
                                               InstrSink &sink) {
  FailureOr<int> id = sink.operand(&root, v);
  Type elt = getElementTypeOrSelf(root.getResult(0).getType());
  auto type = cast<RankedTensorType>(v.getType());
  if (failed(id) || type.getElementType() == elt)
    return id;
  rt::Instr convert;
  convert.op = rt::OpCode::Convert;
  convert.operands = {*id};
  FailureOr<int> converted =
      sink.define(v.getLoc(), Value(), type.clone(elt));
  if (failed(converted))
    return failure();
  convert.result = *converted;
  sink.append(root.getLoc(), std::move(convert));
  return converted;
}

//===----------------------------------------------------------------------===//
// linalg.matmul
//===----------------------------------------------------------------------===//

namespace {

/// Whether `v` is all zeros (+0.0): a linalg.fill of the constant 0.0 or a
/// splat constant of it.
bool isZeroTensor(Value v) {
  auto isZero = [](Attribute a) {
    auto f = dyn_cast_or_null<FloatAttr>(a);
    return f && f.getValue().isPosZero();
  };
  if (auto fill = v.getDefiningOp<linalg::FillOp>()) {
    auto c = fill.getInputs()[0].getDefiningOp<arith::ConstantOp>();
    return c && isZero(c.getValue());
  }
  if (auto c = v.getDefiningOp<arith::ConstantOp>())
    if (auto splat = dyn_cast<SplatElementsAttr>(c.getValue()))
      return isZero(splat.getSplatValue<Attribute>());
  return false;
}

/// The gemm's transposes of a matmul's indexing maps: (d0, d2) x (d2, d1)
/// -> (d0, d1), either operand transposed ((d2, d0), (d1, d2)).
std::optional<std::pair<bool, bool>> transposesOf(linalg::MatmulOp op) {
  MLIRContext *ctx = op.getContext();
  AffineExpr m = getAffineDimExpr(0, ctx), n = getAffineDimExpr(1, ctx),
             k = getAffineDimExpr(2, ctx);
  auto map = [&](AffineExpr a, AffineExpr b) {
    return AffineMap::get(3, 0, {a, b}, ctx);
  };
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if (maps.size() != 3 || maps[2] != map(m, n))
    return std::nullopt;
  std::optional<bool> lhs, rhs;
  if (maps[0] == map(m, k) || maps[0] == map(k, m))
    lhs = maps[0] == map(k, m);
  if (maps[1] == map(k, n) || maps[1] == map(n, k))
    rhs = maps[1] == map(n, k);
  if (!lhs || !rhs)
    return std::nullopt;
  return std::make_pair(*lhs, *rhs);
}

/// The runtime's element type of a float type, if it has one.
std::optional<rt::DType> dtypeOf(Type t) {
  if (t.isF16())
    return rt::DType::F16;
  if (t.isBF16())
    return rt::DType::BF16;
  if (t.isF32())
    return rt::DType::F32;
  if (t.isF64())
    return rt::DType::F64;
  return std::nullopt;
}

} // namespace

bool translation::isOnlyZeroMatmulInit(Operation &op) {
  if (op.getNumResults() != 1 || !isZeroTensor(op.getResult(0)) ||
      op.getResult(0).use_empty())
    return false;
  return llvm::all_of(op.getResult(0).getUses(), [](OpOperand &use) {
    auto matmul = dyn_cast<linalg::MatmulOp>(use.getOwner());
    return matmul && matmul.isDpsInit(&use);
  });
}

LogicalResult translation::translateMatmul(linalg::MatmulOp op, InstrSink &sink) {
  if (!op.hasPureTensorSemantics())
    return op.emitError() << "the shardlin runtime executes linalg.matmul on "
                             "tensors, not on buffers";
  std::optional<std::pair<bool, bool>> transposes = transposesOf(op);
  if (!transposes)
    return op.emitError()
           << "the shardlin runtime executes a linalg.matmul whose indexing "
              "maps are the default ones or transpose an operand "
              "((d0, d2) or (d2, d0), (d2, d1) or (d1, d2), (d0, d1))";
  Value lhs = op.getInputs()[0], rhs = op.getInputs()[1],
        init = op.getOutputs()[0];
  Type t = getElementTypeOrSelf(lhs.getType());
  Type r = getElementTypeOrSelf(init.getType());
  std::optional<rt::DType> operands = dtypeOf(t), result = dtypeOf(r);
  const bool narrow =
      operands == rt::DType::F16 || operands == rt::DType::BF16;
  if (!operands || getElementTypeOrSelf(rhs.getType()) != t || !result ||
      (r != t && !(narrow && r.isF32())))
    return op.emitError()
           << "the shardlin runtime executes a linalg.matmul of two f16, "
              "bf16, f32 or f64 operands of one type into that type (or f32 "
              "for f16 and bf16), not "
           << lhs.getType() << " x " << rhs.getType() << " into "
           << init.getType();
  rt::Instr gemm;
  gemm.op = rt::OpCode::Gemm;
  gemm.transposeLhs = transposes->first;
  gemm.transposeRhs = transposes->second;
  for (Value v : {lhs, rhs}) {
    FailureOr<int> id = sink.operand(op, v);
    if (failed(id))
      return failure();
    gemm.operands.push_back(*id);
  }
  Value out = op.getResult(0);
  const bool addInit = !isZeroTensor(init);
  FailureOr<int> product =
      sink.define(op.getLoc(), addInit ? Value() : out, out.getType());
  if (failed(product))
    return failure();
  gemm.result = *product;
  sink.append(op.getLoc(), std::move(gemm));
  if (!addInit)
    return success();
  // C + A B: the product, then the init added (rounded once more).
  FailureOr<int> c = sink.operand(op, init);
  if (failed(c))
    return failure();
  rt::Instr add;
  add.op = rt::OpCode::Elementwise;
  add.operands = {*product, *c};
  rt::ExprNode a, b, sum;
  a.op = b.op = rt::ExprOp::Input;
  a.input = 0;
  b.input = 1;
  sum.op = rt::ExprOp::Add;
  sum.args[0] = 0;
  sum.args[1] = 1;
  add.expr.nodes = {a, b, sum};
  FailureOr<int> id = sink.define(op.getLoc(), out, out.getType());
  if (failed(id))
    return failure();
  add.result = *id;
  sink.append(op.getLoc(), std::move(add));
  return success();
}

//===----------------------------------------------------------------------===//
// from_local
//===----------------------------------------------------------------------===//

LogicalResult translation::translateFromLocal(FromLocalOp op, InstrSink &sink) {
  auto sharded = cast<ShardedType>(op.getResult().getType());
  ChunkAttr chunk = sharded.getSharding();
  if (failed(sink.useWorldSize(op.getLoc(), chunk.getNumChunks())))
    return failure();
  FailureOr<int> source = sink.operand(op, op.getSource());
  if (failed(source))
    return failure();
  rt::Instr in;
  in.op = rt::OpCode::FromLocal;
  in.operands = {*source};
  in.along = toChunkSpec(chunk);
  SmallVector<int64_t> bounds =
      chunk.getBoundsFor(sharded.getShape()[chunk.getDim()]);
  in.along.bounds.assign(bounds.begin(), bounds.end());
  FailureOr<int> id =
      sink.define(op.getLoc(), op.getResult(), sharded.getLocalType());
  if (failed(id))
    return failure();
  in.result = *id;
  sink.append(op.getLoc(), std::move(in));
  return success();
}

//===----------------------------------------------------------------------===//
// Fills
//===----------------------------------------------------------------------===//

namespace {

/// The value whose dims give the dynamic dims of `v`, a value of a chain
/// that reads no tensor of its shape: the sizes of the tensor.empty it is
/// written into, through the inits of the linalg ops and the operands of
/// the arith and math ops that compute it.
FailureOr<Value> fillDims(Value v, RankedTensorType type, unsigned depth) {
  Operation *def = v.getDefiningOp();
  if (!def || depth > 64)
    return failure();
  if (auto empty = dyn_cast<tensor::EmptyOp>(def))
    return dimsSource(empty.getMixedSizes(), type, /*leading=*/true);
  SmallVector<Value> next;
  if (auto dps = dyn_cast<DestinationStyleOpInterface>(def))
    llvm::append_range(next, dps.getDpsInits());
  else
    llvm::append_range(next, def->getOperands());
  for (Value n : next) {
    auto t = dyn_cast<RankedTensorType>(n.getType());
    if (!t || t.getRank() != type.getRank())
      continue;
    FailureOr<Value> found = fillDims(n, type, depth + 1);
    if (succeeded(found))
      return found;
  }
  return failure();
}

} // namespace

LogicalResult translation::translateFill(Operation &root, rt::ExprProgram expr,
                                    ArrayRef<Value> vectors, InstrSink &sink) {
  Value out = root.getResult(0);
  auto type = cast<RankedTensorType>(out.getType());
  rt::Instr in;
  in.op = rt::OpCode::Fill;
  in.expr = std::move(expr);
  if (!type.hasStaticShape()) {
    FailureOr<Value> like = fillDims(out, type, 0);
    if (failed(like) || !*like)
      return root.emitError()
             << "the shardlin runtime fills a tensor of the dynamic shape "
             << type
             << " only when it is written into a tensor.empty whose dynamic "
                "sizes are the leading dims of one tensor (tensor.dim %t, i "
                "for dim i)";
    FailureOr<int> id = sink.operand(&root, *like);
    if (failed(id))
      return failure();
    in.operands.push_back(*id);
  }
  for (Value v : vectors) {
    FailureOr<int> id = sink.operand(&root, v);
    if (failed(id))
      return failure();
    in.operands.push_back(*id);
  }
  FailureOr<int> id = sink.define(root.getLoc(), out, type);
  if (failed(id))
    return failure();
  in.result = *id;
  sink.append(root.getLoc(), std::move(in));
  return success();
}
