// RUN: shardlin-opt %s --shardlin-import-shard | FileCheck %s

// math.powf with a constant exponent, as torch-mlir's FX importer writes
// torch.pow(x, -0.5), sigmoid(x) ** 1.5, torch.pow(x, 0.5) and x ** 2.0 (the
// corpus's pow_mlp_seq): expanded by the import into the ops every backend
// and the backward take.

#id = affine_map<(d0, d1) -> (d0, d1)>
shard.grid @tp(shape = 2)
// CHECK-LABEL: func.func @powers
// CHECK-NOT: math.powf
// CHECK: math.rsqrt
// CHECK: %[[LOG:.*]] = math.log
// CHECK: %[[SCALED:.*]] = arith.mulf %[[LOG]], %{{.*}} : f32
// CHECK: math.exp %[[SCALED]]
// CHECK: math.sqrt
// CHECK: %[[TWO:.*]] = arith.constant 2 : i64
// CHECK: math.fpowi %{{.*}}, %[[TWO]] : f32, i64
// CHECK-NOT: math.powf
func.func @powers(%arg0: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %s = shard.sharding @tp split_axes = [[0]] : !shard.sharding
  %x = shard.shard %arg0 to %s : tensor<4x6xf32>
  %minus_half = arith.constant -5.000000e-01 : f32
  %three_halves = arith.constant 1.500000e+00 : f32
  %half = arith.constant 5.000000e-01 : f32
  %two = arith.constant 2.000000e+00 : f32
  %e = tensor.empty() : tensor<4x6xf32>
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x6xf32>) outs(%e : tensor<4x6xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = math.powf %in, %minus_half : f32
    %b = math.powf %a, %three_halves : f32
    %c = math.powf %b, %half : f32
    %d = math.powf %c, %two : f32
    linalg.yield %d : f32
  } -> tensor<4x6xf32>
  %r = shard.shard %y to %s : tensor<4x6xf32>
  return %r : tensor<4x6xf32>
}
