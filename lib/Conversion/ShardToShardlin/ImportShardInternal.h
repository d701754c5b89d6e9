//===- ImportShardInternal.h - The importer's pieces ------------*- C++ -*-===//
//
// Internal to the import (lib/Conversion/ShardToShardlin): how the
// importer (ImportShard*.cpp) represents the sharding of a value, and the
// per-function rewriter that the files share.
//
// The importer walks a function of the global view once, in order, and
// builds its SPMD body in a new block. Every tensor value of the old body
// gets a layout (how the ranks hold it: replicated, or split along one dim
// by a chunk spec) and a local value in the new body (the rank's part).
// Values that can be built in any layout for free (tensor.empty, splat
// constants, fills, broadcasts of replicated vectors) are built where a user
// needs them, in the user's layout; so are the reshapes and transposes that
// feed a linear, which the linear usually absorbs. Other constants (a
// frontend's weights and biases) are shardlin.constant ops, split where the
// module or a user says so.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_LIB_CONVERSION_SHARDTOSHARDLIN_IMPORTSHARDINTERNAL_H
#define SHARDLIN_LIB_CONVERSION_SHARDTOSHARDLIN_IMPORTSHARDINTERNAL_H

#include "TMTensor.h"
#include "shardlin/Dialect/Shardlin/IR/ShardlinOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <optional>
#include <string>

namespace mlir::shardlin::import {

/// The one grid of the module.
struct Grid {
  shard::GridOp op;
  /// Its symbol name.
  StringRef name;
  int64_t worldSize = 1;
};

/// How the ranks hold a tensor of the global view: replicated (dim < 0),
/// or split along `dim` by `chunks` (chunk i on rank i, the grid's order;
/// explicit bounds only where they are not the ceil rule).
struct ValueLayout {
  int64_t dim = -1;
  ChunkAttr chunks;

