// RUN: shardlin-opt %s -split-input-file -verify-diagnostics

// Every verifier rule of the linear's layouts and weight storage, and of
// all_reduce and from_local.

!wn = !shardlin.sharded<tensor<16x12xf32>, #shardlin.chunk<dim = 1, placements = [0, 1, 2, 3]>>
func.func @rows_to_replicated(%x: tensor<8x16xf32>, %w: !wn) {
  // expected-error@+1 {{layouts rows -> replicated is not a linear's layout pair: lower rows -> rows and all_gather the rows}}
  %y = shardlin.linear %x, %w weight_kn layouts rows -> replicated : (tensor<8x16xf32>, !wn) -> tensor<8x12xf32>
  return
}

// -----

!wk = !shardlin.sharded<tensor<16x12xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3]>>
func.func @features_to_features(%x: tensor<8x4xf32>, %w: !wk) {
  // expected-error@+1 {{layouts features -> features is not a linear's layout pair: a features input needs a K split, a features result an N split}}
  %y = shardlin.linear %x, %w weight_kn layouts features -> features : (tensor<8x4xf32>, !wk) -> tensor<8x3xf32>
  return
}

// -----

!wn = !shardlin.sharded<tensor<16x12xf32>, #shardlin.chunk<dim = 1, placements = [0, 1, 2, 3]>>
func.func @features_input_n_split(%x: tensor<8x4xf32>, %w: !wn) {
  // expected-error@+1 {{layouts features -> replicated need the weight split along dim 0 (K), but it is split along dim 1 (N)}}
  %y = shardlin.linear %x, %w weight_kn layouts features -> replicated : (tensor<8x4xf32>, !wn) -> tensor<8x12xf32>
  return
}

// -----

!wk = !shardlin.sharded<tensor<12x16xf32>, #shardlin.chunk<dim = 1, placements = [0, 1, 2, 3]>>
func.func @features_result_k_split(%x: tensor<8x16xf32>, %w: !wk) {
  // expected-error@+1 {{layouts replicated -> features need the weight split along dim 0 (N), but it is split along dim 1 (K)}}
  %y = shardlin.linear %x, %w layouts replicated -> features : (tensor<8x16xf32>, !wk) -> tensor<8x3xf32>
  return
}

// -----

!wn = !shardlin.sharded<tensor<16x12xf32>, #shardlin.chunk<dim = 1, placements = [0, 1, 2, 3]>>
func.func @three_d(%x: tensor<2x4x16xf32>, %w: !wn) {
  // expected-error@+1 {{layouts replicated -> features take a 2-D input (rows x K) and give a 2-D result, got 'tensor<2x4x16xf32>' and 'tensor<2x4x3xf32>'}}
  %y = shardlin.linear %x, %w weight_kn layouts replicated -> features : (tensor<2x4x16xf32>, !wn) -> tensor<2x4x3xf32>
  return
}

// -----

!wk = !shardlin.sharded<tensor<10x12xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3], bounds = [0, 4, 4, 8, 10]>>
func.func @features_input_width(%x: tensor<8x4xf32>, %w: !wk) {
  // Uneven K chunks: the rank's K columns are `?`.
  // expected-error@+1 {{a features input's last dim (4) must be the rank's chunk of the weight's dim 0 (K = 10): ?}}
  %y = shardlin.linear %x, %w weight_kn layouts features -> replicated : (tensor<8x4xf32>, !wk) -> tensor<8x12xf32>
  return
}

// -----

!wn = !shardlin.sharded<tensor<16x12xf32>, #shardlin.chunk<dim = 1, placements = [0, 1, 2, 3]>>
func.func @rank0_result(%x: tensor<8x16xf32>, %w: !wn) {
  // expected-error@+1 {{layouts rows -> features take a 2-D input (rows x K) and give a 2-D result, got 'tensor<8x16xf32>' and 'tensor<f32>'}}
  %y = shardlin.linear %x, %w weight_kn layouts rows -> features : (tensor<8x16xf32>, !wn) -> tensor<f32>
  return
}

// -----

!wn = !shardlin.sharded<tensor<16x12xf32>, #shardlin.chunk<dim = 1, placements = [0, 1, 2, 3]>>
func.func @features_result_shape(%x: tensor<8x16xf32>, %w: !wn) {
  // expected-error@+1 {{result shape [8, 12] does not match the expected [8, 3] (of layouts replicated -> features)}}
  %y = shardlin.linear %x, %w weight_kn layouts replicated -> features : (tensor<8x16xf32>, !wn) -> tensor<8x12xf32>
  return
}

// -----

!wk = !shardlin.sharded<tensor<16x12xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3]>>
func.func @rows_result_shape(%x: tensor<8x16xf32>, %w: !wk) {
  // expected-error@+1 {{result shape [8, 12] does not match the expected [2, 12] (of layouts replicated -> rows)}}
  %y = shardlin.linear %x, %w weight_kn layouts replicated -> rows : (tensor<8x16xf32>, !wk) -> tensor<8x12xf32>
  return
}

// -----

