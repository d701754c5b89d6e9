//===- ProgramBuilder.cpp - Lowered IR to the runtime's Program -----------===//
//
// The translation of one lowered function into a runtime Program
// (translateToProgram) and of a compiled entry's signature. What comes
// before it (import, lowering, the entry's choice) is ExecutionPipeline.cpp.
//
//===----------------------------------------------------------------------===//

#include "shardlin/Execution/ProgramBuilder.h"

#include "TranslateOps.h"
#include "shardlin/Dialect/Shardlin/IR/ArgAttrs.h"
#include "shardlin/Dialect/Shardlin/IR/ShardlinDialect.h"
#include "shardlin/Dialect/Shardlin/IR/ShardlinOps.h"
#include "shardlin/Dialect/Shardlin/Transforms/ElementwiseChains.h"
#include "shardlin/Dialect/Shardlin/Transforms/Passes.h"
#include "shardlin/runtime/program/OpTable.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;
using namespace mlir::shardlin;
namespace rt = ::shardlin::rt;

namespace {

using translation::toChunkSpec;

/// A chain's steps as the runtime's expression (Expr.h).
class ExprBuilder : public ChainVisitor {
public:
  FailureOr<int> input(Value value, bool vector) override {
    // The runtime tells a broadcast vector from a full tensor by its rank.
    auto it = llvm::find(inputs, value);
    rt::ExprNode n;
    n.op = rt::ExprOp::Input;
    n.input = static_cast<int>(it - inputs.begin());
    if (it == inputs.end()) {
      inputs.push_back(value);
      vectors.push_back(vector);
    }
    return add(n);
  }

  FailureOr<int> constant(double value, Type) override {
    rt::ExprNode n;
    n.op = rt::ExprOp::Const;
    n.value = value;
    return add(n);
  }

  FailureOr<int> compute(Operation *op, ArrayRef<int> args) override {
    std::optional<rt::ExprOp> kind = exprOpOf(op);
    if (!kind || args.size() > 3)
      return op->emitError() << "internal: no runtime op for '"
                             << op->getName() << "'";
    rt::ExprNode n;
    n.op = *kind;
    llvm::copy(args, n.args);
    if (auto cmp = dyn_cast<arith::CmpFOp>(op))
      n.predicate = static_cast<rt::CmpPredicate>(cmp.getPredicate());
    return add(n);
  }

  FailureOr<int> power(Operation *, int base, int64_t exponent) override {
    return translation::appendPower(expr, base, exponent);
  }

  rt::ExprProgram expr;
  SmallVector<Value> inputs;
  /// Whether each input is read as a row vector (a broadcast).
  std::vector<bool> vectors;

private:
  static std::optional<rt::ExprOp> exprOpOf(Operation *op) {
    using E = rt::ExprOp;
    return llvm::StringSwitch<std::optional<E>>(op->getName().getStringRef())
        .Case("arith.addf", E::Add)
        .Case("arith.subf", E::Sub)
        .Case("arith.mulf", E::Mul)
        .Case("arith.divf", E::Div)
        .Case("arith.negf", E::Neg)
        .Case("arith.maximumf", E::Maximum)
        .Case("arith.minimumf", E::Minimum)
        .Case("arith.maxnumf", E::MaxNum)
        .Case("arith.minnumf", E::MinNum)
        .Case("arith.cmpf", E::Cmp)
        .Case("arith.select", E::Select)
        .Case("math.tanh", E::Tanh)
        .Case("math.erf", E::Erf)
        .Case("math.exp", E::Exp)
        .Case("math.log", E::Log)
        .Case("math.sqrt", E::Sqrt)
        .Case("math.rsqrt", E::Rsqrt)
        .Case("math.absf", E::Abs)
        .Default(std::nullopt);
  }

  int add(const rt::ExprNode &n) {
    expr.nodes.push_back(n);
    return static_cast<int>(expr.nodes.size()) - 1;
  }
};

/// An entry's arguments and the world size of its chunk specs: what a
/// program and a compiled entry's signature share.
class SignatureBuilder {
protected:
  static std::string locationString(Location loc) {
    if (auto flc = loc->findInstanceOf<FileLineColLoc>())
      return (flc.getFilename().str() + ":" + std::to_string(flc.getLine()) +
              ":" + std::to_string(flc.getColumn()));
    return {};
  }

