//===- AttentionBlock.cpp - Lowering an attention sub-block ---------------===//
//
// An attention block is a row-wise linear O (weight N x Hq*D, its input
// features split by spec S) whose input is a shardlin.attention (global
// form) of q, k and v, each the result of a projection of one input x:
// q a col-wise linear whose weight chunks are whole heads and equal O's;
// k and v col-wise linears with the same whole-head chunks, or (GQA with
// more ranks than kv heads) shardlin.gemm x * W^T with a replicated weight;
// q and k optionally through shardlin.rope. Rank r holds the query heads of
// its chunk [qb_r, qe_r) and needs the kv heads [qb_r / g, ceil(qe_r / g)).
// Lowered as one unit (Megatron-LM's sequence-parallel attention, for any
// head counts and chunks):
//
//   all_gather     x of every rank, in rank order            (W*B*S) x K
//   gemm (x3)      the rank's q, k, v heads                  (W*B*S) x f
//                  (k and v from a replicated weight: the rank's kv-head
//                  rows, shardlin.local_slice, ranges may overlap)
//   rope           rank-local, on the rank's heads           (W*B) x S x f
//   attention      rank-local, head tables q_heads/kv_heads  (W*B) x S x fq
//   gemm           P = O_r A_O[:, heads_r]^T                 (W*B*S) x N
//   reduce_scatter rank r's rows of the sum over ranks       (B*S) x N
//
// The rows of a rank are its own whole sequences (the attention op's
// semantics), so the gathered rows are W*B sequences of S. No collective
// runs between the all_gather and the reduce_scatter. With x replicated
// (every linear `layouts replicated -> replicated`), there is no all_gather
// and O's partial products are all_reduced.
//
// Not fused (an explain remark says why), the ops lower one by one, which
// is also exact: the attention then runs on the rank's rows with all heads.
//
//===----------------------------------------------------------------------===//

#include "AttentionBlock.h"

#include "shardlin/Dialect/Shardlin/IR/ArgAttrs.h"
#include "shardlin/Dialect/Shardlin/IR/ShardlinOps.h"
#include "shardlin/Dialect/Shardlin/Transforms/LoweringSupport.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace mlir::shardlin;
using namespace mlir::shardlin::detail;

namespace {

/// One projection: a col-wise linear, or a gemm with a replicated weight.
struct Projection {
  Operation *op = nullptr;
  RopeOp rope;
  /// A 2-D projection on a 3-D x: the collapse of x into rows and the
  /// expansion of the result back to [B, S, F].
  Operation *collapse = nullptr, *expand = nullptr;
  Value x;
  /// W pairs [begin, end) of global heads, by rank.
  SmallVector<int64_t> heads;
};

/// How x, the linears and O's result are spread: each rank's rows
/// (sequence-parallel, the default layouts) or the same rows on every rank
/// (`layouts replicated -> replicated` on every linear).
enum class Mode { Rows, Replicated };

bool hasMode(LinearOp op, Mode mode) {
  if (mode == Mode::Rows)
    return op.hasDefaultLayouts();
  return op.getInputLayout() == Layout::Replicated &&
         op.getResultLayout() == Layout::Replicated;
}

struct AttentionBlock {
  Mode mode = Mode::Rows;
  LinearOp o;
  /// A replicated O on a 3-D attention: the collapse of its input into rows
  /// and the expansion of its result back to [B, S, N].
  tensor::CollapseShapeOp oCollapse;
  tensor::ExpandShapeOp oExpand;
  AttentionOp att;
  Projection q, k, v;
  int64_t w = 0, d = 0, hq = 0, hkv = 0, g = 0;
  bool kvReplicated = false;
};

std::string list(ArrayRef<int64_t> values) {
  std::string s = "[";
  for (auto [i, v] : llvm::enumerate(values))
    s += (i ? ", " : "") + std::to_string(v);
  return s + "]";
}

/// `[b0, e0), [b1, e1), ...`
std::string pairs(ArrayRef<int64_t> t) {
  std::string s;
  for (size_t r = 0; r < t.size() / 2; ++r)
    s += (r ? " " : "") + ("[" + std::to_string(t[2 * r]) + ", " +
                           std::to_string(t[2 * r + 1]) + ")");
  return s;
}

/// Whether `v` is the same on every rank: a `shardlin.replicated` argument,
/// an arith.constant or a whole (not split) shardlin.constant.
bool isReplicated(Value v) {
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    auto fn = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
    return fn && arg.getOwner()->isEntryBlock() &&
           fn.getArgAttr(arg.getArgNumber(), kReplicatedArgAttrName);
  }
  if (auto cst = v.getDefiningOp<ConstantOp>())
    return !cst.getSharding();
  return v.getDefiningOp<arith::ConstantOp>() != nullptr;
}

