// Element types: the input's element type is carried through every op of the
// lowering (collective buffers, gemm, bias chunk, bias_add), for f16, bf16,
// f32 and f64 and both sharding dims. (The first implementation allocated
// every collective buffer as f32.)

func.func @row_wise_f16(%x: tensor<3x5xf16>, %w: !shardlin.sharded<tensor<4x5xf16>, #shardlin.chunk<dim = 1, placements = [1, 0]>>, %b: tensor<4xf16>) -> tensor<3x4xf16> {
  %y = shardlin.linear %x, %w, %b : (tensor<3x5xf16>, !shardlin.sharded<tensor<4x5xf16>, #shardlin.chunk<dim = 1, placements = [1, 0]>>, tensor<4xf16>) -> tensor<3x4xf16>
  return %y : tensor<3x4xf16>
}

func.func @col_wise_f16(%x: tensor<3x4xf16>, %w: !shardlin.sharded<tensor<5x4xf16>, #shardlin.chunk<dim = 0, placements = [1, 0]>>, %b: tensor<5xf16>) -> tensor<3x5xf16> {
  %y = shardlin.linear %x, %w, %b : (tensor<3x4xf16>, !shardlin.sharded<tensor<5x4xf16>, #shardlin.chunk<dim = 0, placements = [1, 0]>>, tensor<5xf16>) -> tensor<3x5xf16>
  return %y : tensor<3x5xf16>
}

func.func @row_wise_bf16(%x: tensor<3x5xbf16>, %w: !shardlin.sharded<tensor<4x5xbf16>, #shardlin.chunk<dim = 1, placements = [1, 0]>>, %b: tensor<4xbf16>) -> tensor<3x4xbf16> {
  %y = shardlin.linear %x, %w, %b : (tensor<3x5xbf16>, !shardlin.sharded<tensor<4x5xbf16>, #shardlin.chunk<dim = 1, placements = [1, 0]>>, tensor<4xbf16>) -> tensor<3x4xbf16>
  return %y : tensor<3x4xbf16>
}

func.func @col_wise_bf16(%x: tensor<3x4xbf16>, %w: !shardlin.sharded<tensor<5x4xbf16>, #shardlin.chunk<dim = 0, placements = [1, 0]>>, %b: tensor<5xbf16>) -> tensor<3x5xbf16> {
  %y = shardlin.linear %x, %w, %b : (tensor<3x4xbf16>, !shardlin.sharded<tensor<5x4xbf16>, #shardlin.chunk<dim = 0, placements = [1, 0]>>, tensor<5xbf16>) -> tensor<3x5xbf16>
  return %y : tensor<3x5xbf16>
}

func.func @row_wise_f32(%x: tensor<3x5xf32>, %w: !shardlin.sharded<tensor<4x5xf32>, #shardlin.chunk<dim = 1, placements = [1, 0]>>, %b: tensor<4xf32>) -> tensor<3x4xf32> {
  %y = shardlin.linear %x, %w, %b : (tensor<3x5xf32>, !shardlin.sharded<tensor<4x5xf32>, #shardlin.chunk<dim = 1, placements = [1, 0]>>, tensor<4xf32>) -> tensor<3x4xf32>
  return %y : tensor<3x4xf32>
}

func.func @col_wise_f32(%x: tensor<3x4xf32>, %w: !shardlin.sharded<tensor<5x4xf32>, #shardlin.chunk<dim = 0, placements = [1, 0]>>, %b: tensor<5xf32>) -> tensor<3x5xf32> {
  %y = shardlin.linear %x, %w, %b : (tensor<3x4xf32>, !shardlin.sharded<tensor<5x4xf32>, #shardlin.chunk<dim = 0, placements = [1, 0]>>, tensor<5xf32>) -> tensor<3x5xf32>
  return %y : tensor<3x5xf32>
}

func.func @row_wise_f64(%x: tensor<3x5xf64>, %w: !shardlin.sharded<tensor<4x5xf64>, #shardlin.chunk<dim = 1, placements = [1, 0]>>, %b: tensor<4xf64>) -> tensor<3x4xf64> {
  %y = shardlin.linear %x, %w, %b : (tensor<3x5xf64>, !shardlin.sharded<tensor<4x5xf64>, #shardlin.chunk<dim = 1, placements = [1, 0]>>, tensor<4xf64>) -> tensor<3x4xf64>
  return %y : tensor<3x4xf64>
}

func.func @col_wise_f64(%x: tensor<3x4xf64>, %w: !shardlin.sharded<tensor<5x4xf64>, #shardlin.chunk<dim = 0, placements = [1, 0]>>, %b: tensor<5xf64>) -> tensor<3x5xf64> {
  %y = shardlin.linear %x, %w, %b : (tensor<3x4xf64>, !shardlin.sharded<tensor<5x4xf64>, #shardlin.chunk<dim = 0, placements = [1, 0]>>, tensor<5xf64>) -> tensor<3x5xf64>
  return %y : tensor<3x5xf64>
}
