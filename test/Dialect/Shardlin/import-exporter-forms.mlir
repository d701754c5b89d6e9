// RUN: shardlin-opt %s -split-input-file --shardlin-import-shard | FileCheck %s
// RUN: shardlin-opt %s -split-input-file --shardlin-import-shard | shardlin-opt -split-input-file --verify-roundtrip > /dev/null
// RUN: shardlin-opt %s -split-input-file --lower-sharded-linear=strategy=activations | FileCheck %s --check-prefix=LOWER

// The forms torch-mlir's FX importer writes for nn.Linear
// (torch_mlir.fx.export_and_import(..., output_type="linalg-on-tensors"),
// PyTorch 2.15; torch-mlir's exports of lin3d, mlp3d, lin2d_bf16 and the like), with
// the shapes made small, the parameters made arguments and the shardings
// added: each linear imports as one shardlin.linear, its transpose, weight
// broadcast, reshapes, bias add and rounding absorbed.

#bw = affine_map<(d0, d1, d2) -> (d1, d2)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#vec3 = affine_map<(d0, d1, d2) -> (d2)>
shard.grid @tp(shape = 4)
// nn.Linear on a 3-D x: batch_matmul of the transposed weight broadcast over
// the batch, the bias by a generic after it. x split along its sequence
// (dim 1), the weight along N = 6 at offsets W = 4 does not divide: one N-D
// rows -> rows linear on the rank's 2 x ? x 8; its lowering gathers every
// rank's rows and sends each its own back.
// CHECK-LABEL: func.func @lin3d_seq
// CHECK-SAME: (%[[X:[a-z0-9_]+]]: !shardlin.sharded<tensor<2x3x8xf32>, #shardlin.chunk<dim = 1, placements = [0, 1, 2, 3]>>, %[[W:[a-z0-9_]+]]: !shardlin.sharded<tensor<6x8xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3], bounds = [0, 4, 4, 6, 6]>>, %[[B:[a-z0-9_]+]]: tensor<6xf32> {shardlin.replicated})
// CHECK-SAME: -> !shardlin.sharded<tensor<2x3x6xf32>, #shardlin.chunk<dim = 1, placements = [0, 1, 2, 3]>>
// CHECK-NEXT: %[[XL:[a-z0-9_]+]] = shardlin.local_shard %[[X]] {{.*}} -> tensor<2x?x8xf32>
// CHECK-NEXT: %[[Y:[a-z0-9_]+]] = shardlin.linear %[[XL]], %[[W]], %[[B]] : {{.*}} -> tensor<2x?x6xf32>
// CHECK-NEXT: %[[R:[a-z0-9_]+]] = shardlin.from_local %[[Y]]
// CHECK-NEXT: return %[[R]]
// LOWER-LABEL: func.func @lin3d_seq
// LOWER: shardlin.all_gather
// LOWER: shardlin.gemm
// LOWER: shardlin.all_to_all
// LOWER-NOT: shardlin.reduce_scatter
// LOWER: return
func.func @lin3d_seq(%arg0: tensor<2x3x8xf32>, %w: tensor<6x8xf32>, %cst_1: tensor<6xf32>) -> tensor<2x3x6xf32> {
  %sx = shard.sharding @tp split_axes = [[], [0]] sharded_dims_offsets = [0, 1, 2, 3, 3] : !shard.sharding
  %x = shard.shard %arg0 to %sx : tensor<2x3x8xf32>
  %sw = shard.sharding @tp split_axes = [[0]] sharded_dims_offsets = [0, 4, 4, 6, 6] : !shard.sharding
  %cst_0 = shard.shard %w to %sw : tensor<6x8xf32>
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<8x6xf32>
  %transposed = linalg.transpose ins(%cst_0 : tensor<6x8xf32>) outs(%0 : tensor<8x6xf32>) permutation = [1, 0]
  %1 = tensor.empty() : tensor<2x8x6xf32>
  %2 = linalg.generic {indexing_maps = [#bw, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%transposed : tensor<8x6xf32>) outs(%1 : tensor<2x8x6xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<2x8x6xf32>
  %3 = tensor.empty() : tensor<2x3x6xf32>
  %4 = linalg.fill ins(%cst : f32) outs(%3 : tensor<2x3x6xf32>) -> tensor<2x3x6xf32>
  %5 = linalg.batch_matmul ins(%x, %2 : tensor<2x3x8xf32>, tensor<2x8x6xf32>) outs(%4 : tensor<2x3x6xf32>) -> tensor<2x3x6xf32>
  %6 = linalg.generic {indexing_maps = [#id3, #vec3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%5, %cst_1 : tensor<2x3x6xf32>, tensor<6xf32>) outs(%3 : tensor<2x3x6xf32>) {
  ^bb0(%in: f32, %in_2: f32, %out: f32):
    %7 = arith.addf %in, %in_2 : f32
    linalg.yield %7 : f32
  } -> tensor<2x3x6xf32>
  return %6 : tensor<2x3x6xf32>
}

// -----

#bw = affine_map<(d0, d1, d2) -> (d1, d2)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#vec3 = affine_map<(d0, d1, d2) -> (d2)>
shard.grid @tp(shape = 4)
// x replicated, the weight split along K: the 2-D linear on all 6 rows
// between a collapse and an expand (rank-local), replicated -> replicated,
// one all_reduce.
// CHECK-LABEL: func.func @lin3d_rep_row
// CHECK-SAME: (%[[X:[a-z0-9_]+]]: tensor<2x3x8xf32> {shardlin.replicated}, %[[W:[a-z0-9_]+]]: !shardlin.sharded<tensor<6x8xf32>, #shardlin.chunk<dim = 1, placements = [0, 1, 2, 3]>>, %[[B:[a-z0-9_]+]]: tensor<6xf32> {shardlin.replicated}) -> tensor<2x3x6xf32>
// CHECK-NEXT: %[[C:[a-z0-9_]+]] = tensor.collapse_shape %[[X]] {{\[\[}}0, 1], [2]] : tensor<2x3x8xf32> into tensor<6x8xf32>
// CHECK-NEXT: %[[Y:[a-z0-9_]+]] = shardlin.linear %[[C]], %[[W]], %[[B]] layouts replicated -> replicated : {{.*}} -> tensor<6x6xf32>
// CHECK-NEXT: %[[E:[a-z0-9_]+]] = tensor.expand_shape %[[Y]] {{\[\[}}0, 1], [2]] output_shape [2, 3, 6] : tensor<6x6xf32> into tensor<2x3x6xf32>
// CHECK-NEXT: return %[[E]]
// LOWER-LABEL: func.func @lin3d_rep_row
// LOWER-NOT: shardlin.all_gather
// LOWER: shardlin.all_reduce
// LOWER-NOT: shardlin.all_gather
// LOWER: return
func.func @lin3d_rep_row(%arg0: tensor<2x3x8xf32>, %w: tensor<6x8xf32>, %cst_1: tensor<6xf32>) -> tensor<2x3x6xf32> {
  %sw = shard.sharding @tp split_axes = [[], [0]] : !shard.sharding
  %cst_0 = shard.shard %w to %sw : tensor<6x8xf32>
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<8x6xf32>
  %transposed = linalg.transpose ins(%cst_0 : tensor<6x8xf32>) outs(%0 : tensor<8x6xf32>) permutation = [1, 0]
  %1 = tensor.empty() : tensor<2x8x6xf32>
  %2 = linalg.generic {indexing_maps = [#bw, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%transposed : tensor<8x6xf32>) outs(%1 : tensor<2x8x6xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<2x8x6xf32>
  %3 = tensor.empty() : tensor<2x3x6xf32>
  %4 = linalg.fill ins(%cst : f32) outs(%3 : tensor<2x3x6xf32>) -> tensor<2x3x6xf32>
  %5 = linalg.batch_matmul ins(%arg0, %2 : tensor<2x3x8xf32>, tensor<2x8x6xf32>) outs(%4 : tensor<2x3x6xf32>) -> tensor<2x3x6xf32>
  %6 = linalg.generic {indexing_maps = [#id3, #vec3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%5, %cst_1 : tensor<2x3x6xf32>, tensor<6xf32>) outs(%3 : tensor<2x3x6xf32>) {
  ^bb0(%in: f32, %in_2: f32, %out: f32):
    %7 = arith.addf %in, %in_2 : f32
    linalg.yield %7 : f32
  } -> tensor<2x3x6xf32>
  return %6 : tensor<2x3x6xf32>
}

// -----

#bw4 = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#vec4 = affine_map<(d0, d1, d2, d3) -> (d3)>
shard.grid @tp(shape = 4)
// A 4-D x: the exporter collapses its two leading dims and the broadcast
// weight's into one batch and expands the result after. x split along its
// batch (dim 0), the weight along N: one 4-D linear, no reshape left.
// CHECK-LABEL: func.func @lin4d_batch
// CHECK-NEXT: %[[XL:[a-z0-9_]+]] = shardlin.local_shard {{.*}} -> tensor<?x3x5x8xf32>
// CHECK-NEXT: %[[Y:[a-z0-9_]+]] = shardlin.linear %[[XL]], %{{.*}}, %{{.*}} : (tensor<?x3x5x8xf32>, {{.*}}) -> tensor<?x3x5x6xf32>
// CHECK-NEXT: shardlin.from_local %[[Y]]
// CHECK-NOT: tensor.
// CHECK-NOT: linalg.
// CHECK: return
func.func @lin4d_batch(%arg0: tensor<2x3x5x8xf32>, %w: tensor<6x8xf32>, %cst_1: tensor<6xf32>) -> tensor<2x3x5x6xf32> {
  %sx = shard.sharding @tp split_axes = [[0]] sharded_dims_offsets = [0, 1, 1, 2, 2] : !shard.sharding
  %x = shard.shard %arg0 to %sx : tensor<2x3x5x8xf32>
  %sw = shard.sharding @tp split_axes = [[0]] sharded_dims_offsets = [0, 2, 4, 6, 6] : !shard.sharding
  %cst_0 = shard.shard %w to %sw : tensor<6x8xf32>
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<8x6xf32>
  %transposed = linalg.transpose ins(%cst_0 : tensor<6x8xf32>) outs(%0 : tensor<8x6xf32>) permutation = [1, 0]
  %1 = tensor.empty() : tensor<2x3x8x6xf32>
  %2 = linalg.generic {indexing_maps = [#bw4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%transposed : tensor<8x6xf32>) outs(%1 : tensor<2x3x8x6xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<2x3x8x6xf32>
  %collapsed = tensor.collapse_shape %x [[0, 1], [2], [3]] : tensor<2x3x5x8xf32> into tensor<6x5x8xf32>
  %collapsed_2 = tensor.collapse_shape %2 [[0, 1], [2], [3]] : tensor<2x3x8x6xf32> into tensor<6x8x6xf32>
  %3 = tensor.empty() : tensor<6x5x6xf32>
  %4 = linalg.fill ins(%cst : f32) outs(%3 : tensor<6x5x6xf32>) -> tensor<6x5x6xf32>
  %5 = linalg.batch_matmul ins(%collapsed, %collapsed_2 : tensor<6x5x8xf32>, tensor<6x8x6xf32>) outs(%4 : tensor<6x5x6xf32>) -> tensor<6x5x6xf32>
  %expanded = tensor.expand_shape %5 [[0, 1], [2], [3]] output_shape [2, 3, 5, 6] : tensor<6x5x6xf32> into tensor<2x3x5x6xf32>
  %6 = tensor.empty() : tensor<2x3x5x6xf32>
  %7 = linalg.generic {indexing_maps = [#id4, #vec4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded, %cst_1 : tensor<2x3x5x6xf32>, tensor<6xf32>) outs(%6 : tensor<2x3x5x6xf32>) {
  ^bb0(%in: f32, %in_3: f32, %out: f32):
    %8 = arith.addf %in, %in_3 : f32
    linalg.yield %8 : f32
  } -> tensor<2x3x5x6xf32>
  return %7 : tensor<2x3x5x6xf32>
}

// -----

shard.grid @tp(shape = 2)
// MLIR 22's own broadcast: batch_matmul whose indexing_maps read one K x N
// weight for every batch ((d3, d2)); x replicated, the weight split along N:
// replicated -> features, the result split along its last dim.
// CHECK-LABEL: func.func @bmm_broadcast_maps
// CHECK: tensor.collapse_shape
// CHECK-NEXT: %[[Y:[a-z0-9_]+]] = shardlin.linear %{{.*}}, %{{.*}} weight_kn layouts replicated -> features : (tensor<6x8xf32>, !shardlin.sharded<tensor<8x6xf32>, #shardlin.chunk<dim = 1, placements = [0, 1]>>) -> tensor<6x3xf32>
// CHECK-NEXT: tensor.expand_shape %[[Y]] {{.*}} into tensor<2x3x3xf32>
// CHECK-NOT: linalg.
func.func @bmm_broadcast_maps(%x: tensor<2x3x8xf32>, %w: tensor<8x6xf32>) -> tensor<2x3x6xf32> {
  %sw = shard.sharding @tp split_axes = [[], [0]] : !shard.sharding
  %ws = shard.shard %w to %sw : tensor<8x6xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x3x6xf32>
  %i = linalg.fill ins(%zero : f32) outs(%e : tensor<2x3x6xf32>) -> tensor<2x3x6xf32>
  %y = linalg.batch_matmul indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d3, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>]
      ins(%x, %ws : tensor<2x3x8xf32>, tensor<8x6xf32>) outs(%i : tensor<2x3x6xf32>) -> tensor<2x3x6xf32>
  return %y : tensor<2x3x6xf32>
}

// -----

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#vec2 = affine_map<(d0, d1) -> (d1)>
shard.grid @tp(shape = 4)
// bf16 as exported: the matmul of bf16 operands into a zero f32 init and the
// generic that rounds it with arith.truncf are one bf16 linear (f32
// accumulation, one rounding); the bias, added to the rounded product in
// bf16 by a generic of its own, stays that bf16 add on the rank's rows.
// CHECK-LABEL: func.func @lin2d_bf16
// CHECK: %[[Y:[a-z0-9_]+]] = shardlin.linear %{{.*}}, %{{.*}} : (tensor<?x8xbf16>, !shardlin.sharded<tensor<6x8xbf16>, #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3], bounds = [0, 3, 3, 6, 6]>>) -> tensor<?x6xbf16>
// CHECK-NOT: arith.truncf
// CHECK: linalg.generic {{.*}} ins(%[[Y]], %{{.*}} : tensor<?x6xbf16>, tensor<6xbf16>)
// CHECK-NEXT: ^bb0(%{{.*}}: bf16, %{{.*}}: bf16, %{{.*}}: bf16):
// CHECK-NEXT: arith.addf %{{.*}}, %{{.*}} : bf16
// CHECK-NOT: f32
// CHECK: return
// LOWER-LABEL: func.func @lin2d_bf16
// LOWER: shardlin.all_gather
// LOWER: shardlin.gemm
// LOWER: shardlin.all_to_all
// LOWER: linalg.generic
// LOWER: arith.addf {{.*}} : bf16
func.func @lin2d_bf16(%arg0: tensor<6x8xbf16>, %w: tensor<6x8xbf16>, %cst_1: tensor<6xbf16>) -> tensor<6x6xbf16> {
  %sx = shard.sharding @tp split_axes = [[0]] sharded_dims_offsets = [0, 2, 3, 3, 6] : !shard.sharding
  %x = shard.shard %arg0 to %sx : tensor<6x8xbf16>
  %sw = shard.sharding @tp split_axes = [[0]] sharded_dims_offsets = [0, 3, 3, 6, 6] : !shard.sharding
  %cst_0 = shard.shard %w to %sw : tensor<6x8xbf16>
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<8x6xbf16>
  %transposed = linalg.transpose ins(%cst_0 : tensor<6x8xbf16>) outs(%0 : tensor<8x6xbf16>) permutation = [1, 0]
  %1 = tensor.empty() : tensor<6x6xf32>
  %2 = linalg.fill ins(%cst : f32) outs(%1 : tensor<6x6xf32>) -> tensor<6x6xf32>
  %3 = linalg.matmul ins(%x, %transposed : tensor<6x8xbf16>, tensor<8x6xbf16>) outs(%2 : tensor<6x6xf32>) -> tensor<6x6xf32>
  %4 = tensor.empty() : tensor<6x6xbf16>
  %5 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%3 : tensor<6x6xf32>) outs(%4 : tensor<6x6xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %7 = arith.truncf %in : f32 to bf16
    linalg.yield %7 : bf16
  } -> tensor<6x6xbf16>
  %6 = linalg.generic {indexing_maps = [#id2, #vec2, #id2], iterator_types = ["parallel", "parallel"]} ins(%5, %cst_1 : tensor<6x6xbf16>, tensor<6xbf16>) outs(%4 : tensor<6x6xbf16>) {
  ^bb0(%in: bf16, %in_2: bf16, %out: bf16):
    %7 = arith.addf %in, %in_2 : bf16
    linalg.yield %7 : bf16
  } -> tensor<6x6xbf16>
  return %6 : tensor<6x6xbf16>
}

// -----

#bw = affine_map<(d0, d1, d2) -> (d1, d2)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
shard.grid @tp(shape = 2)
// f16 in the 3-D form: batch_matmul into f32, its truncf generic; the
// weight split along K and x along its sequence: one f16 rows -> rows
// linear, partial sums reduced in f32.
// CHECK-LABEL: func.func @lin3d_f16
// CHECK: shardlin.linear %{{.*}}, %{{.*}} : (tensor<2x2x8xf16>, !shardlin.sharded<tensor<6x8xf16>, #shardlin.chunk<dim = 1, placements = [0, 1]>>) -> tensor<2x2x6xf16>
// CHECK-NOT: linalg.
// CHECK: return
// LOWER-LABEL: func.func @lin3d_f16
// LOWER: shardlin.gemm {{.*}} -> tensor<{{.*}}xf32>
// LOWER: shardlin.reduce_scatter {{.*}} -> tensor<{{.*}}xf32>
func.func @lin3d_f16(%arg0: tensor<2x4x8xf16>, %w: tensor<6x8xf16>) -> tensor<2x4x6xf16> {
  %sx = shard.sharding @tp split_axes = [[], [0]] : !shard.sharding
  %x = shard.shard %arg0 to %sx : tensor<2x4x8xf16>
  %sw = shard.sharding @tp split_axes = [[], [0]] : !shard.sharding
  %cst_0 = shard.shard %w to %sw : tensor<6x8xf16>
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<8x6xf16>
  %transposed = linalg.transpose ins(%cst_0 : tensor<6x8xf16>) outs(%0 : tensor<8x6xf16>) permutation = [1, 0]
  %1 = tensor.empty() : tensor<2x8x6xf16>
  %2 = linalg.generic {indexing_maps = [#bw, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%transposed : tensor<8x6xf16>) outs(%1 : tensor<2x8x6xf16>) {
  ^bb0(%in: f16, %out: f16):
    linalg.yield %in : f16
  } -> tensor<2x8x6xf16>
  %3 = tensor.empty() : tensor<2x4x6xf32>
  %4 = linalg.fill ins(%cst : f32) outs(%3 : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %5 = linalg.batch_matmul ins(%x, %2 : tensor<2x4x8xf16>, tensor<2x8x6xf16>) outs(%4 : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %6 = tensor.empty() : tensor<2x4x6xf16>
  %7 = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%5 : tensor<2x4x6xf32>) outs(%6 : tensor<2x4x6xf16>) {
  ^bb0(%in: f32, %out: f16):
    %9 = arith.truncf %in : f32 to f16
    linalg.yield %9 : f16
  } -> tensor<2x4x6xf16>
  return %7 : tensor<2x4x6xf16>
}

// -----

#bw = affine_map<(d0, d1, d2) -> (d1, d2)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
shard.grid @tp(shape = 2)
// A replicated weight: a rank-local linalg.matmul on the rank's rows of x
// (its sequence chunk), between a collapse and an expand.
// CHECK-LABEL: func.func @local_weight
// CHECK: %[[XL:[a-z0-9_]+]] = shardlin.local_shard {{.*}} -> tensor<2x2x8xf32>
// CHECK-NEXT: %[[C:[a-z0-9_]+]] = tensor.collapse_shape %[[XL]] {{\[\[}}0, 1], [2]] : tensor<2x2x8xf32> into tensor<4x8xf32>
// CHECK: %[[F:[a-z0-9_]+]] = linalg.fill {{.*}} -> tensor<4x6xf32>
// CHECK-NEXT: %[[M:[a-z0-9_]+]] = linalg.matmul indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}] ins(%[[C]], %{{.*}} : tensor<4x8xf32>, tensor<6x8xf32>) outs(%[[F]] : tensor<4x6xf32>)
// CHECK-NEXT: tensor.expand_shape %[[M]] {{.*}} into tensor<2x2x6xf32>
func.func @local_weight(%arg0: tensor<2x4x8xf32>, %w: tensor<6x8xf32>) -> tensor<2x4x6xf32> {
  %sx = shard.sharding @tp split_axes = [[], [0]] : !shard.sharding
  %x = shard.shard %arg0 to %sx : tensor<2x4x8xf32>
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<8x6xf32>
  %transposed = linalg.transpose ins(%w : tensor<6x8xf32>) outs(%0 : tensor<8x6xf32>) permutation = [1, 0]
  %1 = tensor.empty() : tensor<2x8x6xf32>
  %2 = linalg.generic {indexing_maps = [#bw, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%transposed : tensor<8x6xf32>) outs(%1 : tensor<2x8x6xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<2x8x6xf32>
  %3 = tensor.empty() : tensor<2x4x6xf32>
  %4 = linalg.fill ins(%cst : f32) outs(%3 : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %5 = linalg.batch_matmul ins(%x, %2 : tensor<2x4x8xf32>, tensor<2x8x6xf32>) outs(%4 : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  return %5 : tensor<2x4x6xf32>
}

// -----

shard.grid @tp(shape = 2)
// An elementwise op on an activation split along a middle dim (the
// sequence of B x S x H): rank-local, the split kept.
// CHECK-LABEL: func.func @middle_dim
// CHECK: %[[XL:[a-z0-9_]+]] = shardlin.local_shard {{.*}} -> tensor<2x2x8xf32>
// CHECK-NEXT: %[[E:[a-z0-9_]+]] = math.exp %[[XL]] : tensor<2x2x8xf32>
// CHECK-NEXT: shardlin.from_local %[[E]] : tensor<2x2x8xf32> -> !shardlin.sharded<tensor<2x4x8xf32>, #shardlin.chunk<dim = 1, placements = [0, 1]>>
func.func @middle_dim(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %s = shard.sharding @tp split_axes = [[], [0]] : !shard.sharding
  %xs = shard.shard %x to %s : tensor<2x4x8xf32>
  %y = math.exp %xs : tensor<2x4x8xf32>
  return %y : tensor<2x4x8xf32>
}

// -----

#bw = affine_map<(d0, d1, d2) -> (d1, d2)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
shard.grid @tp(shape = 2)
// The N x K weight broadcast as it is stored and read transposed by the
// batch_matmul's maps ((d0, d2, d3)): the same linear, without weight_kn.
// CHECK-LABEL: func.func @bmm_transposed_maps
// CHECK: shardlin.linear %{{.*}}, %{{.*}} : (tensor<1x3x8xf32>, !shardlin.sharded<tensor<6x8xf32>, #shardlin.chunk<dim = 0, placements = [0, 1]>>) -> tensor<1x3x6xf32>
// CHECK-NOT: linalg.
// CHECK: return
func.func @bmm_transposed_maps(%arg0: tensor<2x3x8xf32>, %w: tensor<6x8xf32>) -> tensor<2x3x6xf32> {
  %sx = shard.sharding @tp split_axes = [[0]] : !shard.sharding
  %x = shard.shard %arg0 to %sx : tensor<2x3x8xf32>
  %sw = shard.sharding @tp split_axes = [[0]] : !shard.sharding
  %ws = shard.shard %w to %sw : tensor<6x8xf32>
  %e0 = tensor.empty() : tensor<2x6x8xf32>
  %wb = linalg.generic {indexing_maps = [#bw, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%ws : tensor<6x8xf32>) outs(%e0 : tensor<2x6x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<2x6x8xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x3x6xf32>
  %i = linalg.fill ins(%zero : f32) outs(%e : tensor<2x3x6xf32>) -> tensor<2x3x6xf32>
  %y = linalg.batch_matmul indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>]
      ins(%x, %wb : tensor<2x3x8xf32>, tensor<2x6x8xf32>) outs(%i : tensor<2x3x6xf32>) -> tensor<2x3x6xf32>
  return %y : tensor<2x3x6xf32>
}
