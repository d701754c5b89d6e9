// Col-wise gather: chunks are rows of A, gathered along dim 0.
// GATHER-LABEL: func.func @col_small
// GATHER: %[[A:.*]] = shardlin.local_shard {{.*}} -> tensor<?x19xbf16>
// GATHER-NEXT: %[[FULL:.*]] = shardlin.all_gather %[[A]] along <dim = 0, placements = [1, 0, 2]> : tensor<?x19xbf16> -> tensor<11x19xbf16>
// GATHER-NEXT: shardlin.gemm %{{.*}}, %[[FULL]] transpose_rhs {shardlin.lowering = {{{.*}}strategy = "gather-weight"}}
// GATHER-NOT: shardlin.all_to_all
// GATHER-NOT: shardlin.reduce_scatter
// GATHER: return
func.func @col_small(%x: tensor<2x3x19xbf16>, %w: !shardlin.sharded<tensor<11x19xbf16>, #shardlin.chunk<dim = 0, placements = [1, 0, 2]>>) -> tensor<2x3x11xbf16> {
  %y = shardlin.linear %x, %w : (tensor<2x3x19xbf16>, !shardlin.sharded<tensor<11x19xbf16>, #shardlin.chunk<dim = 0, placements = [1, 0, 2]>>) -> tensor<2x3x11xbf16>
  return %y : tensor<2x3x11xbf16>
}
