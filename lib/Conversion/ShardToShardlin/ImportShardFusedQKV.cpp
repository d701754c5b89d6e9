//===- ImportShardFusedQKV.cpp - Fused q/k/v weights into three linears ---===//
//
// GPT-2's c_attn and many Llama conversions hold q, k and v in one weight
// [(Hq + 2 Hkv) D, H] (and one bias): the model computes the fused
// projection and slices its features into q, k and v. Tensor parallelism
// over heads gives each rank three row ranges of that weight (its q heads,
// its k heads, its v heads), which no single chunk spec states. Before the
// function's walk, this file rewrites each such projection, in the global
// view, into three linears on the weight's row ranges, each annotated with
// head-aligned bounds over the grid; the import then sees three plain
// col-wise linears feeding the attention (docs/attention.md, "Fused QKV").
//
// The fused weight's annotation is `split_axes = [[0]]` (its rows over the
// grid axis) without offsets: "tensor-parallel over heads". A contiguous
// split of the fused rows (PyTorch DTensor's ColwiseParallel on c_attn)
// would give rank 0 all of q and part of k, which no attention can use, so
// it is not offered. A constant weight is sliced into three constants; a
// parameter argument (`shardlin.parameter`) into three parameter arguments
// of the same name with `shardlin.parameter_rows`, so that each rank reads
// only its ranges from the checkpoint.
//
//===----------------------------------------------------------------------===//

#include "ImportShardInternal.h"

#include "shardlin/Dialect/Shardlin/IR/ArgAttrs.h"
#include "shardlin/runtime/base/ChunkLayout.h"

#include "mlir/IR/Verifier.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::shardlin;
using namespace mlir::shardlin::import;

