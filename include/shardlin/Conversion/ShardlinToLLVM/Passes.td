//===- Passes.td - shardlin conversion passes --------------*- tablegen -*-===//
#ifndef SHARDLIN_CONVERSION_PASSES_TD
#define SHARDLIN_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertShardlinToLLVM : Pass<"shardlin-convert-to-llvm", "::mlir::ModuleOp"> {
  let summary = "Lower the bufferized shardlin ops to calls of the runtime's C ABI";
  let description = [{
    Rewrites every `shardlin.buffer.*` op into one call of the runtime's C
    ABI (`runtime/include/shardlin-c/Runtime.h`) and `shardlin.rank` into
    the calling thread's rank:

    - Each memref operand is passed as a pointer to MLIR's unranked memref
      descriptor `{i64 rank, ptr descriptor}`, built on the stack around the
      call (`llvm.intr.stacksave` / `stackrestore`, so calls in loops do not
      grow the stack).
    - Each chunk spec becomes its `dim` (an i64) and a pointer to its
      placements, a private constant global `@__shardlin_placements_<k>`
      (`!llvm.array<W x i64>`), one per distinct placement list. A spec
      whose explicit `bounds` are not the ceil rule's adds a pointer to a
      global `@__shardlin_bounds_<k>` (`!llvm.array<W+1 x i64>`), and the op
      calls the `*_bounds` form of its collective, with a null pointer for
      its other specs (the ceil rule); the other ops call the plain forms.
    - `shardlin.buffer.all_reduce` calls `shardlin_all_reduce`, its
      `world_size` checked at the function's entry as the specs' are.
    - Element types are the ABI's `shardlin_dtype` values (i32).
    - Every function that uses the ops reads the calling thread's context
      once, at its entry (`shardlin_thread_context()`, set by the launcher
      with `shardlin_set_thread_context`), checks with `cf.assert` that it
      is set and has the world size of the function's chunk specs, and reads
      its rank there if `shardlin.rank` is used.
    - The statuses the calls return are not checked: the runtime's contexts
      are sticky, so the launcher checks `shardlin_context_status` after the
      entry returns.
    - shardlin's annotations of function arguments and results
      (`shardlin.saved`) are dropped: LLVM IR has no place for them.

    Memrefs stay memrefs (unrealized casts to their descriptors), so the
    pass runs before upstream's `finalize-memref-to-llvm`,
    `convert-cf-to-llvm` (for the asserts) and
    `reconcile-unrealized-casts`. Tensor-level shardlin ops are rejected
    with a diagnostic naming the pass that must run first.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::cf::ControlFlowDialect"];
}

#endif // SHARDLIN_CONVERSION_PASSES_TD
