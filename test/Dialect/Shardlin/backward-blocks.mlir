// RUN: shardlin-opt %s '--shardlin-generate-backward=strategy=activations recompute=always' | FileCheck %s
// RUN: shardlin-opt %s '--shardlin-generate-backward=strategy=activations recompute=never' | FileCheck %s --check-prefix=SAVE
// RUN: shardlin-opt %s '--shardlin-generate-backward=strategy=activations fuse-blocks=false recompute=never' | FileCheck %s --check-prefix=UNFUSED

// The backward of a fused block (docs/training.md): the dual of its
// all_gather / reduce_scatter pair. Per rank it sends an all_gather of dy and
// a reduce_scatter of dx's partial sums, (W-1)·B·H elements each, plus the
// all_gather of X again if it is recomputed, plus each col-wise bias's
// chunks; no all_to_all.

!w1 = !shardlin.sharded<tensor<10x8xf32>, #shardlin.chunk<dim = 0, placements = [2, 0, 1]>>
!w2 = !shardlin.sharded<tensor<8x10xf32>, #shardlin.chunk<dim = 1, placements = [2, 0, 1]>>

// An MLP (F = 10 over 3 ranks: blocks of 4, 4, 2), ReLU, a residual, a 3-D
// input. Recomputed: X gathered again, H = X A1^T + b1 and E = relu(H) again.
// CHECK-LABEL: func.func @mlp_backward
// CHECK-SAME: (%[[X:[^:]*]]: tensor<2x3x8xf32>, %[[W1:[^:]*]]: {{.*}}, %[[B1:[^:]*]]: tensor<10xf32>, %[[W2:[^:]*]]: {{.*}}, %[[B2:[^:]*]]: tensor<8xf32>, %[[DY:[^:]*]]: tensor<2x3x8xf32>)
// CHECK-NEXT: %[[A2:.*]] = shardlin.local_shard %[[W2]] {{.*}} -> tensor<8x?xf32>
// CHECK-NEXT: %[[XR:.*]] = tensor.collapse_shape %[[X]]
// CHECK-NEXT: %[[XG:.*]] = shardlin.all_gather %[[XR]] along <dim = 0, placements = [0, 1, 2]> : tensor<6x8xf32> -> tensor<18x8xf32>
// CHECK-NEXT: %[[A1:.*]] = shardlin.local_shard %[[W1]] {{.*}} -> tensor<?x8xf32>
// CHECK-NEXT: %[[B1C:.*]] = shardlin.local_chunk %[[B1]]
// CHECK-NEXT: %[[H:.*]] = shardlin.gemm %[[XG]], %[[A1]] bias %[[B1C]] transpose_rhs {shardlin.lowering = {recomputed, strategy = "fused"}}
// CHECK-NEXT: %[[E:.*]] = linalg.generic {{.*}} ins(%[[H]] : tensor<18x?xf32>)
// CHECK: arith.maximumf
// CHECK: } -> tensor<18x?xf32>
// CHECK-NEXT: %[[DYR:.*]] = tensor.collapse_shape %[[DY]]
// CHECK-NEXT: %[[DYG:.*]] = shardlin.all_gather %[[DYR]] along <dim = 0, placements = [0, 1, 2]> : tensor<6x8xf32> -> tensor<18x8xf32>
// CHECK-NEXT: %[[DE:.*]] = shardlin.gemm %[[DYG]], %[[A2]] {shardlin.lowering = {backward, strategy = "fused"}} : (tensor<18x8xf32>, tensor<8x?xf32>) -> tensor<18x?xf32>
// CHECK-NEXT: %[[DA2:.*]] = shardlin.gemm %[[DYG]], %[[E]] transpose_lhs {{.*}} -> tensor<8x?xf32>
// ReLU'(h) = 1 where h > 0, 0 elsewhere (0 at h = 0: a tie with the
// constant, which takes the gradient).
// CHECK-NEXT: %[[DH:.*]] = linalg.generic {{.*}} ins(%[[DE]], %[[H]] : tensor<18x?xf32>, tensor<18x?xf32>) outs(%[[DE]] : tensor<18x?xf32>)
// CHECK-NEXT: ^bb0(%[[G:.*]]: f32, %[[HV:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[R:.*]] = arith.maximumf %[[HV]], %[[ZERO]] : f32
// CHECK-NEXT: %[[ISH:.*]] = arith.cmpf oeq, %[[HV]], %[[R]] : f32
// CHECK-NEXT: %[[ISZ:.*]] = arith.cmpf oeq, %[[ZERO]], %[[R]] : f32
// CHECK-NEXT: %[[TIE:.*]] = arith.select %[[ISZ]], %[[ZERO]], %[[G]] : f32
// CHECK-NEXT: %[[D:.*]] = arith.select %[[ISH]], %[[TIE]], %[[ZERO]] : f32
// CHECK-NEXT: linalg.yield %[[D]] : f32
// CHECK-NEXT: } -> tensor<18x?xf32>
// CHECK-NEXT: %[[DXP:.*]] = shardlin.gemm %[[DH]], %[[A1]] {{.*}} -> tensor<18x8xf32>
// CHECK-NEXT: %[[DA1:.*]] = shardlin.gemm %[[DH]], %[[XG]] transpose_lhs {{.*}} -> tensor<?x8xf32>
// CHECK-NEXT: %[[DB1C:.*]] = shardlin.sum_rows %[[DH]] : tensor<18x?xf32> -> tensor<?xf32>
// CHECK-NEXT: %[[DXR:.*]] = shardlin.reduce_scatter %[[DXP]] along <dim = 0, placements = [0, 1, 2]> : tensor<18x8xf32> -> tensor<6x8xf32>
// CHECK-NEXT: %[[DXB:.*]] = tensor.expand_shape %[[DXR]]
// The residual adds dy itself to dx (no op for its derivative).
// CHECK-NEXT: %[[DX:.*]] = arith.addf %[[DY]], %[[DXB]] : tensor<2x3x8xf32>
// CHECK-NEXT: %[[DW1:.*]] = shardlin.from_local %[[DA1]]
// CHECK-NEXT: %[[DB1:.*]] = shardlin.all_gather %[[DB1C]] along <dim = 0, placements = [2, 0, 1]> : tensor<?xf32> -> tensor<10xf32>
// CHECK-NEXT: %[[DW2:.*]] = shardlin.from_local %[[DA2]]
// CHECK-NEXT: %[[DB2:.*]] = shardlin.sum_rows %[[DYG]] : tensor<18x8xf32> -> tensor<8xf32>
// CHECK-NEXT: return %[[DX]], %[[DW1]], %[[DB1]], %[[DW2]], %[[DB2]]
// Saved: @mlp_forward_saving returns the pre-activation H and the gathered
// X; the backward gathers only dy.
// SAVE-LABEL: func.func @mlp_forward_saving
// SAVE-SAME: -> (tensor<2x3x8xf32>, tensor<18x?xf32>, tensor<18x8xf32>)
// SAVE: %[[XG:.*]] = shardlin.all_gather
// SAVE: %[[H:.*]] = shardlin.gemm %[[XG]]
// SAVE: return %{{.*}}, %[[H]], %[[XG]]
// SAVE-LABEL: func.func @mlp_backward
// SAVE-SAME: %[[H:[^:]*]]: tensor<18x?xf32> {shardlin.saved = "the gemm result tensor<18x?xf32>"}, %[[XG:[^:]*]]: tensor<18x8xf32> {shardlin.saved = "the all_gather result tensor<18x8xf32>"})
// SAVE-NOT: shardlin.all_to_all
// SAVE-COUNT-1: shardlin.all_gather %{{.*}} along <dim = 0, placements = [0, 1, 2]>
// SAVE-NOT: shardlin.all_gather %{{.*}} along <dim = 0, placements = [0, 1, 2]>
// SAVE: shardlin.gemm %{{.*}}, %[[XG]] transpose_lhs
// SAVE-COUNT-1: shardlin.reduce_scatter
// SAVE-NOT: shardlin.all_to_all
// SAVE: return
// Not fused: the backward of each linear alone (the all_to_alls come back).
// UNFUSED-LABEL: func.func @mlp_backward
// UNFUSED-COUNT-2: shardlin.all_to_all
func.func @mlp(%x: tensor<2x3x8xf32>, %w1: !w1, %b1: tensor<10xf32>, %w2: !w2, %b2: tensor<8xf32>) -> tensor<2x3x8xf32> {
  %h = shardlin.linear %x, %w1, %b1 : (tensor<2x3x8xf32>, !w1, tensor<10xf32>) -> tensor<2x3x10xf32>
  %zero = arith.constant dense<0.0> : tensor<2x3x10xf32>
  %a = arith.maximumf %h, %zero : tensor<2x3x10xf32>
  %y = shardlin.linear %a, %w2, %b2 : (tensor<2x3x10xf32>, !w2, tensor<8xf32>) -> tensor<2x3x8xf32>
  %r = arith.addf %y, %x : tensor<2x3x8xf32>
  return %r : tensor<2x3x8xf32>
}

