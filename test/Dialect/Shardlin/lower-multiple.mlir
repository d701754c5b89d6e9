// RUN: shardlin-opt %s --lower-sharded-linear=strategy=activations | FileCheck %s
// RUN: shardlin-opt %s --lower-sharded-linear=strategy=activations | shardlin-opt | FileCheck %s
// RUN: shardlin-opt %s --pass-pipeline='builtin.module(func.func(lower-sharded-linear{strategy=activations}))' | FileCheck %s
// RUN: shardlin-opt %s --lower-sharded-linear=strategy=activations --lower-sharded-linear=strategy=activations | FileCheck %s

// Several linears per function and per module: each is lowered in place by
// its own strategy, and every other op (arith, tensor, func) is left
// untouched, in order. Lowered IR is a fixed point of the pass (4th RUN).

// A row-wise linear (W = 2) chained into a col-wise one (W = 3, uneven N),
// with arith and tensor ops before, between and after.
// CHECK-LABEL: func.func @row_then_col
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x8xf32>, %[[W1:.*]]: !shardlin.sharded<tensor<6x8xf32>, #shardlin.chunk<dim = 1, placements = [1, 0]>>, %[[W2:.*]]: !shardlin.sharded<tensor<4x6xf32>, #shardlin.chunk<dim = 0, placements = [2, 0, 1]>>, %[[B2:.*]]: tensor<4xf32>)
// CHECK-NEXT: %[[C:.*]] = arith.constant dense<1.000000e+00> : tensor<2x3x8xf32>
// CHECK-NEXT: %[[XA:.*]] = arith.addf %[[X]], %[[C]] : tensor<2x3x8xf32>
// CHECK-NEXT: %[[R1:.*]] = tensor.collapse_shape %[[XA]] {{\[}}[0, 1], [2]] : tensor<2x3x8xf32> into tensor<6x8xf32>
// CHECK-NEXT: %[[A1:.*]] = shardlin.local_shard %[[W1]] : {{.*}} -> tensor<6x4xf32>
// CHECK-NEXT: %[[XS:.*]] = shardlin.all_to_all %[[R1]] split <dim = 1, placements = [1, 0]> concat <dim = 0, placements = [0, 1]> : tensor<6x8xf32> -> tensor<12x4xf32>
// CHECK-NEXT: %[[P:.*]] = shardlin.gemm %[[XS]], %[[A1]] transpose_rhs {shardlin.lowering = {{.*}}} : (tensor<12x4xf32>, tensor<6x4xf32>) -> tensor<12x6xf32>
// CHECK-NEXT: %[[H:.*]] = shardlin.reduce_scatter %[[P]] along <dim = 0, placements = [0, 1]> : tensor<12x6xf32> -> tensor<6x6xf32>
// CHECK-NEXT: %[[H3:.*]] = tensor.expand_shape %[[H]] {{\[}}[0, 1], [2]] output_shape [2, 3, 6] : tensor<6x6xf32> into tensor<2x3x6xf32>
// CHECK-NEXT: %[[H2:.*]] = arith.mulf %[[H3]], %[[H3]] : tensor<2x3x6xf32>
// CHECK-NEXT: %[[R2:.*]] = tensor.collapse_shape %[[H2]] {{\[}}[0, 1], [2]] : tensor<2x3x6xf32> into tensor<6x6xf32>
// CHECK-NEXT: %[[A2:.*]] = shardlin.local_shard %[[W2]] : {{.*}} -> tensor<?x6xf32>
// CHECK-NEXT: %[[G:.*]] = shardlin.all_gather %[[R2]] along <dim = 0, placements = [0, 1, 2]> : tensor<6x6xf32> -> tensor<18x6xf32>
// CHECK-NEXT: %[[BC:.*]] = shardlin.local_chunk %[[B2]] along <dim = 0, placements = [2, 0, 1]> : tensor<4xf32> -> tensor<?xf32>
// CHECK-NEXT: %[[Q:.*]] = shardlin.gemm %[[G]], %[[A2]] bias %[[BC]] transpose_rhs {shardlin.lowering = {{.*}}} : (tensor<18x6xf32>, tensor<?x6xf32>, tensor<?xf32>) -> tensor<18x?xf32>
// CHECK-NEXT: %[[Y:.*]] = shardlin.all_to_all %[[Q]] split <dim = 0, placements = [0, 1, 2]> concat <dim = 1, placements = [2, 0, 1]> : tensor<18x?xf32> -> tensor<6x4xf32>
// CHECK-NEXT: %[[Y3:.*]] = tensor.expand_shape %[[Y]] {{\[}}[0, 1], [2]] output_shape [2, 3, 4] : tensor<6x4xf32> into tensor<2x3x4xf32>
// CHECK-NEXT: %[[S:.*]] = tensor.extract_slice %[[Y3]][0, 0, 0] [1, 3, 4] [1, 1, 1] : tensor<2x3x4xf32> to tensor<3x4xf32>
// CHECK-NEXT: return %[[S]] : tensor<3x4xf32>
func.func @row_then_col(%x: tensor<2x3x8xf32>,
    %w1: !shardlin.sharded<tensor<6x8xf32>, #shardlin.chunk<dim = 1, placements = [1, 0]>>,
    %w2: !shardlin.sharded<tensor<4x6xf32>, #shardlin.chunk<dim = 0, placements = [2, 0, 1]>>,
    %b2: tensor<4xf32>) -> tensor<3x4xf32> {
  %c = arith.constant dense<1.0> : tensor<2x3x8xf32>
  %xa = arith.addf %x, %c : tensor<2x3x8xf32>
  %h = shardlin.linear %xa, %w1 : (tensor<2x3x8xf32>,
      !shardlin.sharded<tensor<6x8xf32>, #shardlin.chunk<dim = 1, placements = [1, 0]>>) -> tensor<2x3x6xf32>
  %h2 = arith.mulf %h, %h : tensor<2x3x6xf32>
  %y = shardlin.linear %h2, %w2, %b2 : (tensor<2x3x6xf32>,
      !shardlin.sharded<tensor<4x6xf32>, #shardlin.chunk<dim = 0, placements = [2, 0, 1]>>,
      tensor<4xf32>) -> tensor<2x3x4xf32>
  %s = tensor.extract_slice %y[0, 0, 0] [1, 3, 4] [1, 1, 1] : tensor<2x3x4xf32> to tensor<3x4xf32>
  return %s : tensor<3x4xf32>
}

// Two independent linears on one input (a col-wise and a W = 1 one) whose
// results are combined: each gets its own lowering.
// CHECK-LABEL: func.func @independent
// CHECK-SAME: (%[[X:.*]]: tensor<5x8xf64>, %[[WC:.*]]: !shardlin.sharded<tensor<6x8xf64>, #shardlin.chunk<dim = 0, placements = [1, 0]>>, %[[WS:.*]]: !shardlin.sharded<tensor<6x8xf64>, #shardlin.chunk<dim = 1, placements = [0]>>)
// CHECK-NEXT: %[[AC:.*]] = shardlin.local_shard %[[WC]] : {{.*}} -> tensor<3x8xf64>
// CHECK-NEXT: %[[G:.*]] = shardlin.all_gather %[[X]] along <dim = 0, placements = [0, 1]> : tensor<5x8xf64> -> tensor<10x8xf64>
// CHECK-NEXT: %[[Q:.*]] = shardlin.gemm %[[G]], %[[AC]] transpose_rhs {shardlin.lowering = {{.*}}} : (tensor<10x8xf64>, tensor<3x8xf64>) -> tensor<10x3xf64>
// CHECK-NEXT: %[[Y1:.*]] = shardlin.all_to_all %[[Q]] split <dim = 0, placements = [0, 1]> concat <dim = 1, placements = [1, 0]> : tensor<10x3xf64> -> tensor<5x6xf64>
// CHECK-NEXT: %[[AS:.*]] = shardlin.local_shard %[[WS]] : {{.*}} -> tensor<6x8xf64>
// CHECK-NEXT: %[[Y2:.*]] = shardlin.gemm %[[X]], %[[AS]] transpose_rhs {shardlin.lowering = {{.*}}} : (tensor<5x8xf64>, tensor<6x8xf64>) -> tensor<5x6xf64>
// CHECK-NEXT: %[[S:.*]] = arith.subf %[[Y1]], %[[Y2]] : tensor<5x6xf64>
// CHECK-NEXT: return %[[S]] : tensor<5x6xf64>
func.func @independent(%x: tensor<5x8xf64>,
    %wc: !shardlin.sharded<tensor<6x8xf64>, #shardlin.chunk<dim = 0, placements = [1, 0]>>,
    %ws: !shardlin.sharded<tensor<6x8xf64>, #shardlin.chunk<dim = 1, placements = [0]>>) -> tensor<5x6xf64> {
  %y1 = shardlin.linear %x, %wc : (tensor<5x8xf64>,
      !shardlin.sharded<tensor<6x8xf64>, #shardlin.chunk<dim = 0, placements = [1, 0]>>) -> tensor<5x6xf64>
  %y2 = shardlin.linear %x, %ws : (tensor<5x8xf64>,
      !shardlin.sharded<tensor<6x8xf64>, #shardlin.chunk<dim = 1, placements = [0]>>) -> tensor<5x6xf64>
  %s = arith.subf %y1, %y2 : tensor<5x6xf64>
  return %s : tensor<5x6xf64>
}

// A function without shardlin ops is left as it is.
// CHECK-LABEL: func.func @no_linear
// CHECK-SAME: (%[[X:.*]]: tensor<5x8xf32>)
// CHECK-NEXT: %[[E:.*]] = tensor.empty() : tensor<5x8xf32>
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[X]], %[[E]] : tensor<5x8xf32>
// CHECK-NEXT: return %[[S]] : tensor<5x8xf32>
func.func @no_linear(%x: tensor<5x8xf32>) -> tensor<5x8xf32> {
  %e = tensor.empty() : tensor<5x8xf32>
  %s = arith.addf %x, %e : tensor<5x8xf32>
  return %s : tensor<5x8xf32>
}

// A col-wise linear chained into a row-wise one with the same chunks, with
// biases, in a third function of the module: one block (all_gather, two
// GEMMs, reduce_scatter; no all_to_all), the first bias's chunk in the first
// GEMM, the second bias once after the reduction.
// CHECK-LABEL: func.func @col_then_row
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xbf16>, %[[W1:.*]]: !shardlin.sharded<tensor<6x8xbf16>, #shardlin.chunk<dim = 0, placements = [1, 0]>>, %[[B1:.*]]: tensor<6xbf16>, %[[W2:.*]]: !shardlin.sharded<tensor<8x6xbf16>, #shardlin.chunk<dim = 1, placements = [1, 0]>>, %[[B2:.*]]: tensor<8xbf16>)
// CHECK-NEXT: %[[G:.*]] = shardlin.all_gather %[[X]] along <dim = 0, placements = [0, 1]> : tensor<4x8xbf16> -> tensor<8x8xbf16>
// CHECK-NEXT: %[[A1:.*]] = shardlin.local_shard %[[W1]] : {{.*}} -> tensor<3x8xbf16>
// CHECK-NEXT: %[[BC:.*]] = shardlin.local_chunk %[[B1]] along <dim = 0, placements = [1, 0]> : tensor<6xbf16> -> tensor<3xbf16>
// CHECK-NEXT: %[[Q:.*]] = shardlin.gemm %[[G]], %[[A1]] bias %[[BC]] transpose_rhs {shardlin.lowering = {{.*}}strategy = "fused"}} : (tensor<8x8xbf16>, tensor<3x8xbf16>, tensor<3xbf16>) -> tensor<8x3xbf16>
// CHECK-NEXT: %[[A2:.*]] = shardlin.local_shard %[[W2]] : {{.*}} -> tensor<8x3xbf16>
// The bf16 partial products, their sum and the second bias are f32, rounded
// once at the end.
// CHECK-NEXT: %[[P:.*]] = shardlin.gemm %[[Q]], %[[A2]] transpose_rhs {shardlin.lowering = {{.*}}strategy = "fused"}} : (tensor<8x3xbf16>, tensor<8x3xbf16>) -> tensor<8x8xf32>
// CHECK-NEXT: %[[Y:.*]] = shardlin.reduce_scatter %[[P]] along <dim = 0, placements = [0, 1]> : tensor<8x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT: %[[BW:.*]] = shardlin.convert %[[B2]] : tensor<8xbf16> -> tensor<8xf32>
// CHECK-NEXT: %[[Z:.*]] = shardlin.bias_add %[[Y]], %[[BW]] : tensor<4x8xf32>, tensor<8xf32>
// CHECK-NEXT: %[[R:.*]] = shardlin.convert %[[Z]] : tensor<4x8xf32> -> tensor<4x8xbf16>
// CHECK-NEXT: return %[[R]] : tensor<4x8xbf16>
func.func @col_then_row(%x: tensor<4x8xbf16>,
    %w1: !shardlin.sharded<tensor<6x8xbf16>, #shardlin.chunk<dim = 0, placements = [1, 0]>>,
    %b1: tensor<6xbf16>,
    %w2: !shardlin.sharded<tensor<8x6xbf16>, #shardlin.chunk<dim = 1, placements = [1, 0]>>,
    %b2: tensor<8xbf16>) -> tensor<4x8xbf16> {
  %h = shardlin.linear %x, %w1, %b1 : (tensor<4x8xbf16>,
      !shardlin.sharded<tensor<6x8xbf16>, #shardlin.chunk<dim = 0, placements = [1, 0]>>,
      tensor<6xbf16>) -> tensor<4x6xbf16>
  %y = shardlin.linear %h, %w2, %b2 : (tensor<4x6xbf16>,
      !shardlin.sharded<tensor<8x6xbf16>, #shardlin.chunk<dim = 1, placements = [1, 0]>>,
      tensor<8xbf16>) -> tensor<4x8xbf16>
  return %y : tensor<4x8xbf16>
}