/// Whether a reshape between `shaped` (3-D, [B, S, F]) and its rows
/// ([B*S, F]) has the groups [[0, 1], [2]].
bool isRowsReshape(RankedTensorType shaped,
                   ArrayRef<ReassociationIndices> groups) {
  SmallVector<ReassociationIndices> rows{{0, 1}, {2}};
  return shaped.getRank() == 3 && groups == ArrayRef(rows);
}

/// The projection computing `v` (through a rope), or why there is none.
std::string traceProjection(Value v, StringRef name, bool allowReplicated,
                            Mode mode, Projection &p) {
  if (auto rope = v.getDefiningOp<RopeOp>()) {
    if (!rope->hasOneUse())
      return name.str() + "'s rope result is also used outside the block";
    p.rope = rope;
    v = rope.getX();
  }
  if (!v.hasOneUse())
    return name.str() + "'s projection is also used outside the block";
  // A 2-D projection on a 3-D x reads its rows (tensor.collapse_shape
  // [B, S, K] -> [B*S, K]) and its result is expanded back to [B, S, F]:
  // a gemm with a replicated weight, or a replicated -> replicated linear
  // (the import's form of an N-D linear on a replicated x).
  auto expand = v.getDefiningOp<tensor::ExpandShapeOp>();
  if (expand) {
    v = expand.getSrc();
    if (!v.hasOneUse())
      return name.str() + "'s projection is also used outside the block";
  }
  auto lin = v.getDefiningOp<LinearOp>();
  auto gemm = v.getDefiningOp<GemmOp>();
  if (lin) {
    if (lin.splitsK() || !hasMode(lin, mode))
      return name.str() + " is not a col-wise linear with O's layouts (" +
             (mode == Mode::Rows ? "the default rows" : "replicated") + ")";
    p.op = lin;
    p.x = lin.getInput();
  } else if (gemm && allowReplicated) {
    if (gemm.getTransposeLhs() || !gemm.getTransposeRhs())
      return name.str() + " is a shardlin.gemm that is not x * W^T";
    if (!isReplicated(gemm.getRhs()) ||
        (gemm.getBias() && !isReplicated(gemm.getBias())))
      return name.str() + "'s gemm weight (or bias) is not the same on every "
                          "rank (a shardlin.replicated argument or a "
                          "constant)";
    p.op = gemm;
    p.x = gemm.getLhs();
  } else {
    return name.str() + " is not computed by a col-wise shardlin.linear" +
           (allowReplicated ? " or a shardlin.gemm with a replicated weight"
                            : "");
  }
  if (!expand)
    return {};
  auto collapse = p.x.getDefiningOp<tensor::CollapseShapeOp>();
  if (!collapse ||
      !isRowsReshape(collapse.getSrcType(),
                     collapse.getReassociationIndices()) ||
      !isRowsReshape(expand.getResultType(),
                     expand.getReassociationIndices())) {
    const std::string what = gemm ? "gemm" : "linear";
    return name.str() + "'s " + what +
           " on a 3-D x is not collapse_shape [[0, 1], [2]] of x, the " + what +
           " and expand_shape back";
  }
  p.collapse = collapse;
  p.expand = expand;
  p.x = collapse.getSrc();
  return {};
}

