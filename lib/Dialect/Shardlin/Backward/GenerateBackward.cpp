//===- GenerateBackward.cpp - --shardlin-generate-backward ----------------===//
//
// For each public function: check that it can be differentiated, lower a
// copy of it with the pass's lowering options, decide which costly forward
// values the backward saves rather than recomputes (the cost model and the
// memory cap), and build @f_backward by reverse mode over the lowered copy
// (BackwardBuilder.cpp); the copy becomes @f_forward_saving when the
// backward takes saved values, and is dropped otherwise. docs/training.md
// describes the functions, the gradients and the decision.
//
//===----------------------------------------------------------------------===//

#include "shardlin/Dialect/Shardlin/Backward/Passes.h"
#include "shardlin/Dialect/Shardlin/IR/ArgAttrs.h"
#include "shardlin/Dialect/Shardlin/IR/RowReductions.h"
#include "shardlin/Dialect/Shardlin/IR/ShardlinDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include "BackwardBuilder.h"
#include "ElementwiseAdjoint.h"
#include "shardlin/Dialect/Shardlin/Transforms/PassOptions.h"

#include "shardlin/Dialect/Shardlin/Transforms/ElementwiseChains.h"
#include "shardlin/Dialect/Shardlin/Transforms/InlineCalls.h"

#include "mlir/IR/SymbolTable.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallBitVector.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"

namespace mlir::shardlin {
#define GEN_PASS_DEF_GENERATEBACKWARD
#include "shardlin/Dialect/Shardlin/Backward/Passes.h.inc"
} // namespace mlir::shardlin

using namespace mlir;
using namespace mlir::shardlin;
using namespace mlir::shardlin::detail;
namespace sd = mlir::shardlin::detail;

