// Rows known only at run time that a collective stacks from every rank's
// blocks: shardlin-prepare-native exchanges the ranks' sizes (shardlin.gather_bounds)
// and gives their bounds to the collective that stacks the rows and to the
// ones that split them back, following the rows through gemm, bias_add,
// convert, elementwise ops and identity-mapped linalg ops; the
// bufferization sizes the stacked dim by the last bound and the rank's
// chunk by two bounds; the calls are the *_bounds ones with the exchanged
// buffer.
// RUN: shardlin-opt %s -split-input-file --shardlin-prepare-native | FileCheck %s
// RUN: shardlin-opt %s -split-input-file "--pass-pipeline=builtin.module(shardlin-prepare-native,func.func(convert-elementwise-to-linalg),one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},canonicalize,cse)" | FileCheck %s --check-prefix=BUF
// RUN: shardlin-opt %s -split-input-file "--pass-pipeline=builtin.module(shardlin-prepare-native,func.func(convert-elementwise-to-linalg),one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},canonicalize,cse,shardlin-convert-to-llvm)" | FileCheck %s --check-prefix=LLVM

// Row-wise: x's rows stacked by the all_to_all, carried through the gemm
// and an elementwise op, split back by the reduce_scatter.
// CHECK-LABEL: func.func @row
// CHECK: %[[B:.*]] = shardlin.gather_bounds %arg0 along <dim = 0, placements = [0, 1, 2, 3]> : tensor<?x19xf32> -> tensor<5xi64>
// CHECK: shardlin.all_to_all %arg0 split <dim = 1, placements = [2, 3, 0, 1]> concat <dim = 0, placements = [0, 1, 2, 3]> bounds(%[[B]] : tensor<5xi64>)
// CHECK: shardlin.reduce_scatter %{{.*}} along <dim = 0, placements = [0, 1, 2, 3]> bounds(%[[B]] : tensor<5xi64>)
// BUF-LABEL: func.func @row
// BUF: %[[B:.*]] = memref.alloc() {{.*}} : memref<5xi64>
// BUF: shardlin.buffer.gather_bounds %arg0 into %[[B]] along <dim = 0, placements = [0, 1, 2, 3]> : memref<?x19xf32> into memref<5xi64>
// BUF: %[[T:.*]] = memref.load %[[B]][%c4] : memref<5xi64>
// BUF: %[[N:.*]] = arith.index_cast %[[T]] : i64 to index
// BUF: memref.alloc(%[[N]], %{{.*}}) {{.*}} : memref<?x?xf32>
// BUF: shardlin.buffer.all_to_all {{.*}} bounds(%[[B]] : memref<5xi64>) : memref<?x19xf32> into memref<?x?xf32>
// BUF: %[[LO:.*]] = memref.load %[[B]][%{{.*}}] : memref<5xi64>
// BUF: %[[HI:.*]] = memref.load %[[B]][%{{.*}}] : memref<5xi64>
// BUF: shardlin.buffer.reduce_scatter {{.*}} bounds(%[[B]] : memref<5xi64>) : memref<?x11xf32> into memref<?x11xf32>
// LLVM-LABEL: func.func @row
// LLVM: llvm.call @shardlin_gather_bounds({{.*}}) : (!llvm.ptr, i64, !llvm.ptr, !llvm.ptr) -> i32
// LLVM: llvm.call @shardlin_all_to_all_bounds
// LLVM: llvm.call @shardlin_gemm
// LLVM: llvm.call @shardlin_reduce_scatter_bounds
func.func @row(%x: tensor<?x19xf32>, %w: tensor<11x?xf32>) -> tensor<?x11xf32> {
  %1 = shardlin.all_to_all %x split <dim = 1, placements = [2, 3, 0, 1]> concat <dim = 0, placements = [0, 1, 2, 3]> : tensor<?x19xf32> -> tensor<?x?xf32>
  %2 = shardlin.gemm %1, %w transpose_rhs : (tensor<?x?xf32>, tensor<11x?xf32>) -> tensor<?x11xf32>
  %3 = arith.negf %2 : tensor<?x11xf32>
  %4 = shardlin.reduce_scatter %3 along <dim = 0, placements = [0, 1, 2, 3]> : tensor<?x11xf32> -> tensor<?x11xf32>
  return %4 : tensor<?x11xf32>
}

// -----

// Col-wise, permuted: the all_gather stacks the rows in its placements'
// order, and the all_to_all splits them back by those bounds; an identity
// linalg.generic carries them.
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @col
// CHECK: %[[B:.*]] = shardlin.gather_bounds %arg0 along <dim = 0, placements = [2, 0, 1]> : tensor<?x19xf16> -> tensor<4xi64>
// CHECK: shardlin.all_gather %arg0 along <dim = 0, placements = [2, 0, 1]> bounds(%[[B]] : tensor<4xi64>)
// CHECK: linalg.generic
// CHECK: shardlin.all_to_all %{{.*}} split <dim = 0, placements = [2, 0, 1]> bounds(%[[B]] : tensor<4xi64>) concat <dim = 1, placements = [1, 2, 0]> :
// LLVM-LABEL: func.func @col
// LLVM: llvm.call @shardlin_gather_bounds
// LLVM: llvm.call @shardlin_all_gather_bounds
// LLVM: llvm.call @shardlin_all_to_all_bounds
func.func @col(%x: tensor<?x19xf16>, %w: tensor<?x19xf16>) -> tensor<?x11xf16> {
  %g = shardlin.all_gather %x along <dim = 0, placements = [2, 0, 1]> : tensor<?x19xf16> -> tensor<?x19xf16>
  %h = shardlin.gemm %g, %w transpose_rhs : (tensor<?x19xf16>, tensor<?x19xf16>) -> tensor<?x?xf16>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%h : tensor<?x?xf16>) outs(%h : tensor<?x?xf16>) {
  ^bb0(%in: f16, %out: f16):
    %n = arith.negf %in : f16
    linalg.yield %n : f16
  } -> tensor<?x?xf16>
  %y = shardlin.all_to_all %r split <dim = 0, placements = [2, 0, 1]> concat <dim = 1, placements = [1, 2, 0]> : tensor<?x?xf16> -> tensor<?x11xf16>
  return %y : tensor<?x11xf16>
}

// -----

// A static stacked dim needs no exchange.
// CHECK-LABEL: func.func @static_rows
// CHECK-NOT: shardlin.gather_bounds
// CHECK: shardlin.all_gather %arg0 along <dim = 0, placements = [1, 0]> : tensor<3x4xf32> -> tensor<6x4xf32>
func.func @static_rows(%q: tensor<3x4xf32>) -> tensor<6x4xf32> {
  %g = shardlin.all_gather %q along <dim = 0, placements = [1, 0]> : tensor<3x4xf32> -> tensor<6x4xf32>
  return %g : tensor<6x4xf32>
}
