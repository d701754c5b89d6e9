// RUN: shardlin-opt %s '--lower-sharded-linear=explain=true' -o /dev/null 2>&1 | FileCheck %s

// Replicated attention blocks in the import's N-D form (collapse, 2-D
// replicated linear, expand) that are not fused: the remark on O says why,
// and the ops are lowered one by one.

!w7 = !shardlin.sharded<tensor<28x8xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2], block = 4>>
!w7o = !shardlin.sharded<tensor<8x28xf32>, #shardlin.chunk<dim = 1, placements = [0, 1, 2], block = 4>>

// O's 2-D result is also returned: the block's result is not only its
// expansion back to [B, S, N].
// CHECK: lower-attention-replicated-nd-unfused.mlir:[[# @LINE + 12]]:9: remark: attention block not fused: its input is a collapse of the attention, but not collapse_shape {{\[}}[0, 1], [2]], O and expand_shape back (its ops are lowered one by one)
func.func @o_result_used(%x: tensor<1x5x8xf32> {shardlin.replicated}, %wq: !w7, %wk: !w7, %wv: !w7,
                         %wo: !w7o) -> (tensor<1x5x8xf32>, tensor<5x8xf32>) {
  %xr = tensor.collapse_shape %x [[0, 1], [2]] : tensor<1x5x8xf32> into tensor<5x8xf32>
  %q2 = shardlin.linear %xr, %wq layouts replicated -> replicated : (tensor<5x8xf32>, !w7) -> tensor<5x28xf32>
  %q = tensor.expand_shape %q2 [[0, 1], [2]] output_shape [1, 5, 28] : tensor<5x28xf32> into tensor<1x5x28xf32>
  %k2 = shardlin.linear %xr, %wk layouts replicated -> replicated : (tensor<5x8xf32>, !w7) -> tensor<5x28xf32>
  %k = tensor.expand_shape %k2 [[0, 1], [2]] output_shape [1, 5, 28] : tensor<5x28xf32> into tensor<1x5x28xf32>
  %v2 = shardlin.linear %xr, %wv layouts replicated -> replicated : (tensor<5x8xf32>, !w7) -> tensor<5x28xf32>
  %v = tensor.expand_shape %v2 [[0, 1], [2]] output_shape [1, 5, 28] : tensor<5x28xf32> into tensor<1x5x28xf32>
  %a = shardlin.attention %q, %k, %v {head_dim = 4 : i64, causal} : tensor<1x5x28xf32>, tensor<1x5x28xf32>, tensor<1x5x28xf32> -> tensor<1x5x28xf32>
  %a2 = tensor.collapse_shape %a [[0, 1], [2]] : tensor<1x5x28xf32> into tensor<5x28xf32>
  %y2 = shardlin.linear %a2, %wo layouts replicated -> replicated : (tensor<5x28xf32>, !w7o) -> tensor<5x8xf32>
  %y = tensor.expand_shape %y2 [[0, 1], [2]] output_shape [1, 5, 8] : tensor<5x8xf32> into tensor<1x5x8xf32>
  return %y, %y2 : tensor<1x5x8xf32>, tensor<5x8xf32>
}

// q's rows come from a 4-D x: not the collapse of a [B, S, K] x.
// CHECK: lower-attention-replicated-nd-unfused.mlir:[[# @LINE + 13]]:9: remark: attention block not fused: q's linear on a 3-D x is not collapse_shape {{\[}}[0, 1], [2]] of x, the linear and expand_shape back (its ops are lowered one by one)
func.func @q_from_4d(%x4: tensor<1x5x1x8xf32> {shardlin.replicated}, %x: tensor<1x5x8xf32> {shardlin.replicated},
                     %wq: !w7, %wk: !w7, %wv: !w7, %wo: !w7o) -> tensor<1x5x8xf32> {
  %x4r = tensor.collapse_shape %x4 [[0, 1, 2], [3]] : tensor<1x5x1x8xf32> into tensor<5x8xf32>
  %xr = tensor.collapse_shape %x [[0, 1], [2]] : tensor<1x5x8xf32> into tensor<5x8xf32>
  %q2 = shardlin.linear %x4r, %wq layouts replicated -> replicated : (tensor<5x8xf32>, !w7) -> tensor<5x28xf32>
  %q = tensor.expand_shape %q2 [[0, 1], [2]] output_shape [1, 5, 28] : tensor<5x28xf32> into tensor<1x5x28xf32>
  %k2 = shardlin.linear %xr, %wk layouts replicated -> replicated : (tensor<5x8xf32>, !w7) -> tensor<5x28xf32>
  %k = tensor.expand_shape %k2 [[0, 1], [2]] output_shape [1, 5, 28] : tensor<5x28xf32> into tensor<1x5x28xf32>
  %v2 = shardlin.linear %xr, %wv layouts replicated -> replicated : (tensor<5x8xf32>, !w7) -> tensor<5x28xf32>
  %v = tensor.expand_shape %v2 [[0, 1], [2]] output_shape [1, 5, 28] : tensor<5x28xf32> into tensor<1x5x28xf32>
  %a = shardlin.attention %q, %k, %v {head_dim = 4 : i64, causal} : tensor<1x5x28xf32>, tensor<1x5x28xf32>, tensor<1x5x28xf32> -> tensor<1x5x28xf32>
  %a2 = tensor.collapse_shape %a [[0, 1], [2]] : tensor<1x5x28xf32> into tensor<5x28xf32>
  %y2 = shardlin.linear %a2, %wo layouts replicated -> replicated : (tensor<5x28xf32>, !w7o) -> tensor<5x8xf32>
  %y = tensor.expand_shape %y2 [[0, 1], [2]] output_shape [1, 5, 8] : tensor<5x8xf32> into tensor<1x5x8xf32>
  return %y : tensor<1x5x8xf32>
}
