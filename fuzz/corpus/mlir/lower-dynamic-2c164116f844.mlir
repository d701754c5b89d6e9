// W = 1: one GEMM on the dynamic rows, no cost model.
func.func @single_rank(%x: tensor<?x19xf64>, %w: !shardlin.sharded<tensor<11x19xf64>, #shardlin.chunk<dim = 0, placements = [0]>>) -> tensor<?x11xf64> {
  %y = shardlin.linear %x, %w : (tensor<?x19xf64>, !shardlin.sharded<tensor<11x19xf64>, #shardlin.chunk<dim = 0, placements = [0]>>) -> tensor<?x11xf64>
  return %y : tensor<?x11xf64>
}
