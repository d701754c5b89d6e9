//===- ElementwiseChains.h - Chains of rank-local elementwise ops -*- C++
//-*-===//
//
// The rank-local elementwise ops between and around linears, as producers
// write them: arith and math ops on tensors (arith.extf / truncf between
// f16 or bf16 and f32 included, math.fpowi with a constant integer
// exponent), splat constants, linalg
// structured ops whose iterators are all parallel (linalg.elementwise,
// linalg.generic, linalg.fill, ...) with identity maps or a vector broadcast
// along the last dim, and tensor.empty as their unread init.
//
// A chain is a DAG of such ops; walkChain presents it, from its inputs to a
// root value, as a list of scalar steps (arith/math ops on elements,
// constants, inputs), linalg bodies inlined. Two clients read chains this
// way: the executor, which turns each stored value's chain into one runtime
// `elementwise` instruction (lib/Execution), and the block fusion of
// --lower-sharded-linear, which rebuilds the chain between a col-wise and a
// row-wise linear on the rank's block of features (docs/lowering.md).
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_DIALECT_SHARDLIN_TRANSFORMS_ELEMENTWISECHAINS_H
#define SHARDLIN_DIALECT_SHARDLIN_TRANSFORMS_ELEMENTWISECHAINS_H

#include "mlir/IR/Block.h"
#include "mlir/IR/Value.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <optional>

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace mlir::shardlin {

/// Registers the dialects whose ops a chain may hold (arith, math, linalg,
/// tensor), for the tools and the executor.
void registerElementwiseDialects(DialectRegistry &registry);

/// The value of a float `arith.constant`, scalar or splat tensor, or of an
/// `arith.truncf` / `extf` of a scalar one (rounded to its type); nullopt
/// for any other op (or none).
std::optional<double> floatConstantValue(Operation *op);

/// The value of an integer `arith.constant` (any width, read as signed),
/// scalar or splat tensor, that fits 64 bits, or of an integer scalar that
/// size computations (isSizeComputation: `math.ipowi`, `arith.muli`, ...)
/// compute from such constants alone, folded; nullopt for any other op (or
/// none), booleans (i1) and `index` included.
std::optional<int64_t> integerConstantValue(Operation *op);

/// The exponent of `math.fpowi` when it is a constant: an integer
/// constant (integerConstantValue) as the op's operand, or, inside a linalg
/// body, captured from outside or passed as a scalar input. nullopt for
/// any other exponent (the chains take only constant ones).
std::optional<int64_t> powerExponent(Operation *fpowi);

/// x^n as LLVM computes `llvm.powi` (what math.fpowi lowers to on --jit)
/// for a constant n: SelectionDAG's ExpandPowI, by repeated squaring,
/// multiplies the squares x^(2^i) of n's set bits into the result from the
/// lowest bit up (x^5 = x * ((x * x) * (x * x))), then takes 1 / that for
/// n < 0; 1 for n = 0. compiler-rt's __powi*f2 and MLIR's math-expand-ops
/// multiply in the same order. Every step is one rounded IEEE product (or
/// the one quotient) of the same operands as LLVM's, so the expansion is
/// exact: in one type it gives bit for bit what LLVM computes (products
/// commute exactly; only their grouping matters). `multiply(a, b)` makes a
/// * b, `reciprocal(a)` 1 / a and `one()` the constant 1 of the chain's
/// compute type; returns the handle of x^n.
FailureOr<int> expandPower(int base, int64_t exponent,
                           function_ref<FailureOr<int>(int, int)> multiply,
                           function_ref<FailureOr<int>(int)> reciprocal,
                           function_ref<FailureOr<int>()> one);

/// Whether `op` computes a size: arith on `index` or integer scalars
/// (constants, addi, subi, muli, divui, divsi, ceildivui, ceildivsi,
/// floordivsi, remui, remsi, min/max, index_cast) or tensor.dim. The import
/// writes the sizes of reshaped chunks so (`arith.divui` of a tensor.dim).
/// The plan executor gives them no instruction: the runtime finds every
/// dynamic size from the data (a reshape's one dynamic dim from the element
/// count, a tensor.empty's from its linalg op's operands), which for a
/// valid program is the value they compute; any other user of their
/// values, which would need it at run time, is reported by that user.
bool isSizeComputation(Operation &op);

/// One sentence listing the supported elementwise ops, for diagnostics.
extern const char *const kSupportedElementwiseOps;

/// Whether `op` may be part of a chain. Ops of the arith, math and linalg
/// dialects that may not fail: with `emitErrors`, with a located error that
/// names the op and what is supported. Other ops are not members.
LogicalResult isChainMember(Operation &op, bool &member, bool emitErrors);

/// The steps of a chain as walkChain presents them, in an order in which
/// every step comes after the steps it reads. Handles are the visitor's own
/// (for example indices into its list of nodes).
class ChainVisitor {
public:
  virtual ~ChainVisitor() = default;
  /// A tensor the chain reads: of the chain's shape, or, with `vector`, a
  /// rank-1 tensor broadcast along the chain's last dim.
  virtual FailureOr<int> input(Value value, bool vector) = 0;
  /// A float constant of the chain's element type `type`.
  virtual FailureOr<int> constant(double value, Type type) = 0;
  /// An elementwise arith or math op (on tensors or on scalars of a linalg
  /// body) applied to the handles of its operands, in order.
  virtual FailureOr<int> compute(Operation *op, ArrayRef<int> args) = 0;
  /// arith.extf or arith.truncf (between f16 or bf16 and f32) of `arg`. The
  /// default passes the operand through: the runtime computes f16 and bf16
  /// chains in f32 and rounds once, where a value is stored, so a widening
  /// is exact there and a narrowing is the rounding of the stored value. A
  /// visitor that rebuilds the chain as IR records it instead.
  virtual FailureOr<int> convert(Operation *op, int arg) { return arg; }
  /// math.fpowi of `base` by its constant `exponent` (powerExponent; the
  /// exponent operand is no step). The executor expands it (expandPower),
  /// a visitor that rebuilds the chain as IR rebuilds the op.
  virtual FailureOr<int> power(Operation *op, int base, int64_t exponent) = 0;
};

/// Walks the chain that computes `root`: a tensor value for which `isLeaf`
/// is false is expanded into the steps that compute it (it must be defined
/// by a chain member: isLeaf is true for every other value); the others are
/// inputs. Each value is visited once. Returns the handle of `root`'s value;
/// fails, with a located error when `emitErrors`, on a chain that reads
/// undefined contents (tensor.empty) or a scalar that is not a constant.
FailureOr<int> walkChain(Value root, function_ref<bool(Value)> isLeaf,
                         ChainVisitor &visitor, bool emitErrors = true);

/// The chains of one function body and the values they store: a value is
/// stored where something other than a chain op reads it (a collective, a
/// GEMM, the return) or reads it by broadcast, or where two stored values
/// would otherwise both compute it; the rest is recomputed in registers.
class ElementwiseChains {
public:
  /// Classifies the ops of `body` and chooses the stored values. Emits a
  /// located error for an unsupported op of the elementwise dialects and for
  /// values that cannot be stored (booleans, constants). A chain may be of
  /// any length: the executor splits one too large for a runtime instruction
  /// (rt::splitExpr).
  LogicalResult analyze(Block &body);

  /// Whether `op` belongs to a chain (it is computed by the chain of each
  /// stored value that reads it, or not at all).
  bool contains(Operation *op) const { return members_.contains(op); }
  /// Whether `op`'s result is stored: it gets one instruction.
  bool isStored(Operation *op) const { return stored_.contains(op); }

  /// Walks the chain that computes stored `root`'s value; stored values
  /// and values defined outside the chains are its inputs.
  FailureOr<int> walk(Operation *root, ChainVisitor &visitor) const;

private:
  /// Whether `use` reads its value as part of the user's chain (element by
  /// element, at the same index).
  bool fusesInto(OpOperand &use) const;

  llvm::DenseSet<Operation *> members_;
  llvm::DenseSet<Operation *> stored_;
};

} // namespace mlir::shardlin

#endif
