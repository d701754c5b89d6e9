//===- BlockFusion.cpp - Fusing col-wise -> elementwise -> row-wise -------===//
//
// A block is a row-wise linear L2 (weight (N x F), F split by spec S) whose
// input is computed, through rank-local elementwise ops only (a chain, see
// ElementwiseChains.h), from the results of col-wise linears L1 (weights
// (F x K), F split by the same spec S) that all read one input x. Separately
// lowered, L1 ends with an all_to_all that makes its F features whole on
// every rank and L2 starts with one that splits them again. Fused
// (Megatron-LM's sequence-parallel MLP, for any chunks and placements):
//
//   all_gather     x of every rank, in rank order         (W*B) x K
//   gemm           h = X A1[F_c(s), :]^T + b1[F_c(s)]      (W*B) x f_s
//   linalg.generic the chain on h, element by element      (W*B) x f_s
//   gemm           P = E A2[:, F_c(s)]^T                   (W*B) x N
//   reduce_scatter rank r's rows of the sum over ranks     B x N
//   bias_add       b2, once
//
// As for a row-wise linear alone, f16/bf16 partial products P, their sum
// and b2's addition are f32, rounded once at the end (reduceRowBlocks).
//
// E is the stacked input of L2's row-wise lowering for chunk c(s), so no
// all_to_all is needed. A SwiGLU's gate and up share the all_gather.
//
// Elementwise ops act on each element alone, so applying the chain to the
// rank's block of features of every rank's rows computes exactly those
// elements of every rank's chain. A vector broadcast along the features
// could differ between ranks (it is a rank-local value), so a chain that
// reads one is not fused; the linears' own biases are the same on every rank
// by the dialect's semantics.
//
//===----------------------------------------------------------------------===//

#include "BlockFusion.h"
#include "LinearDecisions.h"

#include "shardlin/Dialect/Shardlin/Transforms/LoweringSupport.h"

#include "shardlin/Dialect/Shardlin/Transforms/ElementwiseChains.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::shardlin;
using namespace mlir::shardlin::detail;

namespace {

/// The chain's steps, recorded so that they can be rebuilt on other types.
class Recorder : public ChainVisitor {
public:
  struct Step {
    enum Kind { Input, Constant, Compute, Power } kind;
    int input = -1;
    double value = 0;
    int64_t exponent = 0; // Power
    Type type;
    Operation *op = nullptr;
    SmallVector<int, 3> args;
  };

  FailureOr<int> input(Value value, bool vector) override {
    if (vector)
      vectors.push_back(value);
    auto it = llvm::find(inputs, value);
    Step s{Step::Input};
    s.input = static_cast<int>(it - inputs.begin());
    if (it == inputs.end())
      inputs.push_back(value);
    return add(s);
  }
  FailureOr<int> constant(double value, Type type) override {
    Step s{Step::Constant};
    s.value = value;
    s.type = type;
    return add(s);
  }
  FailureOr<int> compute(Operation *op, ArrayRef<int> args) override {
    Step s{Step::Compute};
    s.op = op;
    s.args.assign(args.begin(), args.end());
    // The element type it computes in (i1 for a comparison, f32 between an
    // extf and a truncf).
    s.type = getElementTypeOrSelf(op->getResult(0).getType());
    return add(s);
  }
  /// math.fpowi, rebuilt with its exponent as it is.
  FailureOr<int> power(Operation *op, int base, int64_t exponent) override {
    FailureOr<int> h = compute(op, {base});
    steps[*h].kind = Step::Power;
    steps[*h].exponent = exponent;
    return h;
  }
  /// The conversions are rebuilt too: the fused chain computes in the types
  /// the module states.
  FailureOr<int> convert(Operation *op, int arg) override {
    return compute(op, {arg});
  }

