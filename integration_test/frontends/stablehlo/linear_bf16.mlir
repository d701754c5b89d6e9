// linear_bf16: JAX -> StableHLO -> linalg (IREE's input pipeline), exported by integration_test/frontends/export_stablehlo.py, annotated from the plan {"fc": "colwise"}.
#map = affine_map<(d0, d1) -> (d1, d0)>
#map1 = affine_map<(d0, d1) -> (d0, d1)>
module @jit_linear_bf16 {
  shard.grid @tp(shape = 4)
  func.func public @main(%arg0: tensor<6x16xbf16>, %arg1: tensor<24x16xbf16>) -> tensor<6x24xbf16> {
    %sharding = shard.sharding @tp split_axes = [[0]] sharded_dims_offsets = [0, 6, 12, 18, 24] : !shard.sharding
    %sharding_0 = shard.sharding @tp split_axes = [[]] : !shard.sharding
    %sharding_annotated = shard.shard %arg0 to %sharding_0 : tensor<6x16xbf16>
    %sharding_annotated_1 = shard.shard %arg1 to %sharding : tensor<24x16xbf16>
    %cst = arith.constant 0.000000e+00 : f32
    %0 = tensor.empty() : tensor<16x24xbf16>
    %1 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel"]} ins(%sharding_annotated_1 : tensor<24x16xbf16>) outs(%0 : tensor<16x24xbf16>) {
    ^bb0(%in: bf16, %out: bf16):
      linalg.yield %in : bf16
    } -> tensor<16x24xbf16>
    %2 = tensor.empty() : tensor<6x24xf32>
    %3 = linalg.fill ins(%cst : f32) outs(%2 : tensor<6x24xf32>) -> tensor<6x24xf32>
    %4 = linalg.matmul ins(%sharding_annotated, %1 : tensor<6x16xbf16>, tensor<16x24xbf16>) outs(%3 : tensor<6x24xf32>) -> tensor<6x24xf32>
    %5 = tensor.empty() : tensor<6x24xbf16>
    %6 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%4 : tensor<6x24xf32>) outs(%5 : tensor<6x24xbf16>) {
    ^bb0(%in: f32, %out: bf16):
      %7 = arith.truncf %in : f32 to bf16
      linalg.yield %7 : bf16
    } -> tensor<6x24xbf16>
    %sharding_annotated_2 = shard.shard %6 to %sharding_0 : tensor<6x24xbf16>
    return %sharding_annotated_2 : tensor<6x24xbf16>
  }
}