  FailureOr<rt::ValueType> valueType(Location loc, Type type) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor)
      return emitError(loc) << "cannot execute a value of type " << type
                            << " (expected a ranked tensor)";
    rt::ValueType vt;
    Type elt = tensor.getElementType();
    if (elt.isF16())
      vt.dtype = rt::DType::F16;
    else if (elt.isBF16())
      vt.dtype = rt::DType::BF16;
    else if (elt.isF32())
      vt.dtype = rt::DType::F32;
    else if (elt.isF64())
      vt.dtype = rt::DType::F64;
    else
      return emitError(loc) << "cannot execute element type " << elt
                            << " (expected f16, bf16, f32 or f64)";
    for (int64_t d : tensor.getShape())
      vt.shape.push_back(ShapedType::isDynamic(d) ? rt::kDynamic : d);
    return vt;
  }

  LogicalResult noteWorldSize(Location loc, ChunkAttr chunk) {
    return noteWorldSize(loc, chunk.getNumChunks());
  }
  LogicalResult noteWorldSize(Location loc, int64_t w) {
    if (program_.worldSize == 0) {
      program_.worldSize = w;
      return success();
    }
    if (program_.worldSize != w)
      return emitError(loc) << "the program mixes world sizes: " << w
                            << " here, " << program_.worldSize << " before";
    return success();
  }

  /// Appends argument `i` of `func` (plain or sharded, replicated if the
  /// import said so: kReplicatedArgAttrName) and its value.
  LogicalResult addArgument(func::FuncOp func, unsigned i) {
    Type type = func.getArgumentTypes()[i];
    // Diagnostics point at the function; the program names the argument
    // by its own location (or name).
    Location loc = func.getLoc();
    Location argLoc = func.isExternal() ? loc : func.getArgument(i).getLoc();
    rt::Argument a;
    a.location = locationString(argLoc);
    if (auto name = argLoc->findInstanceOf<NameLoc>(); a.location.empty() && name)
      a.location = name.getName().str();
    a.replicated = static_cast<bool>(func.getArgAttr(i, kReplicatedArgAttrName));
    if (Attribute parameter = func.getArgAttr(i, kParameterArgAttrName)) {
      auto name = dyn_cast<StringAttr>(parameter);
      if (!name || name.getValue().empty())
        return emitError(argLoc)
               << kParameterArgAttrName
               << " must be a non-empty string (the parameter's name), got "
               << parameter;
      a.parameter = name.str();
      if (Attribute rows = func.getArgAttr(i, kParameterRowsArgAttrName)) {
        auto range = dyn_cast<DenseI64ArrayAttr>(rows);
        if (!range || range.size() != 2 || range[0] < 0 || range[0] > range[1])
          return emitError(argLoc)
                 << kParameterRowsArgAttrName
                 << " must be array<i64: begin, end> with 0 <= begin <= end "
                    "(rows of the parameter), got "
                 << rows;
        a.parameterRows = rt::Range{range[0], range[1] - range[0]};
      }
    }
    if (a.replicated && isa<ShardedType>(type))
      return emitError(argLoc) << kReplicatedArgAttrName
                            << " on a sharded argument: a replicated "
                               "argument is a plain tensor";
    if (auto sharded = dyn_cast<ShardedType>(type)) {
      if (failed(noteWorldSize(loc, sharded.getSharding())))
        return failure();
      FailureOr<rt::ValueType> vt = valueType(loc, sharded.getLocalType());
      if (failed(vt))
        return failure();
      a.type = *vt;
      a.sharded = true;
      a.globalShape.assign(sharded.getShape().begin(),
                           sharded.getShape().end());
      a.sharding = toChunkSpec(sharded);
    } else {
      FailureOr<rt::ValueType> vt = valueType(loc, type);
      if (failed(vt))
        return failure();
      a.type = *vt;
    }
    program_.values.push_back(a.type);
    program_.args.push_back(std::move(a));
    return success();
  }

  /// Notes the layout of the next result, of the entry's result type
  /// `type`: a sharded one's global shape and chunk spec, for the runners
  /// that assemble it (rt::Program::resultLayouts).
  LogicalResult addResultLayout(Location loc, Type type) {
    rt::ResultLayout layout;
    if (auto sharded = dyn_cast<ShardedType>(type)) {
      if (failed(noteWorldSize(loc, sharded.getSharding())))
        return failure();
      layout.sharded = true;
      layout.globalShape.assign(sharded.getShape().begin(),
                                sharded.getShape().end());
      layout.sharding = toChunkSpec(sharded);
    }
    program_.resultLayouts.push_back(std::move(layout));
    return success();
  }

  /// Drops the layouts when no result is sharded: such a program's text is
  /// as it was before layouts existed.
  void dropPlainResultLayouts() {
    if (llvm::none_of(program_.resultLayouts,
                      [](const rt::ResultLayout &r) { return r.sharded; }))
      program_.resultLayouts.clear();
  }

  rt::Program program_;
};