namespace {

constexpr const char *kDifferentiable =
    "shardlin.linear, the lowered shardlin ops (local_shard, local_chunk, "
    "all_gather, all_to_all, reduce_scatter, all_reduce, gemm, bias_add, "
    "convert, and from_local of a returned value), shardlin.attention, rope "
    "and local_slice, tensor.collapse_shape and expand_shape, a norm's sum "
    "over the last dim (a linalg.generic into R x 1 or a linalg.reduce, "
    "combining by arith.addf), and the elementwise "
    "ops the shardlin runtime executes";

/// Fails, with a located error, on what the backward cannot differentiate.
LogicalResult checkDifferentiable(func::FuncOp f) {
  if (!f.getBody().hasOneBlock())
    return f.emitError() << "cannot generate the backward of a function "
                            "with more than one block";
  // Gradients are float tensors: of every argument, and of every result.
  auto differentiable = [](Type t) {
    if (isa<ShardedType>(t))
      return true;
    auto tensor = dyn_cast<RankedTensorType>(t);
    return tensor && isa<FloatType>(tensor.getElementType());
  };
  for (Type t : f.getArgumentTypes())
    if (!differentiable(t))
      return f.emitError() << "cannot generate the backward of a function "
                              "with an argument of type "
                           << t << " (a gradient is a float tensor)";
  for (Type t : f.getResultTypes())
    if (!differentiable(t))
      return f.emitError() << "cannot generate the backward of a function "
                              "returning "
                           << t << " (a gradient is a float tensor)";
  for (Operation &op : f.getBody().front()) {
    // from_local only makes a result: its gradient is the result's chunk.
    if (auto fromLocal = dyn_cast<FromLocalOp>(op)) {
      if (llvm::all_of(fromLocal->getUsers(), [](Operation *user) {
            return isa<func::ReturnOp>(user);
          }))
        continue;
      return op.emitError()
             << "cannot differentiate 'shardlin.from_local' whose result is "
                "used by other ops than the return";
    }
    // A plain shardlin.constant (the import's rotary tables) is a constant
    // of the function: no gradient. A sharded one is a weight kept in the
    // module, whose gradient no result could return.
    if (auto c = dyn_cast<ConstantOp>(op)) {
      if (!c.getSharding())
        continue;
      return op.emitError()
             << "cannot differentiate a weight kept in the module (a sharded "
                "shardlin.constant): its gradient has no argument to be "
                "returned for; make it an argument "
                "(--shardlin-externalize-parameters)";
    }
    if (isa<func::ReturnOp, LinearOp, LocalShardOp, LocalChunkOp, AllGatherOp,
            AllToAllOp, ReduceScatterOp, AllReduceOp, GemmOp, BiasAddOp,
            ConvertOp, AttentionOp, RopeOp, LocalSliceOp,
            tensor::CollapseShapeOp, tensor::ExpandShapeOp, tensor::EmptyOp,
            tensor::DimOp, arith::ConstantOp>(op) ||
        isSizeComputation(op))
      continue;
    if (std::optional<RowReduction> red = matchRowReduction(&op)) {
      if (red->combine != RowCombine::Add)
        return op.emitError()
               << "cannot differentiate a maximum over the last dim "
                  "(softmax's): shardlin-generate-backward differentiates "
                  "the sums over the last dim that norms compute, not a "
                  "maximum";
      if (cast<RankedTensorType>(red->input.getType()).getRank() < 2)
        return op.emitError()
               << "cannot differentiate the sum of a rank-1 tensor: "
                  "shardlin-generate-backward differentiates sums over the "
                  "last dim of a tensor of rank 2 or more (one per row)";
      continue;
    }
    bool member = false;
    if (succeeded(isChainMember(op, member, /*emitErrors=*/false)) && member)
      continue;
    return op.emitError() << "cannot differentiate '" << op.getName()
                          << "': shardlin-generate-backward differentiates "
                          << kDifferentiable << " (" << kSupportedElementwiseOps
                          << ")";
  }
  return success();
}

/// The operands of `op` that the dialect defines as the same on every
/// rank: a linear's bias, and in lowered IR the bias of a bias_add or a
/// gemm, and the source of a local_chunk (how a col-wise layer takes its
/// chunk of a bias, and a layer its chunk of a replicated input).
SmallVector<Value> biasOperands(Operation *op) {
  if (auto linear = dyn_cast<LinearOp>(op))
    return linear.getBias() ? SmallVector<Value>{linear.getBias()}
                            : SmallVector<Value>{};
  if (auto add = dyn_cast<BiasAddOp>(op))
    return {add.getBias()};
  if (auto gemm = dyn_cast<GemmOp>(op))
    return gemm.getBias() ? SmallVector<Value>{gemm.getBias()}
                          : SmallVector<Value>{};
  if (auto chunk = dyn_cast<LocalChunkOp>(op))
    return {chunk.getSource()};
  return {};
}

/// The arguments every rank holds alike: those a bias is computed from
/// (through elementwise ops, reshapes, converts and chunks). Fails, at the
/// op that reads the bias, for a bias computed from anything else: its
/// gradient is a sum over ranks, defined only for a value that is the same
/// on every rank.
FailureOr<llvm::SmallBitVector> replicatedArguments(func::FuncOp f) {
  llvm::SmallBitVector replicated(f.getNumArguments());
  // What the function says every rank passes alike (an imported replicated
  // activation): one tensor, whose gradient is summed over ranks.
  for (unsigned i = 0, e = f.getNumArguments(); i < e; ++i)
    if (f.getArgAttr(i, kReplicatedArgAttrName))
      replicated.set(i);
  WalkResult walked =
      f.walk([&](Operation *user) {
        SmallVector<Value> work = biasOperands(user);
        llvm::DenseSet<Value> seen;
        while (!work.empty()) {
          Value v = work.pop_back_val();
          if (!seen.insert(v).second || constantOf(v))
            continue;
          if (auto arg = dyn_cast<BlockArgument>(v)) {
            replicated.set(arg.getArgNumber());
            continue;
          }
          Operation *def = v.getDefiningOp();
          if (isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp, ConvertOp,
                  LocalChunkOp>(def)) {
            work.push_back(def->getOperand(0));
            continue;
          }
          // A sharded argument gathered whole (a col-wise layer's split
          // bias, which a rows layout adds on every row): the same global
          // tensor on every rank. Its gradient comes back through the
          // gather's dual, a reduce_scatter: the sum over ranks, each rank
          // its chunk, as a sharded argument's gradient is.
          if (auto gather = dyn_cast<AllGatherOp>(def))
            if (auto shard = gather.getInput().getDefiningOp<LocalShardOp>())
              if (isa<BlockArgument>(shard.getSource()))
                continue;
          // The same on every rank by what computes it: a linear's
          // replicated result, a collective's (their gradients come back
          // through the linear's and the collective's duals).
          if (auto linear = dyn_cast<LinearOp>(def);
              linear && linear.getResultLayout() == Layout::Replicated)
            continue;
          if (isa<AllReduceOp, AllGatherOp>(def))
            continue;
          // A constant of the module (plain: checkDifferentiable refuses a
          // sharded one) is the same on every rank and has no gradient.
          if (isa<ConstantOp>(def))
            continue;
          bool member = false;
          if (succeeded(isChainMember(*def, member, /*emitErrors=*/false)) &&
              member && !isa<tensor::EmptyOp>(def)) {
            if (FailureOr<ElementwiseForm> form = getElementwiseForm(def);
                succeeded(form)) {
              llvm::append_range(work, form->inputs);
              continue;
            }
          }
          // A local_chunk's source is a bias or a replicated activation
          // (a replicated input's chunk): named as what it is.
          const bool chunk = isa<LocalChunkOp>(user);
          user->emitOpError()
              << "cannot be differentiated: "
              << (chunk ? "the value it takes its chunk of" : "its bias")
              << " is computed by '" << def->getName()
              << "', whose value may differ between ranks; "
              << (chunk ? "the value a local_chunk takes its chunk of (a "
                          "bias, or a replicated activation) is"
                        : "a bias is")
              << " the same on every rank (a function argument, or computed "
                 "from arguments and constants by elementwise ops and "
                 "reshapes) and its gradient is summed over ranks";
          return WalkResult::interrupt();
        }
        return WalkResult::advance();
      });
  if (walked.wasInterrupted())
    return failure();
  return replicated;
}

//===----------------------------------------------------------------------===//
// What saving or recomputing a forward value costs
//===----------------------------------------------------------------------===//

/// Upper bounds of every rank's sizes of the lowered function's values: a
/// `?` that a chunk makes is the largest chunk, one that rows of run-time
/// size make is `assumedRows` rows (the product of an argument's dynamic
/// batch dims), stacked over W ranks where a collective stacks them.
class SizeBounds {
public:
  SizeBounds(int64_t worldSize, int64_t assumedRows)
      : w(std::max<int64_t>(worldSize, 1)), rows(assumedRows) {}

