// RUN: shardlin-opt %s -split-input-file --lower-sharded-linear | FileCheck %s

// The exact rewrites of lowered collectives that --lower-sharded-linear
// applies last (SimplifyCollectives.cpp; docs/lowering.md, "Simplifying the
// collectives"), on lowered IR directly, and where each does not apply.

// An all_reduce whose users all take the rank's chunk of one spec is a
// reduce_scatter of that spec: uneven bounds with an empty chunk.
// CHECK-LABEL: func.func @all_reduce_then_chunk
// CHECK-NEXT: %[[R:.*]] = shardlin.reduce_scatter %arg0 along <dim = 0, placements = [1, 0, 2, 3], bounds = [0, 4, 4, 8, 10]> : tensor<10x6xf32> -> tensor<?x6xf32>
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[R]], %[[R]] : tensor<?x6xf32>
// CHECK-NEXT: return %[[S]]
func.func @all_reduce_then_chunk(%p: tensor<10x6xf32>) -> tensor<?x6xf32> {
  %s = shardlin.all_reduce %p world_size = 4 : tensor<10x6xf32>
  %a = shardlin.local_chunk %s along <dim = 0, placements = [1, 0, 2, 3], bounds = [0, 4, 4, 8, 10]> : tensor<10x6xf32> -> tensor<?x6xf32>
  %b = shardlin.local_chunk %s along <dim = 0, placements = [1, 0, 2, 3], bounds = [0, 4, 4, 8, 10]> : tensor<10x6xf32> -> tensor<?x6xf32>
  %c = arith.addf %a, %b : tensor<?x6xf32>
  return %c : tensor<?x6xf32>
}

// -----

// Not when the whole sum is used too, the chunks differ, or they are not
// the rows.
// CHECK-LABEL: func.func @all_reduce_kept
// CHECK: shardlin.all_reduce
// CHECK: shardlin.local_chunk
// CHECK: shardlin.all_reduce
// CHECK: shardlin.local_chunk
// CHECK: shardlin.local_chunk
// CHECK-NOT: shardlin.reduce_scatter
func.func @all_reduce_kept(%p: tensor<10x6xf32>) -> (tensor<?x6xf32>, tensor<10x6xf32>, tensor<?x6xf32>, tensor<?x6xf32>) {
  %s = shardlin.all_reduce %p world_size = 4 : tensor<10x6xf32>
  %a = shardlin.local_chunk %s along <dim = 0, placements = [0, 1, 2, 3]> : tensor<10x6xf32> -> tensor<?x6xf32>
  %t = shardlin.all_reduce %s world_size = 4 : tensor<10x6xf32>
  %b = shardlin.local_chunk %t along <dim = 0, placements = [0, 1, 2, 3]> : tensor<10x6xf32> -> tensor<?x6xf32>
  %c = shardlin.local_chunk %t along <dim = 0, placements = [1, 0, 2, 3]> : tensor<10x6xf32> -> tensor<?x6xf32>
  return %a, %s, %b, %c : tensor<?x6xf32>, tensor<10x6xf32>, tensor<?x6xf32>, tensor<?x6xf32>
}

// -----

// CHECK-LABEL: func.func @all_reduce_features_kept
// CHECK: shardlin.all_reduce
// CHECK: shardlin.local_chunk
// CHECK-NOT: shardlin.reduce_scatter
func.func @all_reduce_features_kept(%p: tensor<10x8xf32>) -> tensor<10x2xf32> {
  %s = shardlin.all_reduce %p world_size = 4 : tensor<10x8xf32>
  %a = shardlin.local_chunk %s along <dim = 1, placements = [0, 1, 2, 3]> : tensor<10x8xf32> -> tensor<10x2xf32>
  return %a : tensor<10x2xf32>
}

// -----

