// The AOT test's module (DynamicAotTest.c): two linears whose batch dims are
// dynamic, two and three of them in one group of the result's
// expand_shape (the form upstream's expand-strided-metadata crashed on,
// issue 27 finding 1), and an MLP block on batch x sequence rows. W = 4,
// uneven chunks (19 = 5+5+5+4, 11 = 3+3+3+2, 18 = 5+5+5+3), permuted
// placements. Compiled twice, with --lower-sharded-linear=strategy=
// gather-weight and =activations (the MLP then fused): with rows that
// differ between ranks, moving activations exchanges the ranks' row counts
// (shardlin_gather_bounds) before it stacks them.
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

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @mlp(%x: tensor<?x?x19xf32>,
    %w1: !shardlin.sharded<tensor<18x19xf32>, #shardlin.chunk<dim = 0, placements = [1, 3, 0, 2]>>,
    %b1: tensor<18xf32>,
    %w2: !shardlin.sharded<tensor<19x18xf32>, #shardlin.chunk<dim = 1, placements = [1, 3, 0, 2]>>) -> tensor<?x?x19xf32> {
  %h = shardlin.linear %x, %w1, %b1 : (tensor<?x?x19xf32>, !shardlin.sharded<tensor<18x19xf32>, #shardlin.chunk<dim = 0, placements = [1, 3, 0, 2]>>, tensor<18xf32>) -> tensor<?x?x18xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%h : tensor<?x?x18xf32>) outs(%h : tensor<?x?x18xf32>) {
  ^bb0(%v: f32, %o: f32):
    %zero = arith.constant 0.0 : f32
    %r = arith.maximumf %v, %zero : f32
    linalg.yield %r : f32
  } -> tensor<?x?x18xf32>
  %y = shardlin.linear %a, %w2 : (tensor<?x?x18xf32>, !shardlin.sharded<tensor<19x18xf32>, #shardlin.chunk<dim = 1, placements = [1, 3, 0, 2]>>) -> tensor<?x?x19xf32>
  return %y : tensor<?x?x19xf32>
}