namespace {

/// The exporter's linear on a fused weight: shard.shard of the weight,
/// linalg.transpose, (for a 3-D x) the broadcast generic, the matmul, (with
/// a bias) the add generic; its result sliced along the last dim.
struct FusedProjection {
  shard::ShardOp weight;
  shard::ShardOp bias; // null without a bias or with an unannotated one
  Value biasValue;     // the bias operand of the add (annotated or not)
  SmallVector<Operation *> chain; // in program order
  Value result;
  SmallVector<tensor::ExtractSliceOp> slices; // by offset
};

/// The dims of a tensor.extract_slice that takes a range of the last dim
/// and the whole of every other: [offset, offset + size) of it.
std::optional<std::pair<int64_t, int64_t>>
lastDimRange(tensor::ExtractSliceOp op) {
  auto source = op.getSourceType();
  if (!source.hasStaticShape() ||
      op.getResultType().getRank() != source.getRank())
    return std::nullopt;
  ArrayRef<int64_t> offsets = op.getStaticOffsets(),
                    sizes = op.getStaticSizes(),
                    strides = op.getStaticStrides();
  const int64_t last = source.getRank() - 1;
  for (int64_t d = 0; d <= last; ++d) {
    if (ShapedType::isDynamic(offsets[d]) || ShapedType::isDynamic(sizes[d]) ||
        strides[d] != 1)
      return std::nullopt;
    if (d < last && (offsets[d] != 0 || sizes[d] != source.getDimSize(d)))
      return std::nullopt;
  }
  return std::make_pair(offsets[last], sizes[last]);
}

/// The shard.shard that annotates `v` for its producer, if any.
shard::ShardOp annotation(Value v) {
  auto op = v.getDefiningOp<shard::ShardOp>();
  return op && !op.getAnnotateForUsers() ? op : shard::ShardOp();
}

/// Whether `op` is a generic whose body is one arith.addf of its two
/// inputs (the exporter's bias add).
bool isAddGeneric(linalg::GenericOp op) {
  Block &body = op.getRegion().front();
  return op.getNumDpsInputs() == 2 && op.getNumDpsInits() == 1 &&
         body.getOperations().size() == 2 && isa<arith::AddFOp>(body.front());
}

/// The linear that computes `v` on an annotated weight, in the exporter's
/// form, or nothing.
std::optional<FusedProjection> traceProjection(Value v) {
  FusedProjection p;
  p.result = v;
  Value mm = v;
  if (auto add = v.getDefiningOp<linalg::GenericOp>();
      add && isAddGeneric(add)) {
    for (unsigned i = 0; i < 2; ++i) {
      Value in = add.getDpsInputOperand(i)->get();
      auto t = dyn_cast<RankedTensorType>(in.getType());
      if (t && t.getRank() == 1) {
        p.biasValue = in;
        mm = add.getDpsInputOperand(1 - i)->get();
      }
    }
    if (!p.biasValue)
      return std::nullopt;
    p.bias = annotation(p.biasValue);
    p.chain.push_back(add);
  }
  Operation *matmul = mm.getDefiningOp();
  if (!isa_and_nonnull<linalg::MatmulOp, linalg::BatchMatmulOp>(matmul))
    return std::nullopt;
  p.chain.push_back(matmul);
  Value rhs = cast<linalg::LinalgOp>(matmul).getDpsInputOperand(1)->get();
  if (isa<linalg::BatchMatmulOp>(matmul)) {
    auto broadcast = rhs.getDefiningOp<linalg::GenericOp>();
    if (!broadcast || broadcast.getNumDpsInputs() != 1)
      return std::nullopt;
    p.chain.push_back(broadcast);
    rhs = broadcast.getDpsInputOperand(0)->get();
  }
  auto transpose = rhs.getDefiningOp<linalg::TransposeOp>();
  if (!transpose || transpose.getPermutation() != ArrayRef<int64_t>{1, 0})
    return std::nullopt;
  p.chain.push_back(transpose);
  p.weight = annotation(transpose.getInput());
  if (!p.weight)
    return std::nullopt;
  std::reverse(p.chain.begin(), p.chain.end());
  return p;
}

/// The sharding op of an annotation, and whether it splits dim 0 only.
shard::ShardingOp splitsRows(shard::ShardOp ann) {
  auto sharding = ann.getSharding().getDefiningOp<shard::ShardingOp>();
  if (!sharding)
    return {};
  ArrayRef<shard::GridAxesAttr> axes = sharding.getSplitAxes().getAxes();
  if (axes.empty() || axes[0].empty())
    return {};
  for (shard::GridAxesAttr a : axes.drop_front())
    if (!a.empty())
      return {};
  return sharding;
}

/// The head dim of a part: the last dim of the tensor.expand_shape that
/// reshapes it into [..., heads, head_dim], or 0.
int64_t headDimOf(tensor::ExtractSliceOp slice) {
  for (Operation *user : slice->getUsers()) {
    auto expand = dyn_cast<tensor::ExpandShapeOp>(user);
    if (!expand)
      continue;
    auto groups = expand.getReassociationIndices();
    if (!groups.empty() && groups.back().size() == 2 &&
        expand.getResultType().hasStaticShape())
      return expand.getResultType().getShape().back();
  }
  return 0;
}

/// `type` with its last dim `n`.
RankedTensorType withLastDim(RankedTensorType type, int64_t n) {
  SmallVector<int64_t> shape(type.getShape());
  shape.back() = n;
  return RankedTensorType::get(shape, type.getElementType());
}

/// Rewrites one fused projection (see the file comment).
class FusedSplitter {
public:
  FusedSplitter(func::FuncOp func, const Grid &grid, FusedProjection &p)
      : func_(func), grid_(grid), p_(p), b_(p.result.getDefiningOp()) {}

  LogicalResult run();

private:
  LogicalResult checkParts();
  LogicalResult checkAnnotation(shard::ShardOp ann, StringRef what);
  LogicalResult computeBounds();
  FailureOr<Value> sliceSource(Value source, int64_t part, StringRef what);
  Value annotate(Value v, shard::ShardOp like, int64_t part);
  Value narrow(Value v, int64_t n);
  LogicalResult buildPart(int64_t part);
  void eraseFused();

