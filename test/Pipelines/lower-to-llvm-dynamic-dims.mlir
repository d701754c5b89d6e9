// RUN: rm -rf %t && split-file %s %t
// RUN: shardlin-opt %t/two.mlir --lower-sharded-linear=strategy=gather-weight --shardlin-lower-to-llvm | FileCheck %s --check-prefix=TWO
// RUN: shardlin-opt %t/three.mlir --lower-sharded-linear=strategy=gather-weight --shardlin-lower-to-llvm | FileCheck %s --check-prefix=THREE
// RUN: shardlin-opt %t/two.mlir --shardlin-lower-to-llvm | mlir-translate --mlir-to-llvmir | FileCheck %s --check-prefix=LLVMIR
// RUN: shardlin-opt %t/two.mlir --lower-sharded-linear=strategy=activations --shardlin-lower-to-llvm | FileCheck %s --check-prefix=ACT
// RUN: shardlin-opt %t/three.mlir --lower-sharded-linear=strategy=activations --shardlin-lower-to-llvm | FileCheck %s --check-prefix=ACT

// A linear on tensor<?x?xKxf32> (batch x sequence, issue 27 finding 1):
// its rows are put back into their batch dims by a memref.expand_shape with
// several dynamic sizes in one group, on which upstream's
// --expand-strided-metadata crashed (exit 139). The pipeline rewrites it
// first (--shardlin-expand-shape-to-reinterpret-cast) and lowers to the LLVM dialect
// only. Moving activations stacks the ranks' rows: the code exchanges
// their counts first (shardlin_gather_bounds) and calls the collectives'
// *_bounds forms. The numbers are checked end to end by
// e2e.jit.JitDynamicBatch.*.
// ACT: llvm.call @shardlin_gather_bounds
// ACT: llvm.call @shardlin_{{all_gather|all_to_all}}_bounds

// TWO-NOT: memref.
// TWO: llvm.func @two(
// TWO-NOT: memref.
// THREE-NOT: memref.
// THREE: llvm.func @three(
// THREE-NOT: memref.
// LLVMIR: define { ptr, ptr, i64, [3 x i64], [3 x i64] } @two(

//--- two.mlir
func.func @two(%x: tensor<?x?x10xf32>,
               %w: !shardlin.sharded<tensor<7x10xf32>, #shardlin.chunk<dim = 0, placements = [1, 0]>>) -> tensor<?x?x7xf32> {
  %y = shardlin.linear %x, %w : (tensor<?x?x10xf32>, !shardlin.sharded<tensor<7x10xf32>, #shardlin.chunk<dim = 0, placements = [1, 0]>>) -> tensor<?x?x7xf32>
  return %y : tensor<?x?x7xf32>
}

//--- three.mlir
func.func @three(%x: tensor<?x?x?x10xbf16>,
                 %w: !shardlin.sharded<tensor<7x10xbf16>, #shardlin.chunk<dim = 1, placements = [2, 0, 1]>>,
                 %b: tensor<7xbf16>) -> tensor<?x?x?x7xbf16> {
  %y = shardlin.linear %x, %w, %b : (tensor<?x?x?x10xbf16>, !shardlin.sharded<tensor<7x10xbf16>, #shardlin.chunk<dim = 1, placements = [2, 0, 1]>>, tensor<7xbf16>) -> tensor<?x?x?x7xbf16>
  return %y : tensor<?x?x?x7xbf16>
}
