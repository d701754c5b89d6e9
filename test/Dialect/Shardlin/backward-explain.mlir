// RUN: shardlin-opt %s '--shardlin-generate-backward=strategy=activations explain=true' -o /dev/null 2>&1 | FileCheck %s --check-prefix=AUTO
// RUN: shardlin-opt %s '--shardlin-generate-backward=strategy=activations explain=true recompute=always' -o /dev/null 2>&1 | FileCheck %s --check-prefix=ALWAYS
// RUN: shardlin-opt %s '--shardlin-generate-backward=strategy=activations explain=true recompute=never' -o /dev/null 2>&1 | FileCheck %s --check-prefix=NEVER
// RUN: shardlin-opt %s '--shardlin-generate-backward=strategy=activations explain=true memory-cap-mib=0.0005' -o /dev/null 2>&1 | FileCheck %s --check-prefix=CAPPED
// RUN: shardlin-opt %s '--shardlin-generate-backward=strategy=activations explain=true memory-cap-mib=0.0005' | FileCheck %s --check-prefix=CAPPED-IR

// Recompute or save (docs/training.md): each forward value the backward
// needs that communication or a GEMM produced is saved (returned by
// @f_forward_saving and passed to @f_backward) or computed again in
// @f_backward. explain=true says which, why, what saving keeps and what
// recomputing sends (upper bounds per rank).

!w1 = !shardlin.sharded<tensor<10x8xf32>, #shardlin.chunk<dim = 0, placements = [2, 0, 1]>>
!w2 = !shardlin.sharded<tensor<8x10xf32>, #shardlin.chunk<dim = 1, placements = [2, 0, 1]>>

// Fused: the pre-activation H (a GEMM) and the gathered X. Without a memory
// cap, auto saves both: saving costs no time.
// AUTO: backward-explain.mlir:[[# @LINE + 24]]:8: remark: backward of @mlp: saves the gemm result tensor<18x?xf32> (no memory cap: saving costs no time): it keeps at most 288 bytes per rank from the forward to the backward; recomputing it sends at most 0 bytes per rank, est. {{[0-9.]+}} us
// AUTO: backward-explain.mlir:[[# @LINE + 23]]:8: remark: backward of @mlp: saves the all_gather result tensor<18x8xf32> (no memory cap: saving costs no time): it keeps at most 576 bytes per rank from the forward to the backward; recomputing it sends at most 384 bytes per rank, est. {{[0-9.]+}} us
// AUTO: backward-explain.mlir:[[# @LINE + 21]]:1: remark: generated @mlp_backward and @mlp_forward_saving: 2 forward value(s) saved, at most 864 bytes per rank (0 recomputed by communication or a GEMM)
// ALWAYS: remark: backward of @mlp: recomputes the gemm result tensor<18x?xf32> (forced: recompute=always)
// ALWAYS: remark: backward of @mlp: recomputes the all_gather result tensor<18x8xf32> (forced: recompute=always)
// ALWAYS: remark: generated @mlp_backward: every forward value it needs is recomputed (2 recomputed by communication or a GEMM)
// NEVER: remark: backward of @mlp: saves the gemm result tensor<18x?xf32> (forced: recompute=never)
// NEVER: remark: backward of @mlp: saves the all_gather result tensor<18x8xf32> (forced: recompute=never)
// With a cap of 524 bytes per rank the lowering does not fuse the block (its
// peak memory is over the cap); of the unfused layers' values, what saves
// the most time per byte is saved while the total fits, the rest recomputed.
// CAPPED: backward-explain.mlir:[[# @LINE + 16]]:8: remark: backward of @mlp: recomputes the all_to_all result tensor<18x?xf32> (saving it would exceed the memory cap of 524 bytes): it keeps at most 288 bytes per rank
// CAPPED: backward-explain.mlir:[[# @LINE + 12]]:8: remark: backward of @mlp: saves the all_to_all result tensor<6x10xf32> (it fits the memory cap of 524 bytes with the values saved before it): it keeps at most 240 bytes per rank
// CAPPED: backward-explain.mlir:[[# @LINE + 11]]:8: remark: backward of @mlp: recomputes the all_gather result tensor<18x8xf32> (saving it would exceed the memory cap of 524 bytes)
// CAPPED: remark: generated @mlp_backward and @mlp_forward_saving: 1 forward value(s) saved, at most 240 bytes per rank (2 recomputed by communication or a GEMM)
// CAPPED-IR-LABEL: func.func @mlp_forward_saving
// CAPPED-IR-SAME: -> (tensor<2x3x8xf32>, tensor<6x10xf32>)
// CAPPED-IR-LABEL: func.func @mlp_backward
// CAPPED-IR-SAME: tensor<6x10xf32> {shardlin.saved = "the all_to_all result tensor<6x10xf32>"})
// The gathered X is gathered again, and the row-wise layer's exchanged input
// exchanged again.
// CAPPED-IR-COUNT-2: shardlin.all_gather %{{.*}} along <dim = 0, placements = [0, 1, 2]>
// CAPPED-IR: return
func.func @mlp(%x: tensor<2x3x8xf32>, %w1: !w1, %b1: tensor<10xf32>, %w2: !w2, %b2: tensor<8xf32>) -> tensor<2x3x8xf32> {
  %h = shardlin.linear %x, %w1, %b1 : (tensor<2x3x8xf32>, !w1, tensor<10xf32>) -> tensor<2x3x10xf32>
  %zero = arith.constant dense<0.0> : tensor<2x3x10xf32>
  %a = arith.maximumf %h, %zero : tensor<2x3x10xf32>
  %y = shardlin.linear %a, %w2, %b2 : (tensor<2x3x10xf32>, !w2, tensor<8xf32>) -> tensor<2x3x8xf32>
  return %y : tensor<2x3x8xf32>
}