  static ValueLayout replicated() { return {}; }
  bool isReplicated() const { return dim < 0; }
  bool operator==(const ValueLayout &o) const {
    return dim == o.dim && chunks == o.chunks;
  }
  bool operator!=(const ValueLayout &o) const { return !(*this == o); }
};

/// `replicated` or `split along dim D by <chunks>`, for diagnostics.
std::string describe(const ValueLayout &layout);

/// Rewrites each linear on a fused q/k/v weight whose result is sliced
/// into q, k and v heads into three linears on the weight's row ranges,
/// each split in whole heads over the grid (ImportShardFusedQKV.cpp;
/// docs/attention.md, "Fused QKV"). Runs before the function's walk.
LogicalResult splitFusedProjections(func::FuncOp func, const Grid &grid);

/// The rank's type of a value of `global` type in `layout`.
RankedTensorType localType(RankedTensorType global, const ValueLayout &layout);

/// The layout of dim `dim` of a tensor with `size` elements split over the
/// grid by `bounds` (empty: the even split), canonical: no bounds where
/// they are the ceil rule.
ValueLayout splitLayout(MLIRContext *ctx, const Grid &grid, int64_t dim,
                   int64_t size, ArrayRef<int64_t> bounds = {});

/// The layout `sharding` (a shard.sharding value) gives a tensor of `type`.
/// Fails with a diagnostic at `at` for what shardlin does not support:
/// another grid, halo sizes, dynamic offsets, several split dims, a split
/// of a dynamic dim or a non-divisible one without offsets (the shard
/// dialect's types size every shard dimSize / shardCount, which is no split
/// of such a dim), offsets that are not the dim's boundaries.
FailureOr<ValueLayout> parseSharding(Value sharding, RankedTensorType type,
                                const Grid &grid, Operation *at);

/// What a linalg.matmul and the ops around it mean (ImportShardLinearMatch):
/// the first phase of a linear's import, read from the IR alone.
struct LinearMatch {
  /// A linalg.matmul, or a linalg.batch_matmul whose right-hand operand is
  /// one weight broadcast over the batch (an N-D linear).
  linalg::LinalgOp op;
  /// The matmul's operands: x, the weight as the matmul reads it, the init.
  Value x, rhs, init;
  /// A batch_matmul's x before the collapse of its leading dims and the
  /// expand that restores them after (the N-D form of a 4-D or deeper
  /// input); null where x is the batch_matmul's own.
  Value ndX;
  tensor::ExpandShapeOp ndExpand;
  /// The weight as stored (through a transpose) and its orientation.
  Value weight;
  bool kn = true;
  /// The bias vector, if any; an init that is not a bias, added after.
  Value bias, addend;
  /// The add that applies the bias after the matmul, absorbed by the linear.
  Operation *biasAdd = nullptr;
  /// f16 / bf16 operands accumulated into an f32 init and rounded by the
  /// arith.truncf linalg.generic that follows (torch-mlir's form of a
  /// half-precision matmul): shardlin's linear in that type, which
  /// accumulates in f32 and rounds once. The rounding op is absorbed.
  Operation *truncf = nullptr;
  /// The value the linear defines: the matmul's result, or its bias add's.
  Value result;
};

/// How a split weight's linear holds its values (ImportShardLinear's plan).
struct LinearPlan {
  /// The activation the linear takes (an N-D x through its collapse) and
  /// its layout.
  Value x;
  ValueLayout xl;
  /// The expand that restores an N-D result, absorbed.
  tensor::ExpandShapeOp expand;
  Layout inKind = Layout::Rows, outKind = Layout::Rows;
  ValueLayout out;
  ChunkAttr rowChunks;
};

/// `v` with the shard.shard ops that annotate it looked through.
Value throughShards(Value v);

/// The form of `op` (types, indexing maps, the weight's orientation), or
/// failure with a diagnostic for a form shardlin does not take.
FailureOr<LinearMatch> matchMatmul(linalg::MatmulOp op);

/// The form of a linalg.batch_matmul that is one weight broadcast over the
/// batch (a broadcasting linalg.generic, or the batch_matmul's own
/// indexing_maps), with x collapsed from N-D and the result expanded back
/// where the exporter does so; or failure with a diagnostic.
FailureOr<LinearMatch> matchBatchMatmul(linalg::BatchMatmulOp op);

/// The bias and the result of `m`: a broadcast init, or an add after; fails
/// with a diagnostic for an undefined init or a bias of another type.
LogicalResult matchBias(LinearMatch &m);

/// The matmul's x is `collapse` of an N-D tensor, its (biased) result is
/// expanded back by `expand`: both fold into an N-D linear.
bool foldsIntoNdLinear(tensor::CollapseShapeOp collapse,
                       tensor::ExpandShapeOp expand);

/// Whether `op` only feeds linears in a way they absorb (a transpose of a
/// weight, a collapse of an N-D input), so that it is built only if a user
/// needs it after all.
bool feedsLinearsOnly(Operation *op);

/// torch-mlir's attention (ImportShardAttention.cpp): a tm_tensor.attention
/// and the reshapes around it, read as shardlin.attention's operands.
struct AttentionMatch {
  Operation *op = nullptr;
  /// The projections [B, S, H*D] (q) and [B, S, Hkv*D] (k, v).
  Value q, k, v;
  int64_t headDim = 0, group = 1;
  /// The [B, S, H*D] value the result's reshapes define.
  Value result;
  /// A rotate-half RoPE on q's or k's heads: the [S, D] cos and sin
  /// constants it multiplies by (null when there is none).
  arith::ConstantOp qCos, qSin, kCos, kSin;
  /// The ops of the form, absorbed.
  SmallVector<Operation *> absorbed;
};

/// The rewriter of one function.
class FunctionImporter {
public:
  FunctionImporter(func::FuncOp func, const Grid &grid)
      : func_(func), grid_(grid), b_(func.getContext()) {}

  /// Imports the function; on failure it is left as it was and one
  /// diagnostic says why.
  LogicalResult run();

  //===--------------------------------------------------------------------===//
  // Values (ImportShardValues.cpp)
  //===--------------------------------------------------------------------===//

  /// The layout of old tensor value `v`, or nullopt if it can be built in
  /// any layout (see the file comment).
  FailureOr<std::optional<ValueLayout>> layoutOf(Value v);
  /// The rank's part of old value `v` in layout `want`, resharded or built
  /// as needed. `donor`, if given, is a new value of the same local shape
  /// whose dims size what is built (`?` dims need a size at run time).
  FailureOr<Value> get(Value v, const ValueLayout &want, Value donor = {});
  /// The rank's part of `v` in its own layout (replicated if any).
  FailureOr<Value> get(Value v);
  /// A scalar or index old value (a constant, a tensor.dim) in the new body.
  FailureOr<Value> getScalar(Value v);
  /// Records that old `v` is `local` in `layout`, and reshards it to the
  /// layout the module states for `v` (a shard.shard on it), if any.
  LogicalResult define(Value v, Value local, const ValueLayout &layout);
  /// The layout the module states for old value `v` (a shard.shard of it
  /// without annotate_for_users), if any.
  std::optional<ValueLayout> declared(Value v) const;
  /// `local`, of `global` type, from layout `from` to `to`: local_chunk
  /// (replicated to split, no communication), all_gather (split to
  /// replicated) or both.
  FailureOr<Value> reshard(Location loc, Value local, RankedTensorType global,
                           const ValueLayout &from, const ValueLayout &to);