  func::FuncOp func_;
  const Grid &grid_;
  FusedProjection &p_;
  OpBuilder b_;
  int64_t headDim_ = 0;
  // [begin, size) of q, k, v in the fused features, and each part's bounds
  // over the grid.
  SmallVector<std::pair<int64_t, int64_t>, 3> parts_;
  SmallVector<std::vector<int64_t>, 3> bounds_;
  // The source arguments that the parts replace.
  SmallVector<BlockArgument> replacedArgs_;
  DenseMap<std::pair<Value, int64_t>, Value> narrowed_;
};

LogicalResult FusedSplitter::checkParts() {
  const int64_t n =
      cast<RankedTensorType>(p_.result.getType()).getShape().back();
  int64_t next = 0;
  for (tensor::ExtractSliceOp s : p_.slices) {
    auto [offset, size] = *lastDimRange(s);
    if (offset != next)
      return s.emitError() << "the fused q/k/v projection's slices do not tile "
                              "its "
                           << n << " features: this one starts at " << offset
                           << ", the previous ends at " << next;
    parts_.push_back({offset, size});
    next = offset + size;
  }
  if (next != n)
    return p_.slices.back().emitError()
           << "the fused q/k/v projection's slices end at " << next
           << " of its " << n << " features";
  // splitFusedProjections checked that q is reshaped into heads.
  headDim_ = headDimOf(p_.slices[0]);
  for (auto [i, s] : llvm::enumerate(p_.slices)) {
    auto [offset, size] = parts_[i];
    for (int64_t at : {offset, offset + size})
      if (at % headDim_ != 0)
        return s.emitError()
               << "slices the fused q/k/v weight at feature " << at
               << ", inside head " << at / headDim_ << " (head_dim " << headDim_
               << " of q): each of q, k and v must be whole heads";
    const char *name = i == 0 ? "q" : i == 1 ? "k" : "v";
    const int64_t d = headDimOf(s);
    if (d == 0)
      return s.emitError() << "the " << name
                           << " part of a fused q/k/v projection is not "
                              "reshaped into heads (a tensor.expand_shape to "
                              "[..., heads, head_dim]): the import splits the "
                              "fused weight in whole heads";
    if (d != headDim_)
      return s.emitError() << "the " << name
                           << " part of the fused q/k/v projection is "
                              "reshaped into heads of "
                           << d << " features, q into heads of " << headDim_;
  }
  if (parts_[1].second != parts_[2].second)
    return p_.slices[2].emitError()
           << "the fused projection's k and v parts differ in size ("
           << parts_[1].second << " and " << parts_[2].second << " features)";
  return success();
}

LogicalResult FusedSplitter::checkAnnotation(shard::ShardOp ann,
                                             StringRef what) {
  auto sharding = ann.getSharding().getDefiningOp<shard::ShardingOp>();
  if (!splitsRows(ann) || sharding.getGrid() != grid_.name)
    return ann.emitError() << "the fused q/k/v " << what
                           << " is not split on dim 0 over @" << grid_.name
                           << " as the weight is";
  if (!sharding.getStaticShardedDimsOffsets().empty() ||
      !sharding.getDynamicShardedDimsOffsets().empty() ||
      !sharding.getStaticHaloSizes().empty() ||
      !sharding.getDynamicHaloSizes().empty())
    return ann.emitError()
           << "a fused q/k/v " << what
           << " is split in whole heads of each of q, k and v (three row "
              "ranges per rank), which sharded_dims_offsets (one range per "
              "rank) cannot state: annotate it split on dim 0 without "
              "offsets or halos";
  return success();
}

LogicalResult FusedSplitter::computeBounds() {
  const int64_t hq = parts_[0].second / headDim_,
                hkv = parts_[1].second / headDim_, w = grid_.worldSize;
  if (hkv == 0 || hq % hkv != 0)
    return p_.weight.emitError()
           << "a fused q/k/v weight of " << hq << " query and " << hkv
           << " kv heads: the query heads must be a multiple of the kv heads";
  const int64_t g = hq / hkv;
  // Multi-head: every part in whole heads. GQA with W <= Hkv: whole groups
  // of g query heads with their kv heads. GQA with W > Hkv: q in whole
  // heads, k and v replicated (no bounds: not annotated), each rank's kv
  // heads sliced by the block lowering (docs/attention.md, "GQA").
  const bool replicateKv = g > 1 && w > hkv;
  const std::vector<int64_t> units =
      ::shardlin::rt::ceilBounds(g == 1 || replicateKv ? hq : hkv, w);
  for (int64_t part = 0; part < 3; ++part) {
    const int64_t scale = headDim_ * (part == 0 && !replicateKv ? g : 1);
    std::vector<int64_t> b;
    if (part == 0 || !replicateKv)
      for (int64_t u : units)
        b.push_back(u * scale);
    bounds_.push_back(std::move(b));
  }
  return success();
}

FailureOr<Value> FusedSplitter::sliceSource(Value source, int64_t part,
                                            StringRef what) {
  auto type = cast<RankedTensorType>(source.getType());
  auto [offset, size] = parts_[part];
  SmallVector<int64_t> shape(type.getShape());
  shape[0] = size;
  auto partType = RankedTensorType::get(shape, type.getElementType());
  const int64_t row = type.getNumElements() / type.getDimSize(0);
  if (auto cst = source.getDefiningOp<arith::ConstantOp>()) {
    auto value = dyn_cast<ElementsAttr>(cst.getValue());
    if (!value || !isSupportedElementType(type.getElementType()))
      return cst.emitError() << "the fused q/k/v " << what
                             << " is not a dense<...> or dense_resource<...> "
                                "tensor of f16, bf16, f32 or f64";
    // Its bytes as the whole constant would hold them.
    auto whole =
        mlir::shardlin::ConstantOp::create(b_, cst.getLoc(), type, value);
    FailureOr<std::vector<char>> bytes = whole.getBytes();
    whole.erase();
    if (failed(bytes))
      return failure();
    const size_t e = type.getElementTypeBitWidth() / 8;
    ArrayRef<char> rows(bytes->data() + offset * row * e, size * row * e);
    auto dense = DenseElementsAttr::getFromRawBuffer(partType, rows);
    return arith::ConstantOp::create(b_, cst.getLoc(), partType, dense)
        .getResult();
  }
  auto arg = dyn_cast<BlockArgument>(source);
  StringAttr name;
  if (arg && arg.getOwner()->getParentOp() == func_.getOperation())
    name = func_.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                              kParameterArgAttrName);
  if (!name)
    return p_.weight.emitError()
           << "the fused q/k/v " << what
           << " is neither a constant nor a parameter argument "
              "(shardlin.parameter): the import splits it into three row "
              "ranges, which it does for a constant and for a parameter that "
              "each rank reads from a checkpoint (--params)";
  int64_t base = 0;
  if (auto rows = func_.getArgAttrOfType<DenseI64ArrayAttr>(
          arg.getArgNumber(), kParameterRowsArgAttrName);
      rows && rows.size() == 2)
    base = rows[0];
  MLIRContext *ctx = func_.getContext();
  NamedAttribute attrs[] = {
      NamedAttribute(StringAttr::get(ctx, kParameterArgAttrName), name),
      NamedAttribute(
          StringAttr::get(ctx, kParameterRowsArgAttrName),
          DenseI64ArrayAttr::get(ctx, {base + offset, base + offset + size}))};
  // After the argument and the parts inserted before this one.
  unsigned at = arg.getArgNumber() + 1 + part;
  if (failed(func_.insertArgument(at, partType, DictionaryAttr::get(ctx, attrs),
                                  arg.getLoc())))
    return failure();
  if (part == 0)
    replacedArgs_.push_back(arg);
  return Value(func_.getArgument(at));
}