/// The signature of an entry compiled to native code (rt::Program::compiled).
class CompiledSignature : public SignatureBuilder {
public:
  FailureOr<rt::Program> run(func::FuncOp func, StringRef code) {
    program_.name = func.getSymName().str();
    program_.compiled = code.str();
    Location loc = func.getLoc();
    for (unsigned i = 0; i < func.getNumArguments(); ++i)
      if (failed(addArgument(func, i)))
        return failure();
    for (Type type : func.getResultTypes()) {
      if (failed(addResultLayout(loc, type)))
        return failure();
      if (auto sharded = dyn_cast<ShardedType>(type))
        type = sharded.getLocalType();
      FailureOr<rt::ValueType> vt = valueType(loc, type);
      if (failed(vt))
        return failure();
      program_.results.push_back(static_cast<int>(program_.values.size()));
      program_.values.push_back(*vt);
    }
    dropPlainResultLayouts();
    // The world size: of every chunk spec and shardlin.rank in the entry and
    // the functions it calls, in types and attributes (the compiled code
    // asserts it).
    SymbolTableCollection symbols;
    SmallVector<Operation *> todo{func}, seen{func};
    while (!todo.empty()) {
      Operation *f = todo.pop_back_val();
      WalkResult walked = f->walk([&](Operation *op) {
        auto note = [&](ChunkAttr chunk) {
          return failed(noteWorldSize(op->getLoc(), chunk))
                     ? WalkResult::interrupt()
                     : WalkResult::advance();
        };
        if (op->getAttrDictionary().walk(note).wasInterrupted())
          return WalkResult::interrupt();
        if (auto rank = dyn_cast<RankOp>(op))
          if (failed(noteWorldSize(op->getLoc(), rank.getWorldSize())))
            return WalkResult::interrupt();
        if (auto sum = dyn_cast<AllReduceOp>(op))
          if (failed(noteWorldSize(op->getLoc(), sum.getWorldSize())))
            return WalkResult::interrupt();
        for (Type t : op->getResultTypes())
          if (t.walk(note).wasInterrupted())
            return WalkResult::interrupt();
        for (Region &region : op->getRegions())
          for (Block &block : region)
            for (Type t : block.getArgumentTypes())
              if (t.walk(note).wasInterrupted())
                return WalkResult::interrupt();
        if (auto call = dyn_cast<CallOpInterface>(op))
          if (Operation *callee = call.resolveCallableInTable(&symbols))
            if (!llvm::is_contained(seen, callee)) {
              seen.push_back(callee);
              todo.push_back(callee);
            }
        return WalkResult::advance();
      });
      if (walked.wasInterrupted())
        return failure();
    }
    rt::Status valid = program_.validate();
    if (!valid)
      return func.emitError() << "internal: the compiled entry's signature is "
                                 "invalid: "
                              << valid.message();
    return std::move(program_);
  }
};

class Translator : public SignatureBuilder, public translation::InstrSink {
public:
  explicit Translator(func::FuncOp func) : func_(func) {}

  // InstrSink, for TranslateOps.h.
  FailureOr<int> operand(Operation *user, Value v) override {
    auto it = ids_.find(v);
    if (it == ids_.end())
      return user->emitError() << "the shardlin runtime cannot execute the "
                                  "op that defines its operand of type "
                               << v.getType();
    return it->second;
  }
  FailureOr<int> define(Location loc, Value v, Type type) override {
    FailureOr<rt::ValueType> vt = valueType(loc, type);
    if (failed(vt))
      return failure();
    int id = static_cast<int>(program_.values.size());
    program_.values.push_back(*vt);
    if (v)
      ids_[v] = id;
    return id;
  }
  void append(Location loc, rt::Instr in) override {
    in.location = locationString(loc);
    program_.instrs.push_back(std::move(in));
  }
  LogicalResult useWorldSize(Location loc, int64_t worldSize) override {
    return noteWorldSize(loc, worldSize);
  }
  int64_t worldSize() const override { return program_.worldSize; }