// The rank's chunk of a gather of the same chunks is the rank's own part:
// a split bias gathered for the linear and chunked again.
// CHECK-LABEL: func.func @chunk_of_gather
// CHECK-NEXT: %[[B:.*]] = shardlin.local_shard %arg0
// CHECK-NEXT: return %[[B]]
func.func @chunk_of_gather(%b: !shardlin.sharded<tensor<38xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3], bounds = [0, 10, 20, 29, 38]>>) -> tensor<?xf32> {
  %l = shardlin.local_shard %b : !shardlin.sharded<tensor<38xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3], bounds = [0, 10, 20, 29, 38]>> -> tensor<?xf32>
  %g = shardlin.all_gather %l along <dim = 0, placements = [0, 1, 2, 3], bounds = [0, 10, 20, 29, 38]> : tensor<?xf32> -> tensor<38xf32>
  %c = shardlin.local_chunk %g along <dim = 0, placements = [0, 1, 2, 3], bounds = [0, 10, 20, 29, 38]> : tensor<38xf32> -> tensor<?xf32>
  return %c : tensor<?xf32>
}

// -----

// Not for other chunks (the ceil rule is [0, 10, 20, 30, 38]), nor along
// another dim.
// CHECK-LABEL: func.func @chunk_of_gather_kept
// CHECK: shardlin.all_gather
// CHECK: shardlin.local_chunk
// CHECK: shardlin.all_gather
// CHECK: shardlin.local_chunk
func.func @chunk_of_gather_kept(%l: tensor<?xf32>, %r: tensor<2x8xf32>) -> (tensor<?xf32>, tensor<8x2xf32>) {
  %g = shardlin.all_gather %l along <dim = 0, placements = [0, 1, 2, 3], bounds = [0, 10, 20, 29, 38]> : tensor<?xf32> -> tensor<38xf32>
  %c = shardlin.local_chunk %g along <dim = 0, placements = [0, 1, 2, 3]> : tensor<38xf32> -> tensor<?xf32>
  %h = shardlin.all_gather %r along <dim = 0, placements = [0, 1, 2, 3]> : tensor<2x8xf32> -> tensor<8x8xf32>
  %d = shardlin.local_chunk %h along <dim = 1, placements = [0, 1, 2, 3]> : tensor<8x8xf32> -> tensor<8x2xf32>
  return %c, %d : tensor<?xf32>, tensor<8x2xf32>
}

// -----

// Gathering the chunks of a replicated value gives it back; of a rank-local
// one (each rank its own %r), it does not.
// CHECK-LABEL: func.func @gather_of_chunk
// CHECK-SAME: (%[[B:.*]]: tensor<38xf32> {shardlin.replicated}, %[[R:.*]]: tensor<38xf32>)
// CHECK-NEXT: %[[C:.*]] = shardlin.local_chunk %[[R]]
// CHECK-NEXT: %[[G:.*]] = shardlin.all_gather %[[C]]
// CHECK-NEXT: return %[[B]], %[[G]]
func.func @gather_of_chunk(%b: tensor<38xf32> {shardlin.replicated}, %r: tensor<38xf32>) -> (tensor<38xf32>, tensor<38xf32>) {
  %c = shardlin.local_chunk %b along <dim = 0, placements = [2, 0, 1, 3], bounds = [0, 10, 20, 29, 38]> : tensor<38xf32> -> tensor<?xf32>
  %g = shardlin.all_gather %c along <dim = 0, placements = [2, 0, 1, 3], bounds = [0, 10, 20, 29, 38]> : tensor<?xf32> -> tensor<38xf32>
  %d = shardlin.local_chunk %r along <dim = 0, placements = [2, 0, 1, 3], bounds = [0, 10, 20, 29, 38]> : tensor<38xf32> -> tensor<?xf32>
  %h = shardlin.all_gather %d along <dim = 0, placements = [2, 0, 1, 3], bounds = [0, 10, 20, 29, 38]> : tensor<?xf32> -> tensor<38xf32>
  return %g, %h : tensor<38xf32>, tensor<38xf32>
}