/// Rank r's heads [b, e) under a col-wise linear's weight chunks, or why
/// they are not whole heads.
std::string headTable(LinearOp lin, StringRef name, int64_t d,
                      SmallVectorImpl<int64_t> &table) {
  ChunkAttr chunk = lin.getWeightType().getSharding();
  SmallVector<int64_t> bounds = chunk.getBoundsFor(lin.getN());
  for (int64_t b : bounds)
    if (b % d != 0)
      return name.str() + "'s weight chunks (bounds " + list(bounds) +
             ") split a head of " + std::to_string(d) +
             " features: give the chunk `block = " + std::to_string(d) +
             "` (or a multiple) or bounds that are multiples of it";
  table.assign(2 * chunk.getNumChunks(), 0);
  for (auto [c, r] : llvm::enumerate(chunk.getPlacements())) {
    table[2 * r] = bounds[c] / d;
    table[2 * r + 1] = bounds[c + 1] / d;
  }
  return {};
}

/// The kv heads each rank's query heads need: [qb / g, ceil(qe / g)).
SmallVector<int64_t> neededKv(ArrayRef<int64_t> qHeads, int64_t g) {
  SmallVector<int64_t> need;
  for (size_t r = 0; r < qHeads.size() / 2; ++r) {
    int64_t b = qHeads[2 * r], e = qHeads[2 * r + 1];
    need.push_back(b == e ? 0 : b / g);
    need.push_back(b == e ? 0 : (e - 1) / g + 1);
  }
  return need;
}

/// The kv tables: those of k's and v's chunks (equal, covering what q
/// needs), or what q needs when k and v are replicated.
std::string kvTable(AttentionBlock &b) {
  SmallVector<int64_t> need = neededKv(b.q.heads, b.g);
  b.kvReplicated = isa<GemmOp>(b.k.op);
  if (b.kvReplicated != isa<GemmOp>(b.v.op))
    return "k and v are not both col-wise linears or both replicated gemms";
  if (b.kvReplicated) {
    b.k.heads = need;
    b.v.heads = need;
    return {};
  }
  for (Projection *p : {&b.k, &b.v}) {
    if (cast<LinearOp>(p->op).getWeightType().getNumRanks() != b.w)
      return std::string(p == &b.k ? "k" : "v") +
             "'s weight is split over another number of ranks than O's";
    std::string problem =
        headTable(cast<LinearOp>(p->op), p == &b.k ? "k" : "v", b.d, p->heads);
    if (!problem.empty())
      return problem;
  }
  if (b.k.heads != b.v.heads)
    return "k's and v's weight chunks give the ranks different kv heads (" +
           pairs(b.k.heads) + " and " + pairs(b.v.heads) + ")";
  for (int64_t r = 0; r < b.w; ++r) {
    if (need[2 * r] == need[2 * r + 1])
      continue;
    if (b.k.heads[2 * r] > need[2 * r] ||
        b.k.heads[2 * r + 1] < need[2 * r + 1])
      return "rank " + std::to_string(r) + "'s query heads [" +
             std::to_string(b.q.heads[2 * r]) + ", " +
             std::to_string(b.q.heads[2 * r + 1]) + ") need kv heads [" +
             std::to_string(need[2 * r]) + ", " +
             std::to_string(need[2 * r + 1]) + ") (group " +
             std::to_string(b.g) + "), but its k/v chunk holds [" +
             std::to_string(b.k.heads[2 * r]) + ", " +
             std::to_string(b.k.heads[2 * r + 1]) +
             "): split q in whole groups (block = group * head_dim) or "
             "replicate K and V";
  }
  return {};
}