  FailureOr<rt::Program> run() {
    program_.name = func_.getSymName().str();
    if (!func_.getBody().hasOneBlock())
      return func_.emitError() << "entry must have exactly one block";
    Block &body = func_.getBody().front();
    for (BlockArgument arg : body.getArguments()) {
      ids_[arg] = static_cast<int>(program_.values.size());
      if (failed(addArgument(func_, arg.getArgNumber())))
        return failure();
    }
    if (failed(chains_.analyze(body)))
      return failure();
    for (Operation &op : body)
      if (failed(translate(op)))
        return failure();
    rt::Status valid = program_.validate();
    if (!valid)
      return func_.emitError() << "internal: translated program is invalid: "
                               << valid.message();
    return std::move(program_);
  }

private:
  FailureOr<int> define(Value v) { return define(v.getLoc(), v, v.getType()); }

  /// The runtime ops by the IR op they are translated from.
  static const llvm::StringMap<const rt::OpInfo *> &opsByIrName() {
    static const llvm::StringMap<const rt::OpInfo *> map = [] {
      llvm::StringMap<const rt::OpInfo *> m;
      for (const rt::OpInfo &info : rt::opTable())
        for (const char *name : info.irOps)
          m[name] = &info;
      return m;
    }();
    return map;
  }

  /// One instruction from `op`, its attributes read by their ODS names;
  /// its operands are `operands` if given, else the op's.
  LogicalResult emit(Operation &op, const rt::OpInfo &info,
                     std::optional<ValueRange> operands = std::nullopt) {
    rt::Instr in;
    in.op = info.op;
    in.location = locationString(op.getLoc());
    for (const rt::OpAttribute &attr : info.attributes)
      for (const rt::OpAttribute::Field &field : attr.fields) {
        if (attr.kind == rt::OpAttribute::Kind::Flags) {
          // A UnitAttr (present or not) or a BoolAttr.
          Attribute a = op.getAttr(field.odsName);
          auto b = dyn_cast_or_null<BoolAttr>(a);
          in.*field.flag = b ? b.getValue() : static_cast<bool>(a);
          continue;
        }
        if (attr.kind == rt::OpAttribute::Kind::Ints) {
          auto ints = op.getAttrOfType<DenseI64ArrayAttr>(field.odsName);
          if (!ints)
            return op.emitError() << "internal: no '" << field.odsName
                                  << "' integer array to translate";
          (in.*field.ints)
              .assign(ints.asArrayRef().begin(), ints.asArrayRef().end());
          continue;
        }
        auto chunk = op.getAttrOfType<ChunkAttr>(field.odsName);
        if (!chunk)
          return op.emitError() << "internal: no '" << field.odsName
                                << "' chunk attribute to translate";
        if (failed(noteWorldSize(op.getLoc(), chunk)))
          return failure();
        in.*field.chunks = toChunkSpec(chunk);
      }
    // The lowering's decision, recorded on the ops it emits.
    if (auto lowering = op.getAttrOfType<DictionaryAttr>("shardlin.lowering")) {
      if (auto strategy = lowering.getAs<StringAttr>("strategy"))
        in.strategy = strategy.str();
      if (auto chunks = lowering.getAs<IntegerAttr>("overlap_chunks"))
        in.overlapChunks = static_cast<int>(chunks.getInt());
    }
    for (Value v : operands.value_or(op.getOperands())) {
      auto it = ids_.find(v);
      if (it == ids_.end())
        return op.emitError() << "the shardlin runtime cannot execute the "
                                 "op that defines its operand of type "
                              << v.getType();
      in.operands.push_back(it->second);
    }
    if (op.getNumResults() != 1)
      return op.emitError() << "internal: expected one result";
    FailureOr<int> r = define(op.getResult(0));
    if (failed(r))
      return failure();
    in.result = *r;
    program_.instrs.push_back(std::move(in));
    return success();
  }

