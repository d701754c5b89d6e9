//===- TranslateOps.h - Instructions the translator builds itself -*- C++ -*-===//
//
// Internal to lib/Execution. Most IR ops become one runtime instruction
// through the op table (ProgramBuilder.cpp's Translator::emit). These are
// the ones it builds itself: rank-local linalg.matmul (a gemm, its
// transposes read from the indexing maps, a non-zero init added after),
// shardlin.from_local (its chunk spec read from the result type), the
// fills of chains that read no tensor of their shape, and issue 41's
// attention, rope and local_slice (TranslateAttention.cpp). The translator hands
// them what they need through InstrSink.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_LIB_EXECUTION_TRANSLATEOPS_H
#define SHARDLIN_LIB_EXECUTION_TRANSLATEOPS_H

#include "shardlin/Dialect/Shardlin/IR/RowReductions.h"
#include "shardlin/Dialect/Shardlin/IR/ShardlinOps.h"
#include "shardlin/runtime/program/Program.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Operation.h"

namespace mlir::shardlin::translation {

namespace rt = ::shardlin::rt;

/// The translator's side: values, instructions and the world size.
class InstrSink {
public:
  virtual ~InstrSink() = default;
  /// The program value of `v`, or a located error at `user` saying that
  /// the runtime cannot execute what defines it.
  virtual FailureOr<int> operand(Operation *user, Value v) = 0;
  /// A new program value of type `type` for `v` (or, with a null `v`, a
  /// temporary that no IR value names).
  virtual FailureOr<int> define(Location loc, Value v, Type type) = 0;
  /// Appends `in`; its location is set from `loc`.
  virtual void append(Location loc, rt::Instr in) = 0;
  /// Notes that the program runs on `worldSize` ranks.
  virtual LogicalResult useWorldSize(Location loc, int64_t worldSize) = 0;
  /// The world size noted so far (by the arguments' and earlier ops' chunk
  /// specs and collectives), or 0 if none.
  virtual int64_t worldSize() const = 0;
};

/// The runtime's form of a chunk spec (the dialect's API has no runtime
/// types; both sides compute chunks with ChunkLayout.h).
rt::ChunkSpec toChunkSpec(ChunkAttr chunk);

/// The chunk spec of a sharded type, a chunk of whole blocks (`block = D`
/// without bounds) as its explicit bounds on the type's dim: what
/// --lower-sharded-linear's materializeBlockChunks makes of it, for the
/// signature of an entry translated before lowering (shardlin-run --jit).
rt::ChunkSpec toChunkSpec(ShardedType type);

/// The value whose dims give the dynamic sizes `sizes` of a tensor of type
/// `type`: each dynamic size is `tensor.dim %t, i` of one tensor %t of the
/// same rank (with `leading`, of a rank at least `type`'s: its leading dims,
/// as a fill reads them) at the same position i. A null Value if `type` is
/// static; failure if the sizes are not of that form.
FailureOr<Value> dimsSource(ArrayRef<OpFoldResult> sizes,
                            RankedTensorType type, bool leading = false);

/// Appends x^n, x being node `base` of `expr`, as the products that LLVM
/// computes for llvm.powi with a constant n (expandPower: bit for bit the
/// --jit's result in the same type); returns the node of x^n.
int appendPower(rt::ExprProgram &expr, int base, int64_t exponent);

/// The program value of `v`, an input of the elementwise instruction of
/// `root`'s chain: its own, or, for an input of another element type (one
/// the chain reads only through conversions to root's type, which
/// ElementwiseChains::analyze checked), a `convert` of it to root's type.
FailureOr<int> elementwiseOperand(Operation &root, Value v, InstrSink &sink);

/// linalg.matmul on each rank's tensors: gemm(A, B) with transposes from
/// the indexing maps, plus the init unless it is a zero fill.
LogicalResult translateMatmul(linalg::MatmulOp op, InstrSink &sink);

/// Whether `op`'s result is read only as the zero init of linalg.matmul
/// ops (translateMatmul does not read it: no instruction computes it).
bool isOnlyZeroMatmulInit(Operation &op);

/// from_local: a view whose chunk spec (the result type's, with its bounds
/// made explicit) says which chunk of which global tensor it is.
LogicalResult translateFromLocal(FromLocalOp op, InstrSink &sink);

/// A fill: the stored value of chain `root` that reads no tensor of its
/// shape, as `expr` over `vectors` (row vectors of its last dim), its
/// dynamic dims taken from the init the chain writes into.
LogicalResult translateFill(Operation &root, rt::ExprProgram expr,
                            ArrayRef<Value> vectors, InstrSink &sink);

/// A reduction over the last dim (a norm's): reduce_last of its input
/// and init (TranslateReductions.cpp).
LogicalResult translateRowReduction(Operation &op, const RowReduction &red,
                                    InstrSink &sink);

/// shardlin.attention: `attention` with the rank-local form's head tables,
/// or, for the global form, every rank all heads (TranslateAttention.cpp).
LogicalResult translateAttention(AttentionOp op, InstrSink &sink);

/// shardlin.attention_grad: `attention_grad` (wrt 0, 1, 2 for q, k, v),
/// with the tables of translateAttention.
LogicalResult translateAttentionGrad(AttentionGradOp op, InstrSink &sink);

/// shardlin.rope: `rope`.
LogicalResult translateRope(RopeOp op, InstrSink &sink);

/// shardlin.local_slice: `local_slice`, each rank's [b, e) of a dim.
LogicalResult translateLocalSlice(LocalSliceOp op, InstrSink &sink);

/// shardlin.local_place: `local_place`, each rank's operand at its [b, e)
/// of a dim of a zero result.
LogicalResult translateLocalPlace(LocalPlaceOp op, InstrSink &sink);

} // namespace mlir::shardlin::translation

#endif
