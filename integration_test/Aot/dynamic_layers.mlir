// The AOT test's module (DynamicAotTest.c): two linears whose batch dims are
// dynamic, two and three of them in one group of the result's
// expand_shape (the form upstream's expand-strided-metadata crashed on,
// issue 27 finding 1). W = 4, uneven chunks (19 = 5+5+5+4, 11 = 3+3+3+2),
// permuted placements. Compiled with --lower-sharded-linear=strategy=
// gather-weight: with rows that differ between ranks, the native path
// gathers the weight.
func.func @two(%x: tensor<?x?x19xf32>,
    %w: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [2, 3, 0, 1]>>,
    %b: tensor<11xf32>) -> tensor<?x?x11xf32> {
  %y = shardlin.linear %x, %w, %b : (tensor<?x?x19xf32>, !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [2, 3, 0, 1]>>, tensor<11xf32>) -> tensor<?x?x11xf32>
  return %y : tensor<?x?x11xf32>
}

func.func @three(%x: tensor<?x?x?x19xf32>,
    %w: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 0, placements = [1, 3, 0, 2]>>) -> tensor<?x?x?x11xf32> {
  %y = shardlin.linear %x, %w : (tensor<?x?x?x19xf32>, !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 0, placements = [1, 3, 0, 2]>>) -> tensor<?x?x?x11xf32>
  return %y : tensor<?x?x?x11xf32>
}