  SmallVector<int64_t> of(Value v) {
    if (auto it = memo.find(v); it != memo.end())
      return it->second;
    SmallVector<int64_t> dims = compute(v);
    memo[v] = dims;
    return dims;
  }

  uint64_t bytes(Value v) {
    uint64_t n = 1;
    for (int64_t d : of(v))
      n *= static_cast<uint64_t>(std::max<int64_t>(d, 0));
    auto type = cast<RankedTensorType>(v.getType());
    return n * ((type.getElementTypeBitWidth() + 7) / 8);
  }

private:
  static int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

  SmallVector<int64_t> compute(Value v) {
    auto type = cast<RankedTensorType>(v.getType());
    SmallVector<int64_t> dims(type.getShape());
    auto fill = [&](auto &&bound) {
      for (auto [i, d] : llvm::enumerate(dims))
        if (ShapedType::isDynamic(d))
          d = bound(i);
    };
    Operation *def = v.getDefiningOp();
    if (!def) {
      bool first = true;
      fill([&](size_t) {
        int64_t b = first ? rows : 1;
        first = false;
        return b;
      });
      return dims;
    }
    auto operand = [&](unsigned k) { return of(def->getOperand(k)); };
    if (auto c = dyn_cast<tensor::CollapseShapeOp>(def)) {
      SmallVector<int64_t> src = operand(0);
      for (auto [i, group] : llvm::enumerate(c.getReassociationIndices())) {
        int64_t p = 1;
        for (int64_t g : group)
          p *= src[g];
        dims[i] = p;
      }
      return dims;
    }
    if (auto e = dyn_cast<tensor::ExpandShapeOp>(def)) {
      SmallVector<int64_t> src = operand(0);
      for (auto [i, group] : llvm::enumerate(e.getReassociationIndices())) {
        int64_t staticProduct = 1;
        bool placed = false;
        for (int64_t g : group)
          if (!ShapedType::isDynamic(type.getShape()[g]))
            staticProduct *= type.getShape()[g];
        for (int64_t g : group)
          if (ShapedType::isDynamic(type.getShape()[g])) {
            dims[g] =
                placed ? 1
                       : ceilDiv(src[i], std::max<int64_t>(staticProduct, 1));
            placed = true;
          }
      }
      return dims;
    }
    SmallVector<int64_t> in =
        def->getNumOperands() > 0 &&
                isa<RankedTensorType>(def->getOperand(0).getType())
            ? operand(0)
            : SmallVector<int64_t>();
    if (auto a = dyn_cast<AllGatherOp>(def)) {
      fill([&](size_t i) { return in[i] * w; });
    } else if (auto r = dyn_cast<ReduceScatterOp>(def)) {
      fill([&](size_t i) { return ceilDiv(in[i], w); });
    } else if (auto a = dyn_cast<AllToAllOp>(def)) {
      int64_t split = a.getSplit().getDim();
      fill([&](size_t i) {
        return static_cast<int64_t>(i) == split ? ceilDiv(in[i], w) : in[i] * w;
      });
    } else if (auto s = dyn_cast<LocalShardOp>(def)) {
      // The largest chunk of the spec's bounds (explicit ones, head-aligned
      // blocks, may exceed the ceil rule's).
      ShardedType st = s.getSource().getType();
      ChunkAttr spec = st.getSharding();
      ArrayRef<int64_t> full = st.getShape();
      fill([&](size_t i) {
        if (static_cast<int64_t>(i) != spec.getDim())
          return full[i];
        SmallVector<int64_t> b = spec.getBoundsFor(full[i]);
        int64_t most = 0;
        for (size_t c = 0; c + 1 < b.size(); ++c)
          most = std::max(most, b[c + 1] - b[c]);
        return most;
      });
    } else if (auto sl = dyn_cast<LocalSliceOp>(def)) {
      ArrayRef<int64_t> r = sl.getRanges();
      int64_t most = 0;
      for (size_t c = 0; c + 1 < r.size(); c += 2)
        most = std::max(most, r[c + 1] - r[c]);
      fill([&](size_t i) {
        return static_cast<int64_t>(i) == sl.getDim() ? most : in[i];
      });
    } else if (isa<LocalChunkOp>(def)) {
      fill([&](size_t i) { return ceilDiv(in[i], w); });
    } else if (auto g = dyn_cast<GemmOp>(def)) {
      SmallVector<int64_t> l = operand(0), m = operand(1);
      dims = {g.getTransposeLhs() ? l[1] : l[0],
              g.getTransposeRhs() ? m[0] : m[1]};
    } else if (!in.empty() && in.size() == dims.size()) {
      fill([&](size_t i) { return in[i]; });
    } else {
      fill([&](size_t) { return rows; });
    }
    return dims;
  }