  /// One elementwise instruction for the chain that computes `root`.
  LogicalResult emitElementwise(Operation &root) {
    ExprBuilder builder;
    FailureOr<int> result = chains_.walk(&root, builder);
    if (failed(result))
      return failure();
    // A chain that reads no tensor of its shape (a fill, a broadcast
    // vector) is a fill of it.
    const int64_t rank =
        cast<RankedTensorType>(root.getResult(0).getType()).getRank();
    if (llvm::all_of(builder.inputs, [&](Value v) {
          return rt::isRowVectorOperand(
              cast<RankedTensorType>(v.getType()).getRank(), rank);
        })) {
      builder.expr.nodes.resize(static_cast<size_t>(*result) + 1);
      return translation::translateFill(root, std::move(builder.expr),
                                   builder.inputs, *this);
    }
    rt::Instr in;
    in.op = rt::OpCode::Elementwise;
    in.location = locationString(root.getLoc());
    in.expr = std::move(builder.expr);
    // The result is the last node; steps after it (dead ops of a linalg
    // body, walked after the value it yields) are unreferenced.
    in.expr.nodes.resize(static_cast<size_t>(*result) + 1);
    for (Value v : builder.inputs) {
      if (!ids_.contains(v))
        return emitError(v.getLoc()) << "the shardlin runtime cannot execute "
                                        "the op that defines this value";
      FailureOr<int> id = translation::elementwiseOperand(root, v, *this);
      if (failed(id))
        return failure();
      in.operands.push_back(*id);
    }
    if (in.expr.nodes.size() > rt::kMaxExprNodes)
      return emitSplit(root, in, builder.vectors);
    FailureOr<int> r = define(root.getResult(0));
    if (failed(r))
      return failure();
    in.result = *r;
    program_.instrs.push_back(std::move(in));
    return success();
  }

  /// A new value of `type`, defined by an instruction of `op` at `location`
  /// (one that no IR value stands for).
  int emitTemporary(rt::OpCode op, std::vector<int> operands,
                    rt::ValueType type, const std::string &location,
                    rt::ExprProgram expr = {}, int result = -1) {
    rt::Instr in;
    in.op = op;
    in.location = location;
    in.operands = std::move(operands);
    in.expr = std::move(expr);
    if (result < 0) {
      result = static_cast<int>(program_.values.size());
      program_.values.push_back(std::move(type));
    }
    in.result = result;
    program_.instrs.push_back(std::move(in));
    return result;
  }

  /// `whole`, an elementwise instruction whose expression is larger than
  /// one instruction holds (rt::kMaxExprNodes), as one instruction per
  /// piece of it (rt::splitExpr). f16 and bf16 pieces compute and store in
  /// f32, their inputs converted first and the result converted back at
  /// the end: the value is rounded once, as one instruction would.
  LogicalResult emitSplit(Operation &root, const rt::Instr &whole,
                          const std::vector<bool> &vectors) {
    std::vector<rt::ExprPiece> pieces;
    rt::Status split = rt::splitExpr(whole.expr, vectors, rt::kMaxExprNodes,
                                     "this elementwise chain", pieces);
    if (!split)
      return root.emitError() << split.message();
    FailureOr<rt::ValueType> stored =
        valueType(root.getLoc(), root.getResult(0).getType());
    if (failed(stored))
      return failure();
    const bool narrow =
        stored->dtype == rt::DType::F16 || stored->dtype == rt::DType::BF16;
    const rt::DType compute = narrow ? rt::DType::F32 : stored->dtype;
    auto inCompute = [&](int id) {
      rt::ValueType t = program_.values[size_t(id)];
      t.dtype = compute;
      return t;
    };
    std::vector<int> operands;
    for (int id : whole.operands)
      operands.push_back(narrow ? emitTemporary(rt::OpCode::Convert, {id},
                                                inCompute(id), whole.location)
                                : id);
    const int rootId = static_cast<int>(program_.values.size());
    ids_[root.getResult(0)] = rootId;
    program_.values.push_back(*stored);
    std::vector<int> results;
    for (size_t p = 0; p < pieces.size(); ++p) {
      std::vector<int> reads;
      for (int ref : pieces[p].operands)
        reads.push_back(ref >= 0 ? operands[size_t(ref)]
                                 : results[size_t(-1 - ref)]);
      rt::ValueType type = pieces[p].rowVector ? inCompute(reads.front())
                                               : inCompute(rootId);
      const bool last = p + 1 == pieces.size();
      results.push_back(emitTemporary(
          rt::OpCode::Elementwise, std::move(reads), std::move(type),
          whole.location, std::move(pieces[p].expr),
          last && !narrow ? rootId : -1));
    }
    if (narrow)
      emitTemporary(rt::OpCode::Convert, {results.back()}, *stored,
                    whole.location, {}, rootId);
    return success();
  }