!wg = !shardlin.sharded<tensor<16x6xbf16>, #shardlin.chunk<dim = 0, placements = [1, 0]>>
!wd = !shardlin.sharded<tensor<6x16xbf16>, #shardlin.chunk<dim = 1, placements = [1, 0]>>

// SwiGLU in bf16: gate and up share the gathered X; their dx partial sums
// are f32, added, reduce-scattered in f32 and rounded once.
// SAVE-LABEL: func.func @swiglu_forward_saving
// SAVE-SAME: -> (tensor<4x6xbf16>, tensor<8x8xbf16>, tensor<8x8xbf16>, tensor<8x6xbf16>)
// SAVE-LABEL: func.func @swiglu_backward
// SAVE-SAME: %[[DY:[^:]*]]: tensor<4x6xbf16>, %[[HG:[^:]*]]: tensor<8x8xbf16> {{{.*}}}, %[[HU:[^:]*]]: tensor<8x8xbf16> {{{.*}}}, %[[XG:[^:]*]]: tensor<8x6xbf16> {{{.*}}})
// The gradient is gathered in bf16 (2 bytes an element).
// SAVE: %[[DYG:.*]] = shardlin.all_gather %[[DY]] along <dim = 0, placements = [0, 1]> : tensor<4x6xbf16> -> tensor<8x6xbf16>
// SAVE: %[[DE:.*]] = shardlin.gemm %[[DYG]], %{{.*}} {{.*}} -> tensor<8x8xbf16>
// d(silu(g) u)/dg and d(silu(g) u)/du.
// SAVE: %[[DG:.*]] = linalg.generic {{.*}} ins(%[[DE]], %[[HG]], %[[HU]] : {{.*}})
// SAVE: math.exp
// SAVE: %[[DU:.*]] = linalg.generic {{.*}} ins(%[[DE]], %[[HG]] : {{.*}})
// SAVE: %[[PU:.*]] = shardlin.gemm %[[DU]], %{{.*}} {{.*}} : (tensor<8x8xbf16>, tensor<8x6xbf16>) -> tensor<8x6xf32>
// SAVE: %[[PG:.*]] = shardlin.gemm %[[DG]], %{{.*}} {{.*}} : (tensor<8x8xbf16>, tensor<8x6xbf16>) -> tensor<8x6xf32>
// SAVE-NEXT: %[[P:.*]] = arith.addf %[[PU]], %[[PG]] : tensor<8x6xf32>
// SAVE: %[[S:.*]] = shardlin.reduce_scatter %[[P]] along <dim = 0, placements = [0, 1]> : tensor<8x6xf32> -> tensor<4x6xf32>
// SAVE-NEXT: %[[DX:.*]] = shardlin.convert %[[S]] : tensor<4x6xf32> -> tensor<4x6xbf16>
// SAVE: return %[[DX]],
func.func @swiglu(%x: tensor<4x6xbf16>, %wg: !wg, %wu: !wg, %wd: !wd) -> tensor<4x6xbf16> {
  %g = shardlin.linear %x, %wg : (tensor<4x6xbf16>, !wg) -> tensor<4x16xbf16>
  %u = shardlin.linear %x, %wu : (tensor<4x6xbf16>, !wg) -> tensor<4x16xbf16>
  %one = arith.constant dense<1.0> : tensor<4x16xbf16>
  %n = arith.negf %g : tensor<4x16xbf16>
  %e = math.exp %n : tensor<4x16xbf16>
  %d = arith.addf %one, %e : tensor<4x16xbf16>
  %s = arith.divf %g, %d : tensor<4x16xbf16>
  %a = arith.mulf %s, %u : tensor<4x16xbf16>
  %y = shardlin.linear %a, %wd : (tensor<4x16xbf16>, !wd) -> tensor<4x6xbf16>
  return %y : tensor<4x6xbf16>
}