  int64_t w, rows;
  llvm::DenseMap<Value, SmallVector<int64_t>> memo;
};

/// A costly forward value the backward needs, with what recomputing it
/// costs one rank (at most) and what saving it keeps.
struct Candidate {
  Value value;
  uint64_t bytes = 0;       // kept from the forward to the backward
  uint64_t sentBytes = 0;   // sent again to recompute it
  double recomputeUs = 0.0; // latency, bandwidth and GEMM model
  bool save = false;
  std::string why;
};

Candidate estimate(Value v, SizeBounds &bounds, int64_t w,
                   const ::shardlin::MachineModel &m) {
  Candidate c;
  c.value = v;
  c.bytes = bounds.bytes(v);
  Operation *def = v.getDefiningOp();
  if (auto gemm = dyn_cast<GemmOp>(def)) {
    SmallVector<int64_t> l = bounds.of(gemm.getLhs());
    SmallVector<int64_t> r = bounds.of(gemm.getResult());
    const double k = gemm.getTransposeLhs() ? l[0] : l[1];
    c.recomputeUs = 2.0 * r[0] * r[1] * k / (m.gemmGflops * 1e3);
    return c;
  }
  const uint64_t in = bounds.bytes(def->getOperand(0));
  const uint64_t uw = static_cast<uint64_t>(std::max<int64_t>(w, 1));
  if (isa<AllGatherOp>(def))
    c.sentBytes = in * (uw - 1);
  else if (isa<AllReduceOp>(def))
    c.sentBytes = 2 * in * (uw - 1) / uw;
  else // all_to_all, reduce_scatter: every other rank's share
    c.sentBytes = in * (uw - 1) / uw;
  c.recomputeUs = m.latencyUs * (uw - 1) +
                  static_cast<double>(c.sentBytes) / (m.bandwidthGBps * 1e3);
  return c;
}

/// The name of what a candidate is, for remarks: "the all_gather result
/// tensor<18x8xf32>".
std::string describe(Value v) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "the " << v.getDefiningOp()->getName().stripDialect() << " result "
     << v.getType();
  return s;
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

/// The arguments of `backward` say what they hold: the forward's first (a
/// replicated one stays replicated, a named parameter keeps its name, which
/// `--params` binds), then the results' gradients (a replicated result's is
/// one tensor that every rank passes alike, as the runtime checks), then
/// the saved values.
void markBackwardArguments(func::FuncOp f, func::FuncOp backward,
                           const llvm::SmallBitVector &replicatedResults,
                           ArrayRef<Value> saved) {
  OpBuilder b(f.getContext());
  for (unsigned i = 0; i < f.getNumArguments(); ++i)
    for (StringRef name : {kReplicatedArgAttrName, kParameterArgAttrName})
      if (Attribute same = f.getArgAttr(i, name))
        backward.setArgAttr(i, name, same);
  for (unsigned i : replicatedResults.set_bits())
    backward.setArgAttr(f.getNumArguments() + i, kReplicatedArgAttrName,
                        b.getUnitAttr());
  const unsigned firstSaved = backward.getNumArguments() - saved.size();
  for (auto [i, v] : llvm::enumerate(saved))
    backward.setArgAttr(firstSaved + i, "shardlin.saved",
                        b.getStringAttr(describe(v)));
}

struct GenerateBackwardPass
    : mlir::shardlin::impl::GenerateBackwardBase<GenerateBackwardPass> {
  using GenerateBackwardBase::GenerateBackwardBase;
  friend LowerShardedLinearOptions
  sd::optionValues<>(const GenerateBackwardPass &);

  LogicalResult initialize(MLIRContext *ctx) override {
    return initLoweringOptions(optionValues(*this), ctx, options);
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    llvm::StringSet<> wanted;
    for (const std::string &name : functions)
      wanted.insert(name);
    SmallVector<func::FuncOp> todo;
    for (auto f : module.getOps<func::FuncOp>()) {
      if (f.isExternal() || f->hasAttr(kBackwardOf) ||
          f->hasAttr(kForwardSavingOf))
        continue;
      if (wanted.empty() ? f.isPublic() : wanted.contains(f.getSymName()))
        todo.push_back(f);
    }
    for (const std::string &name : functions)
      if (!module.lookupSymbol<func::FuncOp>(name)) {
        module.emitError() << "shardlin-generate-backward: no function named '"
                           << name << "'";
        return signalPassFailure();
      }
    bool ok = true;
    for (func::FuncOp f : todo)
      if (failed(generate(f)))
        ok = false;
    if (!ok)
      signalPassFailure();
  }

  LogicalResult generate(func::FuncOp f);
  void report(func::FuncOp f, StringRef backwardName, StringRef savingName,
              ArrayRef<Candidate> candidates, ArrayRef<Value> saved);
  /// Decides which candidates are saved, by the `recompute` option and,
  /// for auto, the memory cap.
  void decide(SmallVector<Candidate> &candidates);

  static constexpr StringLiteral kBackwardOf = "shardlin.backward_of";
  static constexpr StringLiteral kForwardSavingOf =
      "shardlin.forward_saving_of";

  LoweringOptions options;
};

void GenerateBackwardPass::decide(SmallVector<Candidate> &candidates) {
  if (recompute != RecomputeOption::Auto) {
    const bool save = recompute == RecomputeOption::Never;
    for (Candidate &c : candidates) {
      c.save = save;
      c.why = save ? "forced: recompute=never" : "forced: recompute=always";
    }
    return;
  }
  if (options.memoryCapBytes == 0) {
    for (Candidate &c : candidates) {
      c.save = true;
      c.why = "no memory cap: saving costs no time";
    }
    return;
  }
  // The values that save the most time per byte kept, while they fit.
  SmallVector<Candidate *> order;
  for (Candidate &c : candidates)
    order.push_back(&c);
  // Ties keep the candidates' order (pointers into one vector).
  llvm::sort(order, [](const Candidate *a, const Candidate *b) {
    const double ta = a->recomputeUs * std::max<uint64_t>(b->bytes, 1);
    const double tb = b->recomputeUs * std::max<uint64_t>(a->bytes, 1);
    return ta != tb ? ta > tb : a < b;
  });
  uint64_t kept = 0;
  for (Candidate *c : order) {
    c->save = kept + c->bytes <= options.memoryCapBytes;
    if (c->save)
      kept += c->bytes;
    c->why = c->save ? "it fits the memory cap of " +
                           std::to_string(options.memoryCapBytes) +
                           " bytes with the values saved before it"
                     : "saving it would exceed the memory cap of " +
                           std::to_string(options.memoryCapBytes) + " bytes";
  }
}

/// Counts the saved and recomputed values in the pass's statistics and,
/// with explain=true, says for each why, and what @f's backward keeps.
void GenerateBackwardPass::report(func::FuncOp f, StringRef backwardName,
                                  StringRef savingName,
                                  ArrayRef<Candidate> candidates,
                                  ArrayRef<Value> saved) {
  uint64_t savedBytes = 0;
  unsigned numSavedHere = 0;
  for (const Candidate &c : candidates) {
    const bool isSaved = llvm::is_contained(saved, c.value);
    if (isSaved) {
      ++numSaved;
      ++numSavedHere;
      savedBytes += c.bytes;
    } else {
      ++numRecomputed;
    }
    if (!explain)
      continue;
    InFlightDiagnostic r = emitRemark(c.value.getLoc());
    r << "backward of @" << f.getSymName() << ": "
      << (isSaved ? "saves " : "recomputes ") << describe(c.value) << " ("
      << c.why << "): it keeps at most " << c.bytes
      << " bytes per rank from the forward to the backward; recomputing it "
         "sends at most "
      << c.sentBytes << " bytes per rank, est. "
      << llvm::formatv("{0:F3}", c.recomputeUs).str() << " us";
  }
  if (explain) {
    InFlightDiagnostic r = emitRemark(f.getLoc());
    r << "generated @" << backwardName;
    if (numSavedHere)
      r << " and @" << savingName << ": " << numSavedHere
        << " forward value(s) saved, at most " << savedBytes
        << " bytes per rank";
    else
      r << ": every forward value it needs is recomputed";
    r << " (" << candidates.size() - numSavedHere
      << " recomputed by communication or a GEMM)";
  }
}

LogicalResult GenerateBackwardPass::generate(func::FuncOp f) {
  ModuleOp module = getOperation();
  MLIRContext *ctx = &getContext();
  SymbolTable symbols(module);
  const std::string backwardName = (f.getSymName() + "_backward").str();
  const std::string savingName = (f.getSymName() + "_forward_saving").str();
  for (const std::string &name : {backwardName, savingName})
    if (symbols.lookup(name))
      return f.emitError() << "cannot add the backward of @" << f.getSymName()
                           << ": a symbol named '" << name
                           << "' already exists";
  // The lowered copy the backward is the dual of, its calls (a layer's
  // norm helper) inlined: reverse mode runs over one block.
  OpBuilder b(ctx);
  b.setInsertionPointAfter(f);
  auto lowered = cast<func::FuncOp>(b.clone(*f));
  lowered.setSymName(("__shardlin_lowered_" + f.getSymName()).str());
  lowered.setPrivate();
  symbols.insert(lowered);
  FailureOr<llvm::SmallBitVector> replicated = failure();
  if (succeeded(inlineCalls(lowered, "shardlin-generate-backward")) &&
      succeeded(checkDifferentiable(lowered)))
    replicated = replicatedArguments(lowered);
  if (failed(replicated)) {
    lowered.erase();
    return failure();
  }
  LowerShardedLinearOptions o = optionValues(*this);
  o.explain = false; // The lowering of @f explains itself when it is run.
  OpPassManager pm(func::FuncOp::getOperationName());
  pm.addPass(createLowerShardedLinear(o));
  if (failed(runPipeline(pm, lowered))) {
    lowered.erase();
    return failure();
  }

  SmallVector<Type> inputs(f.getArgumentTypes());
  llvm::append_range(inputs, f.getResultTypes());
  auto makeBackward = [&](StringRef name) {
    OpBuilder fb(ctx);
    fb.setInsertionPointAfter(lowered);
    auto fn = func::FuncOp::create(
        fb, f.getLoc(), name,
        FunctionType::get(ctx, inputs, f.getArgumentTypes()));
    fn.addEntryBlock();
    return fn;
  };
  BackwardRequest request;
  request.forward = lowered;
  request.replicatedArgs = *replicated;
  llvm::SmallBitVector replicatedResults(f.getNumResults());
  request.replicatedResults = &replicatedResults;

  // A first build that saves every costly value it needs lists them.
  func::FuncOp probe = makeBackward("__shardlin_probe_backward");
  request.backward = probe;
  auto saveAll = [](Value) { return true; };
  request.save = saveAll;
  FailureOr<SmallVector<Value>> needed = buildBackward(request);
  probe.erase();
  if (failed(needed)) {
    lowered.erase();
    return failure();
  }
  int64_t worldSize = 1;
  for (Type t : f.getArgumentTypes())
    if (auto s = dyn_cast<ShardedType>(t))
      worldSize = s.getNumRanks();
  SizeBounds bounds(worldSize, options.assumedRows);
  SmallVector<Candidate> candidates;
  for (Value v : *needed)
    candidates.push_back(estimate(v, bounds, worldSize, options.machine));
  decide(candidates);
  llvm::DenseSet<Value> saveSet;
  for (const Candidate &c : candidates)
    if (c.save)
      saveSet.insert(c.value);
  // A value only the recomputation of another needs (none was listed with
  // it): recomputed too, as the decision to recompute its user implies.
  func::FuncOp backward = makeBackward(backwardName);
  request.backward = backward;
  auto saveDecided = [&](Value v) { return saveSet.contains(v); };
  request.save = saveDecided;
  FailureOr<SmallVector<Value>> saved = buildBackward(request);
  if (failed(saved)) {
    backward.erase();
    lowered.erase();
    return failure();
  }
  symbols.insert(backward);

  markBackwardArguments(f, backward, replicatedResults, *saved);
  backward->setAttr(kBackwardOf, FlatSymbolRefAttr::get(f.getSymNameAttr()));
  ++numBackward;

  report(f, backwardName, savingName, candidates, *saved);

  // The lowered copy is @f_forward_saving if the backward takes values
  // from it (remarks above still name its values).
  if (saved->empty()) {
    lowered.erase();
  } else {
    auto ret = cast<func::ReturnOp>(lowered.getBody().front().getTerminator());
    ret.getOperandsMutable().append(*saved);
    lowered.setType(FunctionType::get(ctx, lowered.getArgumentTypes(),
                                      ret.getOperandTypes()));
    if (failed(symbols.rename(lowered, savingName)))
      return lowered.emitError() << "cannot name it " << savingName;
    lowered.setPublic();
    lowered->setAttr(kForwardSavingOf,
                     FlatSymbolRefAttr::get(f.getSymNameAttr()));
  }
  return success();
}

} // namespace