  /// shardlin.constant: an entry of the program's constants table (its
  /// global value and, if split, its chunk spec) and the instruction that
  /// defines the rank's part of it.
  LogicalResult translateConstant(ConstantOp op) {
    RankedTensorType global = op.getGlobalType();
    FailureOr<rt::ValueType> vt = valueType(op.getLoc(), global);
    FailureOr<std::vector<char>> bytes = op.getBytes();
    if (failed(vt) || failed(bytes))
      return failure();
    rt::Constant c;
    c.dtype = vt->dtype;
    c.shape = vt->shape;
    c.bytes = std::move(*bytes);
    c.location = locationString(op.getLoc());
    Type local = global;
    if (ChunkAttr chunk = op.getSharding()) {
      if (failed(noteWorldSize(op.getLoc(), chunk)))
        return failure();
      c.sharded = true;
      c.sharding = toChunkSpec(chunk);
      local = cast<ShardedType>(op.getResult().getType()).getLocalType();
    }
    rt::Instr in;
    in.op = rt::OpCode::Constant;
    in.constantIndex = {static_cast<int64_t>(program_.constants.size())};
    program_.constants.push_back(std::move(c));
    FailureOr<int> id = define(op.getLoc(), op.getResult(), local);
    if (failed(id))
      return failure();
    in.result = *id;
    append(op.getLoc(), std::move(in));
    return success();
  }

  /// A reshape's reassociation as rt::Instr::reshapeGroups: for each dim
  /// of the side of higher rank (an expand_shape's result, a
  /// collapse_shape's operand), the dim of the other side whose group it is.
  static std::vector<int64_t> reshapeGroups(Operation &op) {
    auto expand = dyn_cast<tensor::ExpandShapeOp>(op);
    SmallVector<ReassociationIndices> groups =
        expand ? expand.getReassociationIndices()
               : cast<tensor::CollapseShapeOp>(op).getReassociationIndices();
    std::vector<int64_t> out;
    for (auto [g, group] : llvm::enumerate(groups))
      for (size_t i = 0; i < group.size(); ++i)
        out.push_back(static_cast<int64_t>(g));
    return out;
  }