// -----

// Two gathers of one value (two col-wise linears on one x) are one; a
// gather along another spec stays.
// CHECK-LABEL: func.func @duplicates
// CHECK-NEXT: %[[G:.*]] = shardlin.all_gather %arg0 along <dim = 0, placements = [0, 1, 2, 3]>
// CHECK-NEXT: %[[H:.*]] = shardlin.all_gather %arg0 along <dim = 0, placements = [1, 0, 2, 3]>
// CHECK-NEXT: %[[A:.*]] = arith.addf %[[G]], %[[G]]
// CHECK-NEXT: %[[B:.*]] = arith.addf %[[A]], %[[H]]
func.func @duplicates(%x: tensor<3x8xf32>) -> tensor<12x8xf32> {
  %g = shardlin.all_gather %x along <dim = 0, placements = [0, 1, 2, 3]> : tensor<3x8xf32> -> tensor<12x8xf32>
  %h = shardlin.all_gather %x along <dim = 0, placements = [1, 0, 2, 3]> : tensor<3x8xf32> -> tensor<12x8xf32>
  %k = shardlin.all_gather %x along <dim = 0, placements = [0, 1, 2, 3]> : tensor<3x8xf32> -> tensor<12x8xf32>
  %a = arith.addf %g, %k : tensor<12x8xf32>
  %b = arith.addf %a, %h : tensor<12x8xf32>
  return %b : tensor<12x8xf32>
}

// -----

// A fused block's all_gather that starts an overlapped pipeline
// (overlap_chunks, read by the runtime) is left as it is.
// CHECK-LABEL: func.func @pinned
// CHECK: shardlin.all_gather %arg0 {{.*}}overlap_chunks = 2
// CHECK: shardlin.all_gather %arg0 {{.*}}overlap_chunks = 2
func.func @pinned(%x: tensor<3x8xf32>) -> tensor<12x8xf32> {
  %g = shardlin.all_gather %x along <dim = 0, placements = [0, 1, 2, 3]> {shardlin.lowering = {overlap_chunks = 2 : i64, strategy = "fused"}} : tensor<3x8xf32> -> tensor<12x8xf32>
  %k = shardlin.all_gather %x along <dim = 0, placements = [0, 1, 2, 3]> {shardlin.lowering = {overlap_chunks = 2 : i64, strategy = "fused"}} : tensor<3x8xf32> -> tensor<12x8xf32>
  %a = arith.addf %g, %k : tensor<12x8xf32>
  return %a : tensor<12x8xf32>
}

// -----

// An N-D x collapsed to rows by each of two col-wise linears: one collapse,
// one gather.
// CHECK-LABEL: func.func @duplicates_nd
// CHECK-NEXT: %[[C:.*]] = tensor.collapse_shape %arg0
// CHECK-NEXT: %[[G:.*]] = shardlin.all_gather %[[C]]
// CHECK-NEXT: %[[A:.*]] = arith.addf %[[G]], %[[G]]
// CHECK-NEXT: return %[[A]]
func.func @duplicates_nd(%x: tensor<2x3x8xf32>) -> tensor<24x8xf32> {
  %c1 = tensor.collapse_shape %x [[0, 1], [2]] : tensor<2x3x8xf32> into tensor<6x8xf32>
  %g = shardlin.all_gather %c1 along <dim = 0, placements = [0, 1, 2, 3]> : tensor<6x8xf32> -> tensor<24x8xf32>
  %c2 = tensor.collapse_shape %x [[0, 1], [2]] : tensor<2x3x8xf32> into tensor<6x8xf32>
  %k = shardlin.all_gather %c2 along <dim = 0, placements = [0, 1, 2, 3]> : tensor<6x8xf32> -> tensor<24x8xf32>
  %a = arith.addf %g, %k : tensor<24x8xf32>
  return %a : tensor<24x8xf32>
}
