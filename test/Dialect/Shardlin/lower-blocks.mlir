// RUN: shardlin-opt %s --lower-sharded-linear=strategy=activations | FileCheck %s
// RUN: shardlin-opt %s --lower-sharded-linear=strategy=activations | shardlin-opt | FileCheck %s
// RUN: shardlin-opt %s '--lower-sharded-linear=strategy=activations explain=true' -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// RUN: shardlin-opt %s '--lower-sharded-linear=strategy=activations fuse-blocks=false' | FileCheck %s --check-prefix=UNFUSED
// RUN: shardlin-opt %s '--lower-sharded-linear=strategy=gather-weight explain=true' -o /dev/null 2>&1 | FileCheck %s --check-prefix=GATHER
// RUN: shardlin-opt %s '--lower-sharded-linear=explain=true' -o /dev/null 2>&1 | FileCheck %s --check-prefix=AUTO

// Blocks: a col-wise linear feeding, through elementwise ops only, a
// row-wise linear whose weight has the same chunks lowers to one all_gather,
// the GEMMs, one linalg.generic and one reduce_scatter: no all_to_all.

// An MLP with ReLU, F = 10 over 3 ranks (chunks 4, 4, 2: the rank's block
// has a rank-dependent width), permuted placements, a 3-D input, both biases.
// CHECK-LABEL: func.func @mlp_relu
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x8xf32>, %[[W1:.*]]: !shardlin.sharded<tensor<10x8xf32>, {{.*}}>, %[[B1:.*]]: tensor<10xf32>, %[[W2:.*]]: !shardlin.sharded<tensor<8x10xf32>, {{.*}}>, %[[B2:.*]]: tensor<8xf32>)
// CHECK-NEXT: %[[R:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1], [2]] : tensor<2x3x8xf32> into tensor<6x8xf32>
// CHECK-NEXT: %[[G:.*]] = shardlin.all_gather %[[R]] along <dim = 0, placements = [0, 1, 2]> : tensor<6x8xf32> -> tensor<18x8xf32>
// CHECK-NEXT: %[[A1:.*]] = shardlin.local_shard %[[W1]] : {{.*}} -> tensor<?x8xf32>
// CHECK-NEXT: %[[BC:.*]] = shardlin.local_chunk %[[B1]] along <dim = 0, placements = [2, 0, 1]> : tensor<10xf32> -> tensor<?xf32>
// CHECK-NEXT: %[[H:.*]] = shardlin.gemm %[[G]], %[[A1]] bias %[[BC]] transpose_rhs {shardlin.lowering = {{.*}}strategy = "fused"}} : (tensor<18x8xf32>, tensor<?x8xf32>, tensor<?xf32>) -> tensor<18x?xf32>
// CHECK-NEXT: %[[E:.*]] = linalg.generic {{.*}} ins(%[[H]] : tensor<18x?xf32>) outs(%[[H]] : tensor<18x?xf32>)
// CHECK: arith.maximumf
// CHECK: } -> tensor<18x?xf32>
// CHECK-NEXT: %[[A2:.*]] = shardlin.local_shard %[[W2]] : {{.*}} -> tensor<8x?xf32>
// CHECK-NEXT: %[[P:.*]] = shardlin.gemm %[[E]], %[[A2]] transpose_rhs {{.*}} : (tensor<18x?xf32>, tensor<8x?xf32>) -> tensor<18x8xf32>
// CHECK-NEXT: %[[Y:.*]] = shardlin.reduce_scatter %[[P]] along <dim = 0, placements = [0, 1, 2]> : tensor<18x8xf32> -> tensor<6x8xf32>
// CHECK-NEXT: %[[Z:.*]] = shardlin.bias_add %[[Y]], %[[B2]]
// CHECK-NEXT: %[[Z3:.*]] = tensor.expand_shape %[[Z]] {{\[}}[0, 1], [2]] output_shape [2, 3, 8] : tensor<6x8xf32> into tensor<2x3x8xf32>
// CHECK-NEXT: return %[[Z3]]
// EXPLAIN: lower-blocks.mlir:[[# @LINE + 11]]:8: remark: block fused with 1 col-wise linear (forced): fused est. {{.*}} us, max 768 bytes sent, max {{[0-9]+}} extra bytes per rank; separate est. {{.*}} us, max {{[0-9]+}} bytes sent
// UNFUSED-LABEL: func.func @mlp_relu
// UNFUSED-COUNT-2: shardlin.all_to_all
// GATHER: lower-blocks.mlir:[[# @LINE + 8]]:8: remark: block not fused with 1 col-wise linear (strategy=gather-weight lowers each linear by gathering its weight)
// AUTO: lower-blocks.mlir:[[# @LINE + 7]]:8: remark: block {{(not )?}}fused with 1 col-wise linear ({{cheapest estimate|the separate lowerings are cheaper}})
func.func @mlp_relu(%x: tensor<2x3x8xf32>,
    %w1: !shardlin.sharded<tensor<10x8xf32>, #shardlin.chunk<dim = 0, placements = [2, 0, 1]>>, %b1: tensor<10xf32>,
    %w2: !shardlin.sharded<tensor<8x10xf32>, #shardlin.chunk<dim = 1, placements = [2, 0, 1]>>, %b2: tensor<8xf32>) -> tensor<2x3x8xf32> {
  %h = shardlin.linear %x, %w1, %b1 : (tensor<2x3x8xf32>, !shardlin.sharded<tensor<10x8xf32>, #shardlin.chunk<dim = 0, placements = [2, 0, 1]>>, tensor<10xf32>) -> tensor<2x3x10xf32>
  %zero = arith.constant dense<0.0> : tensor<2x3x10xf32>
  %a = arith.maximumf %h, %zero : tensor<2x3x10xf32>
  %y = shardlin.linear %a, %w2, %b2 : (tensor<2x3x10xf32>, !shardlin.sharded<tensor<8x10xf32>, #shardlin.chunk<dim = 1, placements = [2, 0, 1]>>, tensor<8xf32>) -> tensor<2x3x8xf32>
  return %y : tensor<2x3x8xf32>
}

// SwiGLU: gate and up on the same input share the all_gather; the chain
// (silu(gate) * up) reads both GEMMs' blocks.
// CHECK-LABEL: func.func @swiglu
// CHECK-SAME: (%[[X:.*]]: tensor<4x6xf16>, %[[WG:.*]]: {{.*}}, %[[WU:.*]]: {{.*}}, %[[WD:.*]]: {{.*}})
// CHECK-NEXT: %[[G:.*]] = shardlin.all_gather %[[X]] along <dim = 0, placements = [0, 1]> : tensor<4x6xf16> -> tensor<8x6xf16>
// CHECK-NEXT: %[[AG:.*]] = shardlin.local_shard %[[WG]]
// CHECK-NEXT: %[[HG:.*]] = shardlin.gemm %[[G]], %[[AG]] transpose_rhs {{.*}} -> tensor<8x8xf16>
// CHECK-NEXT: %[[AU:.*]] = shardlin.local_shard %[[WU]]
// CHECK-NEXT: %[[HU:.*]] = shardlin.gemm %[[G]], %[[AU]] transpose_rhs {{.*}} -> tensor<8x8xf16>
// CHECK-NEXT: %[[E:.*]] = linalg.generic {{.*}} ins(%[[HG]], %[[HU]] : tensor<8x8xf16>, tensor<8x8xf16>) outs(%[[HG]] : tensor<8x8xf16>)
// CHECK: math.exp
// CHECK: arith.divf
// CHECK: arith.mulf
// CHECK: } -> tensor<8x8xf16>
// CHECK-NEXT: %[[AD:.*]] = shardlin.local_shard %[[WD]]
// The f16 partial products are f32 through the reduce_scatter, rounded once
// (as in a row-wise linear alone, lower-dtypes.mlir).
// CHECK-NEXT: %[[P:.*]] = shardlin.gemm %[[E]], %[[AD]] transpose_rhs {{.*}} : (tensor<8x8xf16>, tensor<6x8xf16>) -> tensor<8x6xf32>
// CHECK-NEXT: %[[S:.*]] = shardlin.reduce_scatter %[[P]] along <dim = 0, placements = [0, 1]> : tensor<8x6xf32> -> tensor<4x6xf32>
// CHECK-NEXT: %[[Y:.*]] = shardlin.convert %[[S]] : tensor<4x6xf32> -> tensor<4x6xf16>
// CHECK-NEXT: return %[[Y]]
// The bytes: the all_gather sends 4 x 6 f16 (48), the reduce_scatter 4 x 6
// f32 partial sums (96).
// EXPLAIN: lower-blocks.mlir:[[# @LINE + 15]]:8: remark: block fused with 2 col-wise linears (forced): fused est. {{.*}} us, max 144 bytes sent
// UNFUSED-LABEL: func.func @swiglu
// UNFUSED-COUNT-3: shardlin.all_to_all
func.func @swiglu(%x: tensor<4x6xf16>,
    %wg: !shardlin.sharded<tensor<16x6xf16>, #shardlin.chunk<dim = 0, placements = [1, 0]>>,
    %wu: !shardlin.sharded<tensor<16x6xf16>, #shardlin.chunk<dim = 0, placements = [1, 0]>>,
    %wd: !shardlin.sharded<tensor<6x16xf16>, #shardlin.chunk<dim = 1, placements = [1, 0]>>) -> tensor<4x6xf16> {
  %g = shardlin.linear %x, %wg : (tensor<4x6xf16>, !shardlin.sharded<tensor<16x6xf16>, #shardlin.chunk<dim = 0, placements = [1, 0]>>) -> tensor<4x16xf16>
  %u = shardlin.linear %x, %wu : (tensor<4x6xf16>, !shardlin.sharded<tensor<16x6xf16>, #shardlin.chunk<dim = 0, placements = [1, 0]>>) -> tensor<4x16xf16>
  %one = arith.constant dense<1.0> : tensor<4x16xf16>
  %n = arith.negf %g : tensor<4x16xf16>
  %e = math.exp %n : tensor<4x16xf16>
  %d = arith.addf %one, %e : tensor<4x16xf16>
  %s = arith.divf %g, %d : tensor<4x16xf16>
  %a = arith.mulf %s, %u : tensor<4x16xf16>
  %y = shardlin.linear %a, %wd : (tensor<4x16xf16>, !shardlin.sharded<tensor<6x16xf16>, #shardlin.chunk<dim = 1, placements = [1, 0]>>) -> tensor<4x6xf16>
  return %y : tensor<4x6xf16>
}

// Two blocks with residual adds between them fuse block by block; the
// residuals stay elementwise ops on each rank's own rows. 1-D input.
// CHECK-LABEL: func.func @two_blocks
// CHECK-SAME: (%[[X:[^:]*]]: tensor<6xf64>
// CHECK-NOT: shardlin.all_to_all
// CHECK: shardlin.all_gather {{.*}} : tensor<1x6xf64> -> tensor<4x6xf64>
// CHECK: math.tanh
// CHECK: shardlin.reduce_scatter
// CHECK-NEXT: %[[Y1:.*]] = tensor.collapse_shape
// CHECK-NEXT: %[[R1:.*]] = arith.addf %[[Y1]], %[[X]] : tensor<6xf64>
// CHECK-NEXT: %[[X2:.*]] = tensor.expand_shape %[[R1]]
// CHECK-NEXT: shardlin.all_gather %[[X2]]
// CHECK-NOT: shardlin.all_to_all
// CHECK: math.erf
// CHECK: shardlin.reduce_scatter
// CHECK-NEXT: %[[Y2:.*]] = tensor.collapse_shape
// CHECK-NEXT: %[[R2:.*]] = arith.addf %[[Y2]], %[[R1]]
// CHECK-NEXT: return %[[R2]]
// EXPLAIN-COUNT-2: remark: block fused with 1 col-wise linear (forced)
func.func @two_blocks(%x: tensor<6xf64>,
    %w1: !shardlin.sharded<tensor<5x6xf64>, #shardlin.chunk<dim = 0, placements = [3, 1, 0, 2]>>,
    %w2: !shardlin.sharded<tensor<6x5xf64>, #shardlin.chunk<dim = 1, placements = [3, 1, 0, 2]>>,
    %w3: !shardlin.sharded<tensor<5x6xf64>, #shardlin.chunk<dim = 0, placements = [3, 1, 0, 2]>>,
    %w4: !shardlin.sharded<tensor<6x5xf64>, #shardlin.chunk<dim = 1, placements = [3, 1, 0, 2]>>) -> tensor<6xf64> {
  %h1 = shardlin.linear %x, %w1 : (tensor<6xf64>, !shardlin.sharded<tensor<5x6xf64>, #shardlin.chunk<dim = 0, placements = [3, 1, 0, 2]>>) -> tensor<5xf64>
  %a1 = math.tanh %h1 : tensor<5xf64>
  %y1 = shardlin.linear %a1, %w2 : (tensor<5xf64>, !shardlin.sharded<tensor<6x5xf64>, #shardlin.chunk<dim = 1, placements = [3, 1, 0, 2]>>) -> tensor<6xf64>
  %r1 = arith.addf %y1, %x : tensor<6xf64>
  %h2 = shardlin.linear %r1, %w3 : (tensor<6xf64>, !shardlin.sharded<tensor<5x6xf64>, #shardlin.chunk<dim = 0, placements = [3, 1, 0, 2]>>) -> tensor<5xf64>
  %a2 = math.erf %h2 : tensor<5xf64>
  %y2 = shardlin.linear %a2, %w4 : (tensor<5xf64>, !shardlin.sharded<tensor<6x5xf64>, #shardlin.chunk<dim = 1, placements = [3, 1, 0, 2]>>) -> tensor<6xf64>
  %r2 = arith.addf %y2, %r1 : tensor<6xf64>
  return %r2 : tensor<6xf64>
}

// Not fused: the weights' chunks are placed differently. Each linear is
// lowered alone (two all_to_alls) and explain says why.
// CHECK-LABEL: func.func @mismatched
// CHECK-COUNT-2: shardlin.all_to_all
// EXPLAIN: lower-blocks.mlir:[[# @LINE + 5]]:8: remark: block not fused: the col-wise weight's chunks (placements [0, 1, 2]) are not the row-wise weight's ([2, 0, 1])
func.func @mismatched(%x: tensor<4x6xf32>,
    %w1: !shardlin.sharded<tensor<9x6xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2]>>,
    %w2: !shardlin.sharded<tensor<6x9xf32>, #shardlin.chunk<dim = 1, placements = [2, 0, 1]>>) -> tensor<4x6xf32> {
  %h = shardlin.linear %x, %w1 : (tensor<4x6xf32>, !shardlin.sharded<tensor<9x6xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2]>>) -> tensor<4x9xf32>
  %y = shardlin.linear %h, %w2 : (tensor<4x9xf32>, !shardlin.sharded<tensor<6x9xf32>, #shardlin.chunk<dim = 1, placements = [2, 0, 1]>>) -> tensor<4x6xf32>
  return %y : tensor<4x6xf32>
}

// Not fused: the chain reads a vector by broadcast (a rank-local value).
// CHECK-LABEL: func.func @broadcast
// CHECK-COUNT-2: shardlin.all_to_all
// EXPLAIN: lower-blocks.mlir:[[# @LINE + 11]]:8: remark: block not fused: the elementwise ops read a vector by broadcast, which may differ between ranks (only a linear's bias is the same on every rank)
func.func @broadcast(%x: tensor<4x6xf32>, %v: tensor<8xf32>,
    %w1: !shardlin.sharded<tensor<8x6xf32>, #shardlin.chunk<dim = 0, placements = [1, 0]>>,
    %w2: !shardlin.sharded<tensor<6x8xf32>, #shardlin.chunk<dim = 1, placements = [1, 0]>>) -> tensor<4x6xf32> {
  %h = shardlin.linear %x, %w1 : (tensor<4x6xf32>, !shardlin.sharded<tensor<8x6xf32>, #shardlin.chunk<dim = 0, placements = [1, 0]>>) -> tensor<4x8xf32>
  %e = tensor.empty() : tensor<4x8xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%h, %v : tensor<4x8xf32>, tensor<8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %b: f32, %out: f32):
    %m = arith.mulf %in, %b : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32>
  %y = shardlin.linear %s, %w2 : (tensor<4x8xf32>, !shardlin.sharded<tensor<6x8xf32>, #shardlin.chunk<dim = 1, placements = [1, 0]>>) -> tensor<4x6xf32>
  return %y : tensor<4x6xf32>
}

// Not fused: the activation is also returned, so it is needed whole.
// CHECK-LABEL: func.func @used_outside
// CHECK-COUNT-2: shardlin.all_to_all
// EXPLAIN: lower-blocks.mlir:[[# @LINE + 6]]:8: remark: block not fused: an elementwise value between the linears is also used outside the block
func.func @used_outside(%x: tensor<4x6xf32>,
    %w1: !shardlin.sharded<tensor<8x6xf32>, #shardlin.chunk<dim = 0, placements = [1, 0]>>,
    %w2: !shardlin.sharded<tensor<6x8xf32>, #shardlin.chunk<dim = 1, placements = [1, 0]>>) -> (tensor<4x6xf32>, tensor<4x8xf32>) {
  %h = shardlin.linear %x, %w1 : (tensor<4x6xf32>, !shardlin.sharded<tensor<8x6xf32>, #shardlin.chunk<dim = 0, placements = [1, 0]>>) -> tensor<4x8xf32>
  %a = math.tanh %h : tensor<4x8xf32>
  %y = shardlin.linear %a, %w2 : (tensor<4x8xf32>, !shardlin.sharded<tensor<6x8xf32>, #shardlin.chunk<dim = 1, placements = [1, 0]>>) -> tensor<4x6xf32>
  return %y, %a : tensor<4x6xf32>, tensor<4x8xf32>
}