  /// tensor.expand_shape and tensor.collapse_shape: a reshape whose dynamic
  /// output sizes come from the tensor whose dims they are (`tensor.dim %t,
  /// i` for result dim i of the same rank: the lowering restores a linear's
  /// batch dims from its input that way), or from its reassociation groups
  /// (an operand dim over the group's static dims: [W*B*S, f] split into
  /// sequences [W*B, S, f] is W*B*S / S and f) with one left inferred from
  /// the element count.
  LogicalResult emitReshape(Operation &op, const rt::OpInfo &info) {
    auto type = cast<RankedTensorType>(op.getResult(0).getType());
    Value src = op.getOperand(0);
    if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op)) {
      FailureOr<Value> like =
          translation::dimsSource(expand.getMixedOutputShape(), type);
      if (succeeded(like) && *like)
        return emit(op, info, ValueRange{src, *like});
    }
    if (type.getNumDynamicDims() <= 1)
      return emit(op, info, ValueRange{src});
    // The dynamic dims that their group does not size (an expand_shape's
    // group with another dynamic dim): one at most, sized by the element
    // count. A collapse_shape's groups size every result dim.
    std::vector<int64_t> keep = reshapeGroups(op);
    int64_t unknown = 0;
    if (isa<tensor::ExpandShapeOp>(op))
      for (auto [d, size] : llvm::enumerate(type.getShape())) {
        bool sized = true;
        for (auto [e, other] : llvm::enumerate(type.getShape()))
          if (e != d && keep[e] == keep[d] && ShapedType::isDynamic(other))
            sized = false;
        if (ShapedType::isDynamic(size) && !sized)
          ++unknown;
      }
    if (unknown > 1)
      return op.emitError()
             << "the shardlin runtime executes a " << op.getName() << " to "
             << type
             << " only when its dynamic sizes are the dims of one tensor of "
                "the same rank at the same positions (tensor.dim %t, i for "
                "dim i), or sizes its reassociation groups give (an operand "
                "dim over the group's static dims) but one";
    if (failed(emit(op, info, ValueRange{src})))
      return failure();
    program_.instrs.back().reshapeGroups = std::move(keep);
    return success();
  }

  LogicalResult translate(Operation &op) {
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      for (auto [v, type] :
           llvm::zip(ret.getOperands(), func_.getResultTypes())) {
        auto it = ids_.find(v);
        if (it == ids_.end())
          return ret.emitError() << "cannot return this value";
        program_.results.push_back(it->second);
        if (failed(addResultLayout(ret.getLoc(), type)))
          return failure();
      }
      dropPlainResultLayouts();
      return success();
    }
    if (chains_.contains(&op))
      return chains_.isStored(&op) && !translation::isOnlyZeroMatmulInit(op)
                 ? emitElementwise(op)
                 : success();
    if (auto cst = dyn_cast<ConstantOp>(op))
      return translateConstant(cst);
    // The rank's chunk of a split constant is what its instruction defines;
    // that of a from_local is its source (what the op's folder says).
    if (auto local = dyn_cast<LocalShardOp>(op)) {
      if (local.getSource().getDefiningOp<ConstantOp>()) {
        ids_[local.getResult()] = ids_.lookup(local.getSource());
        return success();
      }
      if (auto from = local.getSource().getDefiningOp<FromLocalOp>()) {
        FailureOr<int> source = operand(&op, from.getSource());
        if (failed(source))
          return failure();
        ids_[local.getResult()] = *source;
        return success();
      }
    }
    if (auto matmul = dyn_cast<linalg::MatmulOp>(op))
      return translation::translateMatmul(matmul, *this);
    if (std::optional<RowReduction> red = matchRowReduction(&op))
      return translation::translateRowReduction(op, *red, *this);
    if (auto fromLocal = dyn_cast<FromLocalOp>(op))
      return translation::translateFromLocal(fromLocal, *this);
    if (auto attention = dyn_cast<AttentionOp>(op))
      return translation::translateAttention(attention, *this);
    if (auto grad = dyn_cast<AttentionGradOp>(op))
      return translation::translateAttentionGrad(grad, *this);
    if (auto rope = dyn_cast<RopeOp>(op))
      return translation::translateRope(rope, *this);
    if (auto slice = dyn_cast<LocalSliceOp>(op))
      return translation::translateLocalSlice(slice, *this);
    if (auto place = dyn_cast<LocalPlaceOp>(op))
      return translation::translateLocalPlace(place, *this);
    if (auto sum = dyn_cast<AllReduceOp>(op))
      if (failed(noteWorldSize(op.getLoc(), sum.getWorldSize())))
        return failure();
    if (isa<LinearOp>(op))
      return op.emitError() << "shardlin.linear must be lowered first "
                               "(run --lower-sharded-linear)";
    // The sizes of dynamic shapes: read by the instructions that take them
    // (an expand_shape's output sizes; a tensor.empty, whose shape the
    // runtime takes from its linalg op's operands), and fpowi's exponents,
    // which its expansion reads. Any other user has no runtime value to
    // read and says so.
    if (isSizeComputation(op))
      return success();
    // The native path's exchange of run-time sizes: a plan exchanges them
    // before it runs.
    if (isa<GatherBoundsOp>(op))
      return op.emitError()
             << "'shardlin.gather_bounds' is the native path's (shardlin-prepare-native "
                "emits it, --jit runs it); the plan executor exchanges the "
                "ranks' sizes itself: drop it and the collectives' bounds "
                "operands, or run with --jit";
    auto it = opsByIrName().find(op.getName().getStringRef());
    if (it == opsByIrName().end())
      return op.emitError() << "the shardlin runtime cannot execute '"
                            << op.getName() << "'";
    if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(op))
      return emitReshape(op, *it->second);
    // The init of a transpose is not read.
    if (auto transpose = dyn_cast<linalg::TransposeOp>(op))
      return emit(op, *it->second, ValueRange{transpose.getInput()});
    return emit(op, *it->second);
  }

  func::FuncOp func_;
  ElementwiseChains chains_;
  llvm::DenseMap<Value, int> ids_;
};

} // namespace

FailureOr<rt::Program> mlir::shardlin::translateToProgram(func::FuncOp func) {
  return Translator(func).run();
}

FailureOr<rt::Program>
mlir::shardlin::translateSignature(func::FuncOp func, StringRef code) {
  return CompiledSignature().run(func, code);
}
