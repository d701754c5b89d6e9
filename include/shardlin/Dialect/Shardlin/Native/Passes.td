//===- Passes.td - Passes of the native path --------------*- tablegen -*-===//
//
// The shardlin passes of the native path (docs/native.md): what prepares a
// module of lowered shardlin ops and upstream tensor ops for One-Shot
// Bufferize and the conversion to LLVM. Registered by
// registerShardlinNativePasses() (NativePasses.h).
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_NATIVEPASSES_TD
#define SHARDLIN_NATIVEPASSES_TD

include "mlir/Pass/PassBase.td"

def LocalizeSharded : Pass<"shardlin-localize-sharded", "::mlir::ModuleOp"> {
  let summary = "Replace sharded values by the calling rank's local tensors";
  let description = [{
    Function-boundary bufferization knows tensors only. This pass rewrites
    every `!shardlin.sharded<T, #spec>` in function signatures, calls,
    returns and branches into the rank's local chunk type (the type of its
    `shardlin.local_shard`: `T` with the sharded dim replaced by the local
    chunk size, `?` when chunks are uneven), and replaces each
    `shardlin.local_shard` by its operand, which is now that local tensor.
    A launcher passes each rank its own chunk, as `shardlin-run` does.

    For each `?` dim of such an argument of a public function it adds a
    check at the function's entry: `tensor.dim` of the argument must equal
    the calling rank's chunk size (computed from `shardlin.rank` and the
    spec), else a `cf.assert` fails with a message naming the argument.

    Fails with a diagnostic on a `shardlin.linear` (run
    `--lower-sharded-linear` first) and on any other op that takes or
    yields a sharded value.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::cf::ControlFlowDialect",
                           "::mlir::tensor::TensorDialect"];
}

def PrepareNative : Pass<"shardlin-prepare-native", "::mlir::ModuleOp"> {
  let summary = "Prepare a module for One-Shot Bufferize and lowering to LLVM";
  let description = [{
    Three rewrites that `--shardlin-lower-to-llvm` needs before bufferizing:

    - Rows known only at run time (a dynamic batch, or a rank's uneven
      chunk) that a collective stacks from every rank's blocks (all_gather's
      dim, all_to_all's concat dim) get their bounds exchanged: a
      `shardlin.gather_bounds` of the collective's input gives the
      collective its `bounds` operand, and the collectives that split those
      rows back into the same blocks (reduce_scatter, all_to_all's split
      dim) get the same bounds. The blocks follow the rows as the plan
      executor's do: through `shardlin.gemm` (op(lhs)'s rows),
      `shardlin.bias_add`, `shardlin.convert`, elementwise arith and math
      ops, and linalg ops whose maps of those operands and of the result
      are identities. Stacks of rows whose blocks have the same sizes on
      every rank (the chunks of one sharded type, which this pass sees
      before `shardlin-localize-sharded`, and the blocks a collective split
      by their bounds) share one exchange, so rows stacked from two such
      tensors keep their blocks where they meet. A dynamic dim split
      without such bounds is left to the bufferization's error.

    - Linalg ops that are aggregates of simpler ones (those implementing
      `AggregatedOpInterface`, such as `linalg.softmax`) are decomposed into
      them: upstream lowers the parts to loops, not the aggregate.
    - Public function definitions are the entries a launcher calls: they get
      `llvm.emit_c_interface` (so `convert-func-to-llvm` emits
      `_mlir_ciface_<name>`, taking memref descriptors by pointer, which
      MLIR's ExecutionEngine calls), and their tensor arguments
      `bufferization.writable = false` unless already marked (the caller's
      buffers are read, never written: bufferization copies before an
      in-place write instead).

    Chunk specs with explicit `bounds` and `shardlin.all_reduce` need
    nothing here: the bufferization sizes chunks from the bounds
    (`ChunkArith.h`) and `shardlin-convert-to-llvm` passes them to the C
    ABI's `*_bounds` collectives and calls `shardlin_all_reduce`.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::tensor::TensorDialect"];
}

def ExpandShapeToReinterpretCast
    : Pass<"shardlin-expand-shape-to-reinterpret-cast", "::mlir::ModuleOp"> {
  let summary = "Rewrite a memref.expand_shape that splits one dim into "
                "several dynamic ones as a memref.reinterpret_cast";
  let description = [{
    Upstream's `--expand-strided-metadata` (MLIR 22) crashes on a
    `memref.expand_shape` one of whose groups has two or more dynamic sizes,
    e.g. `memref.expand_shape %a [[0, 1], [2]] output_shape [%b, %s, 7]`
    (a dereference of a null attribute while it builds the strides). That is
    the form a linear on `tensor<?x?xKxT>` (batch x sequence) takes when its
    rows are put back into their batch dims, so `--shardlin-lower-to-llvm`
    runs this pass right before `--expand-strided-metadata`.

    Each such op becomes `memref.extract_strided_metadata` of its source and
    a `memref.reinterpret_cast` of the base buffer with the op's own output
    sizes, the source's offset, and the strides of the expansion: in each
    group the innermost dim keeps its source dim's stride and each outer dim
    has the stride of the next inner one times that one's size. The result
    type is the op's, so its users see no change. Other expand_shape ops
    are left to upstream.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect"];
}

#endif // SHARDLIN_NATIVEPASSES_TD
