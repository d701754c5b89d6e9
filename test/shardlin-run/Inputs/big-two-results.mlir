// A col-wise layer over W = 2 whose result (128 x 512 f32, 256 KiB) is more
// than a pipe holds (64 KiB), returned twice (two outputs): a reader that
// stops taking data then blocks the writer, or makes it fail with EPIPE.
func.func @main(%x: tensor<128x64xf32>,
                %w: !shardlin.sharded<tensor<512x64xf32>, #shardlin.chunk<dim = 0, placements = [0, 1]>>) -> (tensor<128x512xf32>, tensor<128x512xf32>) {
  %y = shardlin.linear %x, %w : (tensor<128x64xf32>, !shardlin.sharded<tensor<512x64xf32>, #shardlin.chunk<dim = 0, placements = [0, 1]>>) -> tensor<128x512xf32>
  return %y, %y : tensor<128x512xf32>, tensor<128x512xf32>
}
