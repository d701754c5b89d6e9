// A fused MLP block over W = 4 (an all_gather, the row-local GEMMs and
// ReLU, a reduce_scatter): what --overlap-chunks pipelines, for
// agreement-mpi.test.
!w1 = !shardlin.sharded<tensor<40x16xbf16>, #shardlin.chunk<dim = 0, placements = [3, 1, 0, 2]>>
!w2 = !shardlin.sharded<tensor<12x40xbf16>, #shardlin.chunk<dim = 1, placements = [3, 1, 0, 2]>>
func.func @main(%x: tensor<7x16xbf16>, %w1: !w1, %w2: !w2) -> tensor<7x12xbf16> {
  %h = shardlin.linear %x, %w1 : (tensor<7x16xbf16>, !w1) -> tensor<7x40xbf16>
  %zero = arith.constant dense<0.0> : tensor<7x40xbf16>
  %a = arith.maximumf %h, %zero : tensor<7x40xbf16>
  %y = shardlin.linear %a, %w2 : (tensor<7x40xbf16>, !w2) -> tensor<7x12xbf16>
  return %y : tensor<7x12xbf16>
}