  /// A tensor arith.constant (ImportShardValues.cpp): a splat that no
  /// annotation splits is built where used; any other is one
  /// shardlin.constant, split (the rank's chunk, through local_shard) by the
  /// layout the module states for it (statedLayout), else whole on every
  /// rank, and split where a user needs it split (get, splitConstant).
  LogicalResult importConstant(arith::ConstantOp op);
  /// The layout the module states for constant `v`: on it, for its users
  /// (annotate_for_users), or on a transpose or broadcast of it; nullopt if
  /// none.
  FailureOr<std::optional<ValueLayout>> statedLayout(Value v, unsigned depth);
  /// The rank's chunk of constant `op` split by `layout`: a shardlin.constant
  /// of a sharded type and its local_shard, built once per layout.
  FailureOr<Value> splitConstant(arith::ConstantOp op,
                                 const ValueLayout &layout);

  /// Reshapes and transposes: built where the input's layout allows, and
  /// on demand for the deferred ones (layoutOf).
  LogicalResult importReshape(Operation &op);
  LogicalResult importTranspose(linalg::TransposeOp op);

  //===--------------------------------------------------------------------===//
  // Linears (ImportShardLinear.cpp; the match in ImportShardLinearMatch.cpp)
  //===--------------------------------------------------------------------===//

  /// A linalg.matmul: a shardlin.linear when its weight is split, else a
  /// rank-local matmul.
  LogicalResult importMatmul(linalg::MatmulOp op);
  /// A linalg.batch_matmul of one weight broadcast over the batch: an N-D
  /// shardlin.linear when the weight is split, else a rank-local matmul.
  LogicalResult importBatchMatmul(linalg::BatchMatmulOp op);

  //===--------------------------------------------------------------------===//
  // Attention (ImportShardAttention.cpp)
  //===--------------------------------------------------------------------===//

  /// Before the walk: matches every tm_tensor.attention (matchAttention),
  /// absorbs the ops of its form and records it in attentions_; fails with
  /// a diagnostic naming what is not taken.
  LogicalResult prepareAttentions();
  LogicalResult matchAttention(tmtensor::AttentionOp op);
  /// The [B, S, H*D] projection that `v` (operand `name` of `op`) holds in
  /// [B*H, S, D], through GQA's repeat (its group in `group`).
  FailureOr<Value> traceHeads(tmtensor::AttentionOp op, Value v, StringRef name,
                              SmallVectorImpl<Operation *> &absorbed,
                              int64_t &group, arith::ConstantOp &cos,
                              arith::ConstantOp &sin);
  /// The rope's [S, D/2] table: the first half of constant `table` ([S, D],
  /// both halves equal, checked on its values), a whole shardlin.constant.
  FailureOr<Value> halfRopeTable(tmtensor::AttentionOp op,
                                 arith::ConstantOp table, StringRef name,
                                 int64_t headDim);
  /// The walk reaching a matched op: one global-form shardlin.attention on
  /// the rank's whole sequences (or all of them).
  LogicalResult importAttention(tmtensor::AttentionOp op);
  llvm::DenseMap<Operation *, AttentionMatch> attentions_;
  /// Rope table constant -> its [S, D/2] half (halfRopeTable).
  llvm::DenseMap<Operation *, Value> ropeTables_;

  //===--------------------------------------------------------------------===//
  // Norms (ImportShardReductions.cpp)
  //===--------------------------------------------------------------------===//

  /// A reduction over the last dim (RowReductions.h), rank-local on the
  /// rank's rows; an error over a split last dim.
  LogicalResult importRowReduction(Operation &op);
  /// Maps the row-broadcast operands of elementwise `op`, computed in
  /// layout `l`, to the rank's R x 1 values (all rows' where `l` splits the
  /// features; a rank-reduced R expanded to R x 1); the first is the donor
  /// of the rank's rows where `l` does not split the features.
  LogicalResult mapRowBroadcastOperands(Operation &op, const ValueLayout &l,
                                        IRMapping &mapping, Value &donor);
  /// The rank's part of row-broadcast operand `v` in `want`, as R x 1 for
  /// an elementwise op of rank `rank`.
  FailureOr<Value> getRowBroadcastOperand(Value v, const ValueLayout &want,
                                          int64_t rank);

  //===--------------------------------------------------------------------===//
  // Shared state
  //===--------------------------------------------------------------------===//