/// Why the O linear `o` does not end an attention block, or empty.
std::string blockProblem(AttentionBlock &b) {
  LinearOp o = b.o;
  Value in = o.getInput();
  if (auto collapse = in.getDefiningOp<tensor::CollapseShapeOp>()) {
    // The import's replicated O on [B, S, Hq*D]: a 2-D linear between a
    // collapse and an expand.
    auto expand = o->hasOneUse()
                      ? dyn_cast<tensor::ExpandShapeOp>(*o->getUsers().begin())
                      : tensor::ExpandShapeOp();
    if (!in.hasOneUse() || !expand ||
        !isRowsReshape(collapse.getSrcType(),
                       collapse.getReassociationIndices()) ||
        !isRowsReshape(expand.getResultType(),
                       expand.getReassociationIndices()))
      return "its input is a collapse of the attention, but not collapse_shape "
             "[[0, 1], [2]], O and expand_shape back";
    b.oCollapse = collapse;
    b.oExpand = expand;
    in = collapse.getSrc();
  }
  b.att = in.getDefiningOp<AttentionOp>();
  if (!b.att)
    return "its input is not a shardlin.attention";
  AttentionOp att = b.att;
  if (att.isRankLocal())
    return "the attention is already rank-local";
  if (!att->hasOneUse())
    return "the attention's result is also used outside the block";
  for (auto [value, name, p] :
       {std::tuple{att.getQ(), "q", &b.q}, std::tuple{att.getK(), "k", &b.k},
        std::tuple{att.getV(), "v", &b.v}}) {
    std::string problem =
        traceProjection(value, name, /*allowReplicated=*/p != &b.q, b.mode, *p);
    if (!problem.empty())
      return problem;
  }
  if (b.v.rope)
    return "v goes through a rope (only q and k may)";
  // Fused, a rank applies its own rope tables and mask to every rank's
  // sequences: they must be the same on every rank.
  for (Projection *p : {&b.q, &b.k})
    if (p->rope &&
        (!isReplicated(p->rope.getCos()) || !isReplicated(p->rope.getSin())))
      return "the rope's cos/sin tables are not the same on every rank (a "
             "shardlin.replicated argument or a constant)";
  if (att.getMask() && !isReplicated(att.getMask()))
    return "the mask is not the same on every rank (a shardlin.replicated "
           "argument or a constant)";
  if (b.k.x != b.q.x || b.v.x != b.q.x)
    return "its projections read different inputs";
  auto qType = cast<RankedTensorType>(att.getQ().getType());
  auto kType = cast<RankedTensorType>(att.getK().getType());
  if (qType.isDynamicDim(qType.getRank() - 2))
    return "the sequence length is dynamic (the gathered rows are split "
           "into sequences of a static length)";
  b.d = att.getHeadDim();
  b.w = o.getWeightType().getNumRanks();
  b.hq = qType.getShape().back() / b.d;
  b.hkv = kType.getShape().back() / b.d;
  b.g = b.hq / b.hkv;
  auto qLin = cast<LinearOp>(b.q.op);
  if (qLin.getWeightType().getNumRanks() != b.w)
    return "q's weight is split over another number of ranks than O's";
  if (!qLin.getWeightType().getSharding().sameChunks(
          o.getWeightType().getSharding(), o.getK()))
    return "O's input-feature chunks are not q's";
  std::string problem = headTable(qLin, "q", b.d, b.q.heads);
  if (problem.empty())
    problem = kvTable(b);
  if (!problem.empty())
    return problem;
  mlir::Block *block = o->getBlock();
  for (Operation *op : {b.q.op, b.k.op, b.v.op, att.getOperation()})
    if (op->getBlock() != block)
      return "its ops are in another block or region";
  return {};
}

/// Each pair of `heads` times `d`: the rows of a rank's heads.
SmallVector<int64_t> timesD(ArrayRef<int64_t> heads, int64_t d) {
  SmallVector<int64_t> out;
  for (int64_t h : heads)
    out.push_back(h * d);
  return out;
}

