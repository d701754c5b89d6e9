// RUN: shardlin-opt %s -split-input-file --shardlin-localize-sharded -verify-diagnostics

// What shardlin-localize-sharded cannot rewrite, with the pass that must run first or
// why.

func.func @unlowered(%x: tensor<5x19xf32>, %w: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [1, 0]>>) -> tensor<5x11xf32> {
  // expected-error@+1 {{'shardlin.linear' op must be lowered first (run --lower-sharded-linear)}}
  %y = shardlin.linear %x, %w : (tensor<5x19xf32>, !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [1, 0]>>) -> tensor<5x11xf32>
  return %y : tensor<5x11xf32>
}

// -----

!s = !shardlin.sharded<tensor<10x7xf32>, #shardlin.chunk<dim = 0, placements = [1, 2, 0]>>
func.func @in_region(%w: !s, %c: i1) -> !s {
  // expected-error@+1 {{'scf.if' op takes or yields a sharded value; the native path supports sharded values only as function arguments and results, call and branch operands, local_shard operands and from_local results}}
  %r = scf.if %c -> !s {
    scf.yield %w : !s
  } else {
    scf.yield %w : !s
  }
  return %r : !s
}
