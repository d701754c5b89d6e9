// Every diagnostic of the import: one located error naming the op or the
// attribute and what is supported; the function is left as it was.

shard.grid @grid2d(shape = 2x4)
func.func @f(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  return %x : tensor<8x16xf32>
}