  std::vector<Step> steps;
  SmallVector<Value> inputs;
  SmallVector<Value> vectors;

private:
  int add(const Step &s) {
    steps.push_back(s);
    return static_cast<int>(steps.size()) - 1;
  }
};

bool isMember(Operation *op) {
  bool member = false;
  return op && succeeded(isChainMember(*op, member, /*emitErrors=*/false)) &&
         member;
}

/// A row-wise linear, the col-wise linears its chain reads and the chain.
struct Candidate {
  LinearOp row;
  SmallVector<LinearOp> cols;
  Recorder chain;
  int result = -1; // the chain's handle of row's input
  /// The chain's ops (tensor level), in block order.
  llvm::SetVector<Operation *> ops;
};

/// `[p0, ...]` and, if explicit, `, bounds [b0, ...]`.
std::string describeChunks(ChunkAttr chunks) {
  auto list = [](ArrayRef<int64_t> values) {
    return "[" +
           llvm::join(llvm::map_range(
                          values, [](int64_t v) { return std::to_string(v); }),
                      ", ") +
           "]";
  };
  std::string text = list(chunks.getPlacements());
  if (chunks.hasExplicitBounds())
    text += ", bounds " + list(chunks.getBounds());
  return text;
}

/// Why `b` cannot be fused, or empty.
std::string fusionProblem(Candidate &b) {
  LinearOp row = b.row;
  auto isLeaf = [&](Value v) { return !isMember(v.getDefiningOp()); };
  FailureOr<int> result =
      walkChain(row.getInput(), isLeaf, b.chain, /*emitErrors=*/false);
  if (failed(result))
    return "its input's elementwise ops cannot be analyzed";
  b.result = *result;
  if (!b.chain.vectors.empty())
    return "the elementwise ops read a vector by broadcast, which may differ "
           "between ranks (only a linear's bias is the same on every rank)";
  ChunkAttr spec = row.getWeightType().getSharding();
  const int64_t f = row.getK();
  for (Value in : b.chain.inputs) {
    auto col = in.getDefiningOp<LinearOp>();
    if (!col || col.splitsK() || !col.hasDefaultLayouts())
      return "its input is computed from a value that is not a col-wise "
             "linear's result";
    ChunkAttr colSpec = col.getWeightType().getSharding();
    if (!colSpec.sameChunks(spec, f))
      return "the col-wise weight's chunks (placements " +
             describeChunks(colSpec) + ") are not the row-wise weight's (" +
             describeChunks(spec) + ")";
    if (!b.cols.empty() && col.getInput() != b.cols.front().getInput())
      return "its col-wise linears read different inputs";
    b.cols.push_back(col);
  }
  if (b.cols.empty())
    return "its input does not come from a col-wise linear";
  mlir::Block *block = row->getBlock();
  auto elsewhere = [&](Operation *op) { return op->getBlock() != block; };
  if (llvm::any_of(b.cols, [&](LinearOp c) { return elsewhere(c); }))
    return "its col-wise linears are in another block or region";

  // The chain's ops: the members between the col-wise results and the
  // row-wise input, with the constants they capture.
  SmallVector<Operation *> work;
  if (Operation *def = row.getInput().getDefiningOp(); isMember(def))
    work.push_back(def);
  while (!work.empty()) {
    Operation *op = work.pop_back_val();
    if (!b.ops.insert(op))
      continue;
    op->walk([&](Operation *nested) {
      for (Value v : nested->getOperands())
        if (Operation *def = v.getDefiningOp();
            isMember(def) && !op->isAncestor(def))
          work.push_back(def);
    });
  }
  // A tensor.dim of a block value that only sizes the block's own
  // tensor.empty inits (dynamic batch dims) goes with the block: the fused
  // chain needs no init sizes.
  SmallVector<Value> blockValues;
  for (LinearOp col : b.cols)
    blockValues.push_back(col.getResult());
  for (Operation *op : b.ops)
    llvm::append_range(blockValues, op->getResults());
  for (Value v : blockValues)
    for (Operation *user : v.getUsers())
      if (isa<tensor::DimOp>(user) && !user->use_empty() &&
          llvm::all_of(user->getUsers(),
                       [&](Operation *u) { return b.ops.contains(u); }))
        b.ops.insert(user);
  // Everything but the constants (which may be shared) and the linalg inits
  // must feed only the block, or its value would still be needed unfused.
  auto onlyFeedsBlock = [&](Operation *op) {
    return llvm::all_of(op->getUsers(), [&](Operation *user) {
      return user == row.getOperation() || b.ops.contains(user);
    });
  };
  if (llvm::any_of(b.ops, elsewhere))
    return "its elementwise ops are in another block or region";
  for (Operation *op : b.ops)
    if (!isa<arith::ConstantOp, tensor::EmptyOp>(op) && !onlyFeedsBlock(op))
      return "an elementwise value between the linears is also used outside "
             "the block";
  for (LinearOp col : b.cols)
    if (!onlyFeedsBlock(col))
      return "a col-wise linear's result is also used outside the block";
  return {};
}

/// The rows per rank the block's cost assumes: 0 if its batch dims are
/// static or bounded by static dims (costRows), else `assumedRows`.
int64_t assumedRowsOf(Candidate &b, int64_t assumedRows) {
  bool assumed = false;
  costRows(b.cols.front(), assumedRows, assumed);
  return assumed ? assumedRows : 0;
}

::shardlin::BlockShape blockShape(Candidate &b, int64_t assumedRows) {
  LinearOp col = b.cols.front();
  auto xType = cast<RankedTensorType>(col.getInput().getType());
  ShardedType w2 = b.row.getWeightType();
  ::shardlin::BlockShape s;
  bool assumed = false;
  s.rows = costRows(col, assumedRows, assumed);
  s.k = col.getK();
  s.f = b.row.getK();
  s.n = b.row.getN();
  s.colLinears = static_cast<int64_t>(b.cols.size());
  s.placements.assign(w2.getSharding().getPlacements().begin(),
                      w2.getSharding().getPlacements().end());
  s.bounds.assign(w2.getSharding().getBounds().begin(),
                  w2.getSharding().getBounds().end());
  s.elementBytes = (xType.getElementType().getIntOrFloatBitWidth() + 7) / 8;
  return s;
}

/// The cheapest separate lowering of one linear (nullopt if none fits).
std::optional<::shardlin::StrategyCost>
separateCost(const ::shardlin::LinearShape &shape,
             const LoweringOptions &options) {
  std::optional<::shardlin::Strategy> s =
      options.forced ? options.forced
                     : ::shardlin::chooseStrategy(shape, options.machine,
                                                  options.memoryCapBytes);
  if (!s)
    return std::nullopt;
  return ::shardlin::estimateCost(shape, *s, options.machine);
}

/// The fused block's cost, and whether the options choose it, with the
/// separate lowering's estimate for the remark.
struct Choice {
  bool fuse = false;
  std::string why;
  ::shardlin::StrategyCost fused;
  /// The row chunks of its pipeline (chooseOverlapChunks).
  ::shardlin::OverlapChoice overlap;
  double separateUs = 0;
  uint64_t separateMaxBytes = 0;
};

Choice choose(Candidate &b, const LoweringOptions &options) {
  Choice c;
  ::shardlin::BlockShape shape = blockShape(b, options.assumedRows);
  c.fused = ::shardlin::estimateFusedBlockCost(shape, options.machine);
  c.overlap = ::shardlin::chooseOverlapChunks(shape, options.machine,
                                              options.overlapChunks);
  ::shardlin::LinearShape colShape{shape.rows,      shape.f,
                                   shape.k,         0,
                                   shape.placements, shape.elementBytes,
                                   shape.bounds};
  ::shardlin::LinearShape rowShape{shape.rows,      shape.n,
                                   shape.f,         1,
                                   shape.placements, shape.elementBytes,
                                   shape.bounds};
  std::optional<::shardlin::StrategyCost> col = separateCost(colShape, options);
  std::optional<::shardlin::StrategyCost> row = separateCost(rowShape, options);
  if (col && row) {
    c.separateUs = shape.colLinears * col->estimatedUs + row->estimatedUs;
    c.separateMaxBytes =
        shape.colLinears * col->maxBytesSent() + row->maxBytesSent();
  }
  if (options.forced == ::shardlin::Strategy::GatherWeight) {
    c.why = "strategy=gather-weight lowers each linear by gathering its weight";
    return c;
  }
  if (options.memoryCapBytes != 0 &&
      c.fused.maxPeakExtraBytes() > options.memoryCapBytes) {
    c.why = "the fused form needs " +
            std::to_string(c.fused.maxPeakExtraBytes()) +
            " extra bytes per rank, over the memory cap";
    return c;
  }
  if (options.forced) {
    c.fuse = true;
    c.why = "forced";
    return c;
  }
  if (col && row && c.separateUs < c.fused.estimatedUs) {
    c.why = "the separate lowerings are cheaper";
    return c;
  }
  c.fuse = true;
  c.why = "cheapest estimate";
  return c;
}

/// Rebuilds the chain as one linalg.generic over the rank's block, the
/// col-wise linears' results replaced by `mapped` (same order as the
/// chain's inputs); returns its result, or the mapped input itself when the
/// chain has no steps.
Value rebuildChain(OpBuilder &b, Location loc, const Recorder &chain,
                   int result, ArrayRef<Value> mapped) {
  if (chain.steps[result].kind == Recorder::Step::Input)
    return mapped[chain.steps[result].input];
  auto type = cast<RankedTensorType>(mapped.front().getType());
  Type elt = type.getElementType();
  MLIRContext *ctx = b.getContext();
  SmallVector<AffineMap> maps(mapped.size() + 1,
                              AffineMap::getMultiDimIdentityMap(2, ctx));
  SmallVector<utils::IteratorType> iterators(2, utils::IteratorType::parallel);
  // The init is an input: the body reads only the inputs, and reusing one
  // needs no size operands for the rank-dependent dim.
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{type}, mapped, ValueRange{mapped.front()}, maps,
      iterators, [&](OpBuilder &nb, Location nloc, ValueRange args) {
        SmallVector<Value> values;
        for (const Recorder::Step &s : chain.steps) {
          switch (s.kind) {
          case Recorder::Step::Input:
            values.push_back(args[s.input]);
            break;
          case Recorder::Step::Constant:
            values.push_back(arith::ConstantOp::create(
                nb, nloc,
                nb.getFloatAttr(isa<FloatType>(s.type) ? s.type : elt,
                                s.value)));
            break;
          case Recorder::Step::Power: {
            Type exponentType = getElementTypeOrSelf(s.op->getOperand(1));
            Value exponent = arith::ConstantOp::create(
                nb, nloc, nb.getIntegerAttr(exponentType, s.exponent));
            Operation *pow = math::FPowIOp::create(nb, nloc, values[s.args[0]],
                                                   exponent);
            pow->setAttrs(s.op->getAttrs());
            values.push_back(pow->getResult(0));
            break;
          }
          case Recorder::Step::Compute: {
            OperationState state(nloc, s.op->getName());
            for (int a : s.args)
              state.addOperands(values[a]);
            state.addAttributes(s.op->getAttrs());
            state.addTypes(s.type);
            values.push_back(nb.create(state)->getResult(0));
            break;
          }
          }
        }
        linalg::YieldOp::create(nb, nloc, values[result]);
      });
  return generic.getResult(0);
}

