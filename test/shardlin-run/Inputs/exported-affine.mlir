// Replicated constants in a rank-local elementwise chain, as a frontend
// writes a norm's affine part and a learned positional table: y = x *
// norm.weight + norm.bias + pos.table, the two vectors broadcast along the
// features by linalg.generic (torch-mlir's form), the table a full 6 x 40
// constant. x is split on its rows at offsets with an empty chunk, and so is
// the table (each rank holds its rows); the result is gathered, replicated.
// exported_module.py writes the blobs with random values.
#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d1)>
module {
  shard.grid @tp(shape = 4)
  func.func @affine(%arg0: tensor<6x40xf32>) -> tensor<6x40xf32> {
    %rows = shard.sharding @tp split_axes = [[0]] sharded_dims_offsets = [0, 2, 2, 5, 6] : !shard.sharding
    %x = shard.shard %arg0 to %rows : tensor<6x40xf32>
    %w = arith.constant dense_resource<norm.weight> : tensor<40xf32>
    %b = arith.constant dense_resource<norm.bias> : tensor<40xf32>
    %pos = arith.constant dense_resource<pos.table> : tensor<6x40xf32>
    %0 = tensor.empty() : tensor<6x40xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map1, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%x, %w, %b : tensor<6x40xf32>, tensor<40xf32>, tensor<40xf32>) outs(%0 : tensor<6x40xf32>) {
    ^bb0(%in: f32, %in_1: f32, %in_2: f32, %out: f32):
      %3 = arith.mulf %in, %in_1 : f32
      %4 = arith.addf %3, %in_2 : f32
      linalg.yield %4 : f32
    } -> tensor<6x40xf32>
    %2 = arith.addf %1, %pos : tensor<6x40xf32>
    %repl = shard.sharding @tp split_axes = [[]] : !shard.sharding
    %y = shard.shard %2 to %repl : tensor<6x40xf32>
    return %y : tensor<6x40xf32>
  }
}

{-#
  dialect_resources: {
    builtin: {
      norm.weight: "0x04000000",
      norm.bias: "0x04000000",
      pos.table: "0x04000000"
    }
  }
#-}
