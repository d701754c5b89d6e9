// W = 1 has no strategy to choose: one local GEMM.
// AUTO-LABEL: func.func @single
// AUTO: shardlin.gemm {{.*}} {shardlin.lowering = {strategy = "local"}}
func.func @single(%x: tensor<5x19xf64>, %w: !shardlin.sharded<tensor<11x19xf64>, #shardlin.chunk<dim = 0, placements = [0]>>) -> tensor<5x11xf64> {
  %y = shardlin.linear %x, %w : (tensor<5x19xf64>, !shardlin.sharded<tensor<11x19xf64>, #shardlin.chunk<dim = 0, placements = [0]>>) -> tensor<5x11xf64>
  return %y : tensor<5x11xf64>
}