/// The rank's feature count: static if every rank holds as many heads.
int64_t localFeatures(ArrayRef<int64_t> heads, int64_t d) {
  for (size_t r = 1; r < heads.size() / 2; ++r)
    if (heads[2 * r + 1] - heads[2 * r] != heads[1] - heads[0])
      return ShapedType::kDynamic;
  return (heads[1] - heads[0]) * d;
}

/// `rows` ((W*B*S) x f) as W*B sequences of `s`: (W*B) x S x f.
Value toSequences(OpBuilder &b, Location loc, Value rows, int64_t s) {
  auto type = cast<RankedTensorType>(rows.getType());
  const int64_t n = type.getDimSize(0), f = type.getDimSize(1);
  auto seqType =
      tensorOf({ShapedType::isDynamic(n) ? ShapedType::kDynamic : n / s, s, f},
               type.getElementType());
  SmallVector<ReassociationIndices> groups{{0, 1}, {2}};
  if (seqType.hasStaticShape())
    return tensor::ExpandShapeOp::create(b, loc, seqType, rows, groups);
  auto dimOf = [&](int64_t i) -> OpFoldResult {
    if (!type.isDynamicDim(i))
      return b.getIndexAttr(type.getDimSize(i));
    return tensor::DimOp::create(b, loc, rows, i).getResult();
  };
  // The number of sequences: rows / S.
  OpFoldResult seqs = b.getIndexAttr(seqType.getDimSize(0));
  if (seqType.isDynamicDim(0))
    seqs = arith::DivUIOp::create(b, loc, cast<Value>(dimOf(0)),
                                  arith::ConstantIndexOp::create(b, loc, s))
               .getResult();
  return tensor::ExpandShapeOp::create(
      b, loc, seqType, rows, groups,
      ArrayRef<OpFoldResult>{seqs, b.getIndexAttr(s), dimOf(1)});
}

/// The rank's heads of one projection of the gathered rows, as sequences,
/// through its rope.
Value project(OpBuilder &b, Projection &p, Value gathered, int64_t d,
              int64_t s) {
  Location loc = p.op->getLoc();
  auto gType = cast<RankedTensorType>(gathered.getType());
  Type elt = gType.getElementType();
  const int64_t k = gType.getDimSize(1);
  const int64_t f = localFeatures(p.heads, d);
  Value a, bias;
  bool transposeRhs = true;
  if (auto lin = dyn_cast<LinearOp>(p.op)) {
    a = LocalShardOp::create(b, loc, lin.getWeightType().getLocalType(),
                             lin.getWeight());
    if (Value full = lin.getBias())
      bias = LocalChunkOp::create(b, loc, tensorOf({f}, elt), full,
                                  lin.getWeightType().getSharding().withDim(0));
    transposeRhs = !lin.getWeightKn();
  } else {
    // The rank's kv-head rows of the replicated weight (and bias); the
    // ranges of neighbouring ranks may overlap.
    auto gemm = cast<GemmOp>(p.op);
    SmallVector<int64_t> ranges = timesD(p.heads, d);
    a = LocalSliceOp::create(b, loc, tensorOf({f, k}, elt), gemm.getRhs(),
                             /*dim=*/0, ranges);
    if (Value full = gemm.getBias())
      bias = LocalSliceOp::create(b, loc, tensorOf({f}, elt), full,
                                  /*dim=*/0, ranges);
  }
  auto h =
      GemmOp::create(b, loc, tensorOf({gType.getDimSize(0), f}, elt), gathered,
                     a, bias, /*transpose_lhs=*/false, transposeRhs);
  annotateLowering(h, "attention-block", nullptr);
  Value seqs = toSequences(b, loc, h, s);
  if (p.rope)
    seqs = RopeOp::create(b, p.rope.getLoc(), seqs.getType(), seqs,
                          p.rope.getCos(), p.rope.getSin(),
                          p.rope.getHeadDimAttr(), p.rope.getInverseAttr());
  return seqs;
}