Value FusedSplitter::annotate(Value v, shard::ShardOp like, int64_t part) {
  if (bounds_[part].empty())
    return v; // replicated: every rank holds the whole part
  auto sharding = like.getSharding().getDefiningOp<shard::ShardingOp>();
  Location loc = like.getLoc();
  MLIRContext *ctx = b_.getContext();
  auto split = shard::ShardingOp::create(
      b_, loc, FlatSymbolRefAttr::get(ctx, sharding.getGrid()),
      sharding.getSplitAxes(), DenseI64ArrayAttr::get(ctx, bounds_[part]),
      ValueRange{}, DenseI64ArrayAttr::get(ctx, {}), ValueRange{});
  return shard::ShardOp::create(b_, loc, v, split.getResult(), UnitAttr())
      .getResult();
}

Value FusedSplitter::narrow(Value v, int64_t n) {
  if (Value done = narrowed_.lookup({v, n}))
    return done;
  Value built;
  if (auto empty = v.getDefiningOp<tensor::EmptyOp>()) {
    built = tensor::EmptyOp::create(
        b_, empty.getLoc(), withLastDim(empty.getType(), n).getShape(),
        empty.getType().getElementType(), empty.getDynamicSizes());
  } else if (auto fill = v.getDefiningOp<linalg::FillOp>()) {
    Value init = narrow(fill.getDpsInitOperand(0)->get(), n);
    if (!init)
      return {};
    built = linalg::FillOp::create(b_, fill.getLoc(),
                                   fill.getDpsInputOperand(0)->get(), init)
                .getResult(0);
  }
  if (built)
    narrowed_[{v, n}] = built;
  return built;
}