void lowerBlock(Candidate &b, const ::shardlin::StrategyCost &cost,
                int overlapChunks,
                int64_t assumedRows) {
  LinearOp row = b.row;
  MLIRContext *ctx = row.getContext();
  IRRewriter rewriter(ctx);
  rewriter.setInsertionPoint(row);
  Location loc = row.getLoc();
  ShardedType w2 = row.getWeightType();
  ChunkAttr spec = w2.getSharding();
  const int64_t w = w2.getNumRanks();
  const int64_t f = row.getK(), n = row.getN();
  const int64_t fLocal = spec.getLocalSize(f);
  LinearOp first = b.cols.front();
  Value x = first.getInput();
  Type elt = cast<RankedTensorType>(x.getType()).getElementType();
  const int64_t k = first.getK();
  ChunkAttr rowBlocks = rankOrderRows(ctx, w);

  int64_t batch = 0;
  Value rows = flattenToRows(rewriter, first.getLoc(), x, batch);
  // Checked by the pass before fusing; dynamic if B is.
  const int64_t stacked = stackedRows(w, batch);
  auto gather = AllGatherOp::create(rewriter, first.getLoc(),
                                    tensorOf({stacked, k}, elt), rows,
                                    rowBlocks);
  // The runtime pipelines the block from here in row chunks
  // (Instr::overlapChunks).
  if (overlapChunks >= 2)
    gather->setAttr(
        "shardlin.lowering",
        rewriter.getDictionaryAttr(
            {rewriter.getNamedAttr("strategy", rewriter.getStringAttr("fused")),
             rewriter.getNamedAttr("overlap_chunks",
                                   rewriter.getI64IntegerAttr(overlapChunks))}));
  Value gathered = gather;
  SmallVector<Value> mapped;
  for (Value in : b.chain.inputs) {
    LinearOp col = in.getDefiningOp<LinearOp>();
    Location colLoc = col.getLoc();
    Value a = LocalShardOp::create(rewriter, colLoc,
                                   col.getWeightType().getLocalType(),
                                   col.getWeight());
    Value biasChunk;
    if (Value bias = col.getBias())
      biasChunk = LocalChunkOp::create(rewriter, colLoc,
                                       tensorOf({fLocal}, elt), bias,
                                       spec.withDim(0));
    auto h = GemmOp::create(rewriter, colLoc,
                            tensorOf({stacked, fLocal}, elt), gathered, a,
                            biasChunk, /*transpose_lhs=*/false,
                            /*transpose_rhs=*/!col.getWeightKn());
    annotateLowering(h, "fused", &cost, assumedRows);
    mapped.push_back(h);
  }
  Value e = rebuildChain(rewriter, loc, b.chain, b.result, mapped);
  Value a2 = LocalShardOp::create(rewriter, loc, w2.getLocalType(),
                                  row.getWeight());
  auto p = GemmOp::create(rewriter, loc,
                          tensorOf({stacked, n}, partialSumType(elt)), e, a2,
                          /*bias=*/Value(), /*transpose_lhs=*/false,
                          /*transpose_rhs=*/!row.getWeightKn());
  annotateLowering(p, "fused", &cost, assumedRows);
  Value y = reduceRowBlocks(rewriter, loc, p, rowBlocks, batch, n, elt,
                            row.getBias());
  y = restoreFromRows(rewriter, loc, y,
                      cast<RankedTensorType>(row.getResult().getType()), x);
  rewriter.replaceOp(row, y);
  // The chain and the col-wise linears now feed nothing: erase them, users
  // first. Shared constants stay while something else reads them.
  SmallVector<Operation *> dead(b.ops.begin(), b.ops.end());
  for (LinearOp col : b.cols)
    dead.push_back(col);
  llvm::sort(dead, [](Operation *l, Operation *r) {
    return r->isBeforeInBlock(l);
  });
  dead.erase(std::unique(dead.begin(), dead.end()), dead.end());
  for (Operation *op : dead)
    if (op->use_empty())
      rewriter.eraseOp(op);
}

} // namespace