!wk = !shardlin.sharded<tensor<16x12xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3]>>
func.func @row_chunks_not_rows(%x: tensor<8x16xf32>, %w: !wk) {
  // expected-error@+1 {{row_chunks applies only where one side holds all rows and the other the rank's chunk (a rows result of a replicated or features input, or rows -> features)}}
  %y = shardlin.linear %x, %w weight_kn layouts replicated -> replicated along <dim = 0, placements = [0, 1, 2, 3]> : (tensor<8x16xf32>, !wk) -> tensor<8x12xf32>
  return
}

// -----

!wk = !shardlin.sharded<tensor<16x12xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3]>>
func.func @row_chunks_dim(%x: tensor<8x16xf32>, %w: !wk) {
  // expected-error@+1 {{row_chunks must split dim 0 (the rows), got dim 1}}
  %y = shardlin.linear %x, %w weight_kn layouts replicated -> rows along <dim = 1, placements = [0, 1, 2, 3]> : (tensor<8x16xf32>, !wk) -> tensor<2x12xf32>
  return
}

// -----

!wk = !shardlin.sharded<tensor<16x12xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3]>>
func.func @row_chunks_ranks(%x: tensor<8x16xf32>, %w: !wk) {
  // expected-error@+1 {{row_chunks has 2 chunks but the weight is split over 4 ranks}}
  %y = shardlin.linear %x, %w weight_kn layouts replicated -> rows along <dim = 0, placements = [0, 1]> : (tensor<8x16xf32>, !wk) -> tensor<4x12xf32>
  return
}

// -----

!wk = !shardlin.sharded<tensor<16x12xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3]>>
func.func @row_chunks_size(%x: tensor<8x16xf32>, %w: !wk) {
  // expected-error@+1 {{the input's rows has 8 elements, but the chunk bounds [0, 3, 6, 9, 10] end at 10}}
  %y = shardlin.linear %x, %w weight_kn layouts replicated -> rows along <dim = 0, placements = [0, 1, 2, 3], bounds = [0, 3, 6, 9, 10]> : (tensor<8x16xf32>, !wk) -> tensor<?x12xf32>
  return
}

// -----

!wn = !shardlin.sharded<tensor<16x12xf32>, #shardlin.chunk<dim = 1, placements = [0, 1, 2, 3]>>
func.func @stacked_rows(%x: tensor<3x16xf32>, %w: !wn) {
  // expected-error@+1 {{the input's 3 rows are not the rank's chunk of the result's 8 rows (2)}}
  %y = shardlin.linear %x, %w weight_kn layouts rows -> features : (tensor<3x16xf32>, !wn) -> tensor<8x3xf32>
  return
}

// -----

!wn = !shardlin.sharded<tensor<16x12xf32>, #shardlin.chunk<dim = 1, placements = [0, 1, 2, 3]>>
func.func @bad_layout_keyword(%x: tensor<8x16xf32>, %w: !wn) {
  // expected-error@+1 {{expected a layout (rows, replicated or features), got 'sharded'}}
  %y = shardlin.linear %x, %w weight_kn layouts sharded -> features : (tensor<8x16xf32>, !wn) -> tensor<8x3xf32>
  return
}

// -----

!wn = !shardlin.sharded<tensor<16x12xf32>, #shardlin.chunk<dim = 1, placements = [0, 1, 2, 3]>>
func.func @kn_k_mismatch(%x: tensor<8x12xf32>, %w: !wn) {
  // expected-error@+1 {{input's last dim (12) must equal the weight's dim 0 (K = 16)}}
  %y = shardlin.linear %x, %w weight_kn : (tensor<8x12xf32>, !wn) -> tensor<8x12xf32>
  return
}

// -----

!wn = !shardlin.sharded<tensor<16x12xf32>, #shardlin.chunk<dim = 1, placements = [0, 1, 2, 3]>>
func.func @kn_bias(%x: tensor<8x16xf32>, %w: !wn, %b: tensor<16xf32>) {
  // expected-error@+1 {{bias size (16) must equal the weight's dim 1 (N = 12)}}
  %y = shardlin.linear %x, %w, %b weight_kn : (tensor<8x16xf32>, !wn, tensor<16xf32>) -> tensor<8x12xf32>
  return
}

// -----

func.func @all_reduce_types(%p: tensor<8x12xf32>) {
  // expected-error@+1 {{failed to verify that all of {input, result} have same type}}
  %s = "shardlin.all_reduce"(%p) {world_size = 4 : i64} : (tensor<8x12xf32>) -> tensor<8x12xf16>
  return
}

// -----

func.func @all_reduce_world(%p: tensor<8x12xf32>) {
  // expected-error@+1 {{attribute 'world_size' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
  %s = shardlin.all_reduce %p world_size = 0 : tensor<8x12xf32>
  return
}

// -----

func.func @from_local_type(%l: tensor<3x16xf32>) {
  // expected-error@+1 {{'shardlin.from_local' op source type 'tensor<3x16xf32>' is not the local chunk type 'tensor<?x16xf32>' of the result}}
  %g = shardlin.from_local %l : tensor<3x16xf32> -> !shardlin.sharded<tensor<10x16xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3]>>
  return
}
