// The AOT example's model (examples/aot/README-less: see CMakeLists.txt and
// main.c): a sharded linear layer y = x A^T + b, its weight A (11 x 19)
// split along K over 4 ranks in uneven chunks (5, 5, 5, 4) held by ranks 2,
// 3, 0, 1, followed by a softmax over each row of y, an upstream op the plan
// executor does not run. `shardlin-opt --shardlin-lower-to-llvm` turns it
// into the LLVM dialect with an entry `_mlir_ciface_layer` and the
// collectives as calls of the runtime's C ABI.
func.func @layer(%x: tensor<5x19xf32>,
    %w: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [2, 3, 0, 1]>>,
    %b: tensor<11xf32>) -> tensor<5x11xf32> {
  %y = shardlin.linear %x, %w, %b : (tensor<5x19xf32>, !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [2, 3, 0, 1]>>, tensor<11xf32>) -> tensor<5x11xf32>
  %e = tensor.empty() : tensor<5x11xf32>
  %s = linalg.softmax dimension(1) ins(%y : tensor<5x11xf32>) outs(%e : tensor<5x11xf32>) -> tensor<5x11xf32>
  return %s : tensor<5x11xf32>
}
