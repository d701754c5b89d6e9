// RUN: shardlin-opt %s '--lower-sharded-linear=explain=true' -o /dev/null 2>&1 | FileCheck %s

// The cost model counts a K split's f16/bf16 partial sums as the f32 they are
// moved in (docs/lowering.md, "In which type partial sums are reduced"), and
// the choice follows: at B = 48, N = K = 256 over W = 2, moving activations
// wins for f32; for f16 it loses to gathering the weight once its
// reduce_scatter counts 4 bytes per element (counted at 2, it sent 36864
// bytes, was estimated at 70.6 us against gather-weight's 71.5 us and won).

// f32: all_to_all 48 x 128 x 4 = 24576 bytes, reduce_scatter 48 x 256 x 4 =
// 49152; gather-weight's all_gather 128 x 256 x 4 = 131072.
// CHECK: lower-partial-sums.mlir:[[# @LINE + 2]]:8: remark: lowered row-wise with activations (cheapest estimate); activations: est. {{.*}} us, max 73728 bytes sent, {{.*}}; gather-weight: est. {{.*}} us, max 131072 bytes sent
func.func @f32(%x: tensor<48x256xf32>, %w: !shardlin.sharded<tensor<256x256xf32>, #shardlin.chunk<dim = 1, placements = [0, 1]>>) -> tensor<48x256xf32> {
  %y = shardlin.linear %x, %w : (tensor<48x256xf32>, !shardlin.sharded<tensor<256x256xf32>, #shardlin.chunk<dim = 1, placements = [0, 1]>>) -> tensor<48x256xf32>
  return %y : tensor<48x256xf32>
}

// f16: all_to_all 48 x 128 x 2 = 12288 bytes, reduce_scatter of f32 partial
// sums 48 x 256 x 4 = 49152; gather-weight's all_gather 128 x 256 x 2 =
// 65536.
// CHECK: lower-partial-sums.mlir:[[# @LINE + 2]]:8: remark: lowered row-wise with gather-weight (cheapest estimate); activations: est. {{.*}} us, max 61440 bytes sent, {{.*}}; gather-weight: est. {{.*}} us, max 65536 bytes sent
func.func @f16(%x: tensor<48x256xf16>, %w: !shardlin.sharded<tensor<256x256xf16>, #shardlin.chunk<dim = 1, placements = [0, 1]>>) -> tensor<48x256xf16> {
  %y = shardlin.linear %x, %w : (tensor<48x256xf16>, !shardlin.sharded<tensor<256x256xf16>, #shardlin.chunk<dim = 1, placements = [0, 1]>>) -> tensor<48x256xf16>
  return %y : tensor<48x256xf16>
}