LogicalResult FusedSplitter::buildPart(int64_t part) {
  const int64_t n = parts_[part].second;
  const int64_t fused =
      cast<RankedTensorType>(p_.result.getType()).getShape().back();
  IRMapping map;
  FailureOr<Value> w = sliceSource(p_.weight.getSrc(), part, "weight");
  if (failed(w))
    return failure();
  map.map(p_.weight.getResult(), annotate(*w, p_.weight, part));
  if (p_.biasValue) {
    Value source = p_.bias ? p_.bias.getSrc() : p_.biasValue;
    FailureOr<Value> bias = sliceSource(source, part, "bias");
    if (failed(bias))
      return failure();
    map.map(p_.biasValue, p_.bias ? annotate(*bias, p_.bias, part) : *bias);
  }
  Operation *last = nullptr;
  for (Operation *op : p_.chain) {
    // The inits of the fused width (its features are the last dim of every
    // init and result of the chain) at the part's width.
    for (Value operand : op->getOperands()) {
      auto t = dyn_cast<RankedTensorType>(operand.getType());
      if (map.contains(operand) || !t || t.getRank() == 0 ||
          t.getShape().back() != fused)
        continue;
      if (Value narrowed = narrow(operand, n))
        map.map(operand, narrowed);
    }
    last = b_.clone(*op, map);
    for (Value r : last->getResults())
      r.setType(withLastDim(cast<RankedTensorType>(r.getType()), n));
    if (failed(mlir::verify(last)))
      return last->emitError() << "internal: the q/k/v part " << part
                               << " of the fused projection does not verify";
  }
  tensor::ExtractSliceOp slice = p_.slices[part];
  if (last->getResult(0).getType() != slice.getType())
    return slice.emitError()
           << "internal: the part's type " << last->getResult(0).getType()
           << " is not the slice's";
  slice.getResult().replaceAllUsesWith(last->getResult(0));
  return success();
}

void FusedSplitter::eraseFused() {
  for (tensor::ExtractSliceOp s : p_.slices)
    s.erase();
  SmallVector<Operation *> dead(p_.chain.rbegin(), p_.chain.rend());
  for (shard::ShardOp ann : {p_.weight, p_.bias})
    if (ann) {
      dead.push_back(ann);
      dead.push_back(ann.getSharding().getDefiningOp());
      dead.push_back(ann.getSrc().getDefiningOp());
    }
  for (Operation *op : dead)
    if (op && op->use_empty())
      op->erase();
  // The fused parameter arguments, now that their parts replace them.
  for (BlockArgument arg : llvm::reverse(replacedArgs_))
    if (arg.use_empty())
      (void)func_.eraseArgument(arg.getArgNumber());
}

LogicalResult FusedSplitter::run() {
  if (failed(checkParts()) || failed(checkAnnotation(p_.weight, "weight")) ||
      (p_.bias && failed(checkAnnotation(p_.bias, "bias"))) ||
      failed(computeBounds()))
    return failure();
  for (int64_t part = 0; part < 3; ++part)
    if (failed(buildPart(part)))
      return failure();
  eraseFused();
  return success();
}

} // namespace

LogicalResult mlir::shardlin::import::splitFusedProjections(func::FuncOp func,
                                                            const Grid &grid) {
  if (func.isExternal())
    return success();
  // The projections whose results only last-dim slices use, in order.
  SmallVector<Value> sliced;
  func.walk([&](tensor::ExtractSliceOp op) {
    if (lastDimRange(op) && !llvm::is_contained(sliced, op.getSource()))
      sliced.push_back(op.getSource());
  });
  for (Value v : sliced) {
    std::optional<FusedProjection> p = traceProjection(v);
    if (!p || !splitsRows(p->weight))
      continue;
    Operation *whole = nullptr;
    for (Operation *user : v.getUsers()) {
      auto slice = dyn_cast<tensor::ExtractSliceOp>(user);
      if (slice && lastDimRange(slice))
        p->slices.push_back(slice);
      else
        whole = user;
    }
    llvm::sort(p->slices,
               [](tensor::ExtractSliceOp a, tensor::ExtractSliceOp b) {
                 return lastDimRange(a)->first < lastDimRange(b)->first;
               });
    // q, k and v: three slices, the first reshaped into heads. Anything
    // else (a fused gate/up pair, a slice for another use) is left to the
    // walk, as any linear's result.
    if (p->slices.size() != 3 || headDimOf(p->slices[0]) <= 0)
      continue;
    if (whole)
      return whole->emitError()
             << "uses the whole projection of a weight split by rows whose "
                "other users slice it into q, k and v: the import splits a "
                "fused q/k/v weight into three linears, which leaves no "
                "whole projection";
    if (failed(FusedSplitter(func, grid, *p).run()))
      return failure();
  }
  return success();
}