void lowerAttentionBlock(AttentionBlock &blk) {
  LinearOp o = blk.o;
  AttentionOp att = blk.att;
  MLIRContext *ctx = o.getContext();
  IRRewriter rw(ctx);
  rw.setInsertionPoint(o);
  Value x = blk.q.x;
  auto xType = cast<RankedTensorType>(x.getType());
  Type elt = xType.getElementType();
  auto qType = cast<RankedTensorType>(att.getQ().getType());
  const int64_t s = qType.getDimSize(qType.getRank() - 2);
  const int64_t k = xType.getShape().back(), n = o.getN();
  ChunkAttr rowBlocks = rankOrderRows(ctx, blk.w);

  int64_t batch = 0;
  Value rows = flattenToRows(rw, blk.q.op->getLoc(), x, batch);
  // Sequence-parallel rows are gathered; replicated rows are every rank's
  // already.
  const bool gather = blk.mode == Mode::Rows;
  const int64_t stacked = gather ? stackedRows(blk.w, batch) : batch;
  Value gathered = rows;
  if (gather)
    gathered = AllGatherOp::create(
        rw, blk.q.op->getLoc(), tensorOf({stacked, k}, elt), rows, rowBlocks);
  Value q = project(rw, blk.q, gathered, blk.d, s);
  Value kk = project(rw, blk.k, gathered, blk.d, s);
  Value v = project(rw, blk.v, gathered, blk.d, s);
  auto local = AttentionOp::create(
      rw, att.getLoc(), q.getType(), q, kk, v, att.getMask(),
      att.getHeadDimAttr(), rw.getF64FloatAttr(att.getScaleOrDefault()),
      att.getCausalAttr(), rw.getI64IntegerAttr(blk.g),
      rw.getDenseI64ArrayAttr(blk.q.heads),
      rw.getDenseI64ArrayAttr(blk.k.heads));
  auto localType = cast<RankedTensorType>(local.getType());
  Value e = tensor::CollapseShapeOp::create(
      rw, att.getLoc(), tensorOf({stacked, localType.getDimSize(2)}, elt),
      local, ArrayRef<ReassociationIndices>{{0, 1}, {2}});
  Value a2 = LocalShardOp::create(
      rw, o.getLoc(), o.getWeightType().getLocalType(), o.getWeight());
  auto p = GemmOp::create(rw, o.getLoc(),
                          tensorOf({stacked, n}, partialSumType(elt)), e, a2,
                          /*bias=*/Value(), /*transpose_lhs=*/false,
                          /*transpose_rhs=*/!o.getWeightKn());
  annotateLowering(p, "attention-block", nullptr);
  // The rank's rows of the sum over ranks, or (replicated) all of it.
  Value y = gather ? reduceRowBlocks(rw, o.getLoc(), p, rowBlocks, batch, n,
                                     elt, o.getBias())
                   : allReduceRows(rw, o.getLoc(), p, blk.w, elt, o.getBias());
  // The block's result: O's, or the expansion of a replicated O's.
  Operation *last = blk.oExpand ? blk.oExpand.getOperation() : o.getOperation();
  y = restoreFromRows(rw, o.getLoc(), y,
                      cast<RankedTensorType>(last->getResult(0).getType()), x);
  rw.replaceOp(last, y);
  if (blk.oExpand)
    rw.eraseOp(o);
  if (blk.oCollapse)
    rw.eraseOp(blk.oCollapse);
  // Users first: the attention, the ropes, the projections.
  llvm::SetVector<Operation *> dead;
  dead.insert(att);
  for (Projection *pr : {&blk.q, &blk.k, &blk.v})
    for (Operation *op : {pr->rope.getOperation(), pr->expand, pr->op})
      if (op)
        dead.insert(op);
  // Last, the collapses of x (the projections may share one).
  for (Projection *pr : {&blk.q, &blk.k, &blk.v})
    if (pr->collapse)
      dead.insert(pr->collapse);
  for (Operation *op : dead)
    if (op->use_empty())
      rw.eraseOp(op);
}

