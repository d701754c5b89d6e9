shard.grid @grid(shape = 2)
// Nothing annotated: everything replicated, the function unchanged but
// for the grid.
func.func @unannotated(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = math.exp %x : tensor<4xf32>
  return %y : tensor<4xf32>
}