  func::FuncOp func_;
  const Grid &grid_;
  OpBuilder b_;
  /// Old value -> its layout and its rank's part in the new body.
  llvm::DenseMap<Value, ValueLayout> layouts_;
  llvm::DenseMap<Value, Value> locals_;
  /// Old value -> the new sharded value that stands for it: split
  /// arguments and split constants, passed to linears as they are.
  llvm::DenseMap<Value, Value> shardedArgs_;
  /// Old value -> the layout a shard.shard without annotate_for_users
  /// states for it.
  llvm::DenseMap<Value, ValueLayout> declared_;
  /// Old ops whose results a linear defined (its bias add, its reshape).
  llvm::DenseSet<Operation *> absorbed_;
  /// (Old constant, chunk spec) -> the rank's chunk of it (splitConstant).
  llvm::DenseMap<std::pair<Value, Attribute>, Value> constantChunks_;
  /// Old ops built only where a user needs them.
  llvm::DenseSet<Operation *> deferred_;

  //===--------------------------------------------------------------------===//
  // Backward propagation (ImportShardPropagation.cpp)
  //===--------------------------------------------------------------------===//

  /// Old value without a stated layout -> the layout its users take it in,
  /// where its producer gives that directly (declared() returns it too; it
  /// never adds a reshard).
  llvm::DenseMap<Value, ValueLayout> preferred_;
  /// Fills preferred_ from the stated layouts.
  void propagateBackward();
  /// The layout the module states for `v` (declared_ alone).
  std::optional<ValueLayout> statedLayout(Value v) const;
  std::optional<ValueLayout>
  predictedLayout(Value v,
                  llvm::DenseMap<Value, std::optional<ValueLayout>> &memo);
  std::optional<ValueLayout> predictedLinearLayout(
      linalg::MatmulOp op,
      llvm::DenseMap<Value, std::optional<ValueLayout>> &memo);
  bool producesDirectly(
      linalg::MatmulOp op, const ValueLayout &want,
      llvm::DenseMap<Value, std::optional<ValueLayout>> &memo);
  /// Marks the all_gathers built after `after` (nullptr: the block's first
  /// op) as forced by the layout `to` stated for `v` (for its users: an
  /// annotate_for_users), which its producer gives in `from`.
  void markStatedReshards(Operation *after, Value v, const ValueLayout &from,
                          const ValueLayout &to, bool forUsers = false);

private:
  LogicalResult collectAnnotations();
  LogicalResult importArguments(Block &newBlock);
  LogicalResult importOp(Operation &op);
  LogicalResult importElementwise(Operation &op);
  LogicalResult importReturn(func::ReturnOp op);
  /// The phases of importMatmul after the match: a replicated weight's
  /// rank-local matmul; the layouts of a split one's linear; building it.
  LogicalResult importLocalMatmul(const LinearMatch &m);
  FailureOr<LinearPlan> planLinear(LinearMatch &m, const ValueLayout &wl);
  LogicalResult buildLinear(const LinearMatch &m, const LinearPlan &plan,
                            const ValueLayout &wl);
  /// The weight as the linear takes it: the sharded argument, or the rank's
  /// chunks assembled.
  FailureOr<Value> shardedWeight(const LinearMatch &m, const ValueLayout &wl);
  /// The batch_matmul's phases: its layouts (x, the N-D input, split along
  /// a leading dim: rows -> rows on it; replicated or split along K: the
  /// 2-D linear between a collapse and an expand) and the rank-local
  /// matmul of a replicated weight.
  FailureOr<LinearPlan> planBatchLinear(LinearMatch &m, const ValueLayout &wl);
  LogicalResult buildBatchLinear(const LinearMatch &m, const LinearPlan &plan,
                                 const ValueLayout &wl);
  LogicalResult importLocalBatchMatmul(const LinearMatch &m);
  /// Builds deferred old op `op` (result `v`) in `want`.
  FailureOr<Value> build(Value v, const ValueLayout &want, Value donor);
};

/// Whether `op` is elementwise for the importer: an arith or math op on
/// tensors with the Elementwise trait, or a linalg op whose iterators are
/// all parallel and whose maps are identities, scalar maps or the
/// broadcast of a rank-1 operand along the last dim.
bool isElementwise(Operation *op);

/// Whether `operand` of `op` is a linalg.generic input broadcast along the
/// rows (one value per row: (d0, d1) -> (d0, 0) or (d0)).
bool isRowBroadcastOperand(Operation &op, OpOperand &operand);
/// The maps of a cloned linalg.generic whose rank-reduced row-broadcast
/// operands were expanded to R x 1: (d0, d1) -> (d0) becomes (d0, 0).
void keepDimRowMaps(Operation *local);

/// Whether old tensor value `v` can be built in any layout for free.
bool isBuildableAnywhere(Value v);

/// The ops an upstream module may hold, in one sentence, for diagnostics.
extern const char *const kSupportedImportOps;

} // namespace mlir::shardlin::import

#endif