void mlir::shardlin::detail::fuseBlocks(Operation *root,
                                        const LoweringOptions &options,
                                        bool explain, uint64_t &numFused) {
  SmallVector<LinearOp> rows;
  root->walk([&](LinearOp op) {
    if (op.splitsK() && op.hasDefaultLayouts() &&
        op.getWeightType().getNumRanks() > 1)
      rows.push_back(op);
  });
  for (LinearOp row : rows) {
    Candidate b;
    b.row = row;
    std::string problem = fusionProblem(b);
    // Only a chain that reaches a col-wise linear is worth a remark.
    bool reachesColWise = llvm::any_of(b.chain.inputs, [](Value v) {
      auto col = v.getDefiningOp<LinearOp>();
      return col && !col.splitsK();
    });
    if (!problem.empty()) {
      if (explain && reachesColWise)
        row.emitRemark() << "block not fused: " << problem;
      continue;
    }
    Choice c = choose(b, options);
    if (explain) {
      InFlightDiagnostic r = row.emitRemark();
      r << (c.fuse ? "block fused with " : "block not fused with ")
        << b.cols.size() << " col-wise linear" << (b.cols.size() > 1 ? "s" : "")
        << " (" << c.why << ")";
      if (int64_t assumed = assumedRowsOf(b, options.assumedRows))
        r << " for " << assumed
          << " rows per rank (the batch dims are dynamic; option "
             "assumed-rows)";
      r << ": fused est. "
        << llvm::formatv("{0:F3}", c.fused.estimatedUs).str() << " us, max "
        << c.fused.maxBytesSent() << " bytes sent, max "
        << c.fused.maxPeakExtraBytes() << " extra bytes per rank; separate est. "
        << llvm::formatv("{0:F3}", c.separateUs).str() << " us, max "
        << c.separateMaxBytes << " bytes sent";
      if (c.fuse && c.overlap.chunks >= 2)
        r << "; overlapped in " << c.overlap.chunks << " row chunks, est. "
          << llvm::formatv("{0:F3}", c.overlap.overlappedUs).str() << " us";
    }
    if (!c.fuse)
      continue;
    lowerBlock(b, c.fused, c.overlap.chunks,
               assumedRowsOf(b, options.assumedRows));
    ++numFused;
  }
}