/// The remark for a fused block: the heads of every rank, and what each
/// rank sends and computes (for static rows).
void explainFused(AttentionBlock &b) {
  InFlightDiagnostic r = b.o.emitRemark();
  r << "attention block fused: " << b.hq << " query heads, " << b.hkv
    << " kv heads (group " << b.g << "), head_dim " << b.d << ", " << b.w
    << " ranks; query heads by rank " << pairs(b.q.heads)
    << "; kv heads by rank " << pairs(b.k.heads)
    << (b.kvReplicated ? " (sliced from the replicated K and V weights)" : "")
    << (b.mode == Mode::Rows ? "; one all_gather of x and one reduce_scatter"
                             : "; x replicated: one all_reduce");
  auto xType = cast<RankedTensorType>(b.q.x.getType());
  if (!xType.hasStaticShape())
    return;
  const int64_t rows = xType.getNumElements() / xType.getShape().back();
  const int64_t k = xType.getShape().back(), n = b.o.getN();
  const int64_t e = (xType.getElementType().getIntOrFloatBitWidth() + 7) / 8;
  const int64_t e2 =
      (partialSumType(xType.getElementType()).getIntOrFloatBitWidth() + 7) / 8;
  const int64_t m = b.mode == Mode::Rows ? b.w * rows : rows;
  // Ring collectives: each rank sends W - 1 blocks (an all_reduce twice
  // its 1/W share of the rows).
  if (b.mode == Mode::Rows)
    r << "; per rank " << (b.w - 1) * rows * k * e << " bytes all_gathered and "
      << (b.w - 1) * rows * n * e2 << " bytes reduce_scattered";
  else
    r << "; per rank about " << 2 * (b.w - 1) * rows * n * e2 / b.w
      << " bytes all_reduced";
  // GEMM flops of the busiest rank; the kv features all ranks compute
  // against the Hkv * D of one copy (the cost of replicating K and V).
  int64_t maxFlops = 0, kvFeatures = 0;
  for (int64_t i = 0; i < b.w; ++i) {
    const int64_t fq = (b.q.heads[2 * i + 1] - b.q.heads[2 * i]) * b.d;
    const int64_t fkv = (b.k.heads[2 * i + 1] - b.k.heads[2 * i]) * b.d;
    kvFeatures += fkv;
    maxFlops = std::max(maxFlops, 2 * m * k * (fq + 2 * fkv) + 2 * m * fq * n);
  }
  r << "; at most " << maxFlops << " projection flops per rank; "
    << 2 * kvFeatures << " k/v features computed over the ranks for "
    << 2 * b.hkv * b.d;
}

} // namespace

void mlir::shardlin::detail::fuseAttentionBlocks(Operation *root, bool explain,
                                                 uint64_t &numFused) {
  SmallVector<LinearOp> outs;
  root->walk([&](LinearOp op) {
    Value in = op.getInput();
    if (auto collapse = in.getDefiningOp<tensor::CollapseShapeOp>())
      in = collapse.getSrc();
    if (op.splitsK() && in.getDefiningOp<AttentionOp>())
      outs.push_back(op);
  });
  for (LinearOp o : outs) {
    AttentionBlock b;
    b.o = o;
    b.mode = hasMode(o, Mode::Rows) ? Mode::Rows : Mode::Replicated;
    std::string problem =
        !hasMode(o, b.mode)
            ? "O's layouts are neither the default rows nor replicated -> "
              "replicated"
        : o.getWeightType().getNumRanks() < 2 ? "O's weight is on one rank"
                                              : blockProblem(b);
    if (!problem.empty()) {
      if (explain)
        o.emitRemark() << "attention block not fused: " << problem
                       << " (its ops are lowered one by one)";
      continue;
    }
    if (explain)
      explainFused(b);
    lowerAttentionBlock(b);
    ++numFused;
  }
}
