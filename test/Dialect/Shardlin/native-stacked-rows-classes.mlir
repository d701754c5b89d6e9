// Stacks of tensors whose rows are one class of blocks share one exchange of
// bounds (shardlin-prepare-native): the chunks of one sharded type (a
// backward's x and dy), and the blocks a collective split by bounds of that
// class (a residual's x and the block's result). Rows stacked from two such
// tensors that meet in one op keep their blocks, and the collective that
// splits them back gets the bounds. The whole --jit pipeline
// (--shardlin-lower-to-llvm) runs prepare-native before
// --shardlin-localize-sharded, while the sharded types still say so.
// RUN: shardlin-opt %s -split-input-file --shardlin-prepare-native | FileCheck %s
// RUN: shardlin-opt %s -split-input-file -verify-diagnostics --shardlin-lower-to-llvm | FileCheck %s --check-prefix=LLVM

!x = !shardlin.sharded<tensor<6x40xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3]>>
// x and dy: one sharded type, one gather_bounds for both stacks; the
// product of their stacked rows is split back by it.
// CHECK-LABEL: func.func @x_and_dy
// CHECK: %[[X:.*]] = shardlin.local_shard %arg0
// CHECK: %[[B:.*]] = shardlin.gather_bounds %[[X]] along <dim = 0, placements = [0, 1, 2, 3]>
// CHECK: shardlin.all_gather %[[X]] along <dim = 0, placements = [0, 1, 2, 3]> bounds(%[[B]] : tensor<5xi64>)
// CHECK-NOT: shardlin.gather_bounds
// CHECK: shardlin.all_gather %{{.*}} along <dim = 0, placements = [0, 1, 2, 3]> bounds(%[[B]] : tensor<5xi64>)
// CHECK: shardlin.reduce_scatter %{{.*}} along <dim = 0, placements = [0, 1, 2, 3]> bounds(%[[B]] : tensor<5xi64>)
// LLVM-LABEL: llvm.func @x_and_dy(
// LLVM: llvm.call @shardlin_gather_bounds
// LLVM-NOT: llvm.call @shardlin_gather_bounds
// LLVM: llvm.call @shardlin_reduce_scatter_bounds
// LLVM-NOT: llvm.call @shardlin_gather_bounds
// LLVM: llvm.return
func.func @x_and_dy(%x: !x, %dy: !x, %w: tensor<40x40xf32>) -> !x {
  %xl = shardlin.local_shard %x : !x -> tensor<?x40xf32>
  %xg = shardlin.all_gather %xl along <dim = 0, placements = [0, 1, 2, 3]> : tensor<?x40xf32> -> tensor<?x40xf32>
  %dl = shardlin.local_shard %dy : !x -> tensor<?x40xf32>
  %dg = shardlin.all_gather %dl along <dim = 0, placements = [0, 1, 2, 3]> : tensor<?x40xf32> -> tensor<?x40xf32>
  %p = arith.mulf %xg, %dg : tensor<?x40xf32>
  %g = shardlin.gemm %p, %w : (tensor<?x40xf32>, tensor<40x40xf32>) -> tensor<?x40xf32>
  %s = shardlin.reduce_scatter %g along <dim = 0, placements = [0, 1, 2, 3]> : tensor<?x40xf32> -> tensor<?x40xf32>
  %r = shardlin.from_local %s : tensor<?x40xf32> -> !x
  return %r : !x
}

// -----

!x = !shardlin.sharded<tensor<6x40xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3]>>
// A residual: the block's result (split back by x's bounds) plus x is of
// x's class; its stack shares x's bounds, so rows stacked from it and from
// x meet and are split back.
// CHECK-LABEL: func.func @residual
// CHECK: %[[B:.*]] = shardlin.gather_bounds
// CHECK: shardlin.reduce_scatter %{{.*}} bounds(%[[B]] : tensor<5xi64>)
// CHECK-NOT: shardlin.gather_bounds
// CHECK: shardlin.all_gather %{{.*}} bounds(%[[B]] : tensor<5xi64>)
// CHECK: shardlin.reduce_scatter %{{.*}} bounds(%[[B]] : tensor<5xi64>)
func.func @residual(%x: !x, %w: tensor<40x40xf32>) -> !x {
  %xl = shardlin.local_shard %x : !x -> tensor<?x40xf32>
  %xg = shardlin.all_gather %xl along <dim = 0, placements = [0, 1, 2, 3]> : tensor<?x40xf32> -> tensor<?x40xf32>
  %h = shardlin.gemm %xg, %w : (tensor<?x40xf32>, tensor<40x40xf32>) -> tensor<?x40xf32>
  %s = shardlin.reduce_scatter %h along <dim = 0, placements = [0, 1, 2, 3]> : tensor<?x40xf32> -> tensor<?x40xf32>
  %r = arith.addf %s, %xl : tensor<?x40xf32>
  %rg = shardlin.all_gather %r along <dim = 0, placements = [0, 1, 2, 3]> : tensor<?x40xf32> -> tensor<?x40xf32>
  %q = arith.mulf %rg, %xg : tensor<?x40xf32>
  %t = shardlin.reduce_scatter %q along <dim = 0, placements = [0, 1, 2, 3]> : tensor<?x40xf32> -> tensor<?x40xf32>
  %y = shardlin.from_local %t : tensor<?x40xf32> -> !x
  return %y : !x
}

// -----

// Two plain arguments of unknown rows are not one class: each stack
// exchanges its own bounds, and rows stacked from both are split by
// neither (the bufferization says so, on the native path).
// CHECK-LABEL: func.func @unrelated
// CHECK-COUNT-2: shardlin.gather_bounds
// CHECK: shardlin.reduce_scatter %{{.*}} along <dim = 0, placements = [0, 1]> :
func.func @unrelated(%a: tensor<?x8xf32>, %b: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %ag = shardlin.all_gather %a along <dim = 0, placements = [0, 1]> : tensor<?x8xf32> -> tensor<?x8xf32>
  %bg = shardlin.all_gather %b along <dim = 0, placements = [0, 1]> : tensor<?x8xf32> -> tensor<?x8xf32>
  %p = arith.mulf %ag, %bg : tensor<?x8xf32>
  // expected-error @+2 {{splits dim 0 of its input 'tensor<?x8xf32>', whose size is known only at run time}}
  // expected-error @+1 {{failed to bufferize op}}
  %s = shardlin.reduce_scatter %p along <dim = 0, placements = [0, 1]> : tensor<?x8xf32> -> tensor<?x8xf32>
  return %s : tensor<?x8xf32>
}

// -----

!x3 = !shardlin.sharded<tensor<5x2x8xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3]>>
// N-D x and dy collapsed into rows (their rank's chunk times 2): one class,
// one exchange, and the rows split back by it.
// CHECK-LABEL: func.func @collapsed
// CHECK: %[[B:.*]] = shardlin.gather_bounds
// CHECK-NOT: shardlin.gather_bounds
// CHECK: shardlin.reduce_scatter %{{.*}} bounds(%[[B]] : tensor<5xi64>)
func.func @collapsed(%x: !x3, %dy: !x3) -> tensor<?x8xf32> {
  %xl = shardlin.local_shard %x : !x3 -> tensor<?x2x8xf32>
  %xc = tensor.collapse_shape %xl [[0, 1], [2]] : tensor<?x2x8xf32> into tensor<?x8xf32>
  %xg = shardlin.all_gather %xc along <dim = 0, placements = [0, 1, 2, 3]> : tensor<?x8xf32> -> tensor<?x8xf32>
  %dl = shardlin.local_shard %dy : !x3 -> tensor<?x2x8xf32>
  %dc = tensor.collapse_shape %dl [[0, 1], [2]] : tensor<?x2x8xf32> into tensor<?x8xf32>
  %dg = shardlin.all_gather %dc along <dim = 0, placements = [0, 1, 2, 3]> : tensor<?x8xf32> -> tensor<?x8xf32>
  %p = arith.mulf %xg, %dg : tensor<?x8xf32>
  %s = shardlin.reduce_scatter %p along <dim = 0, placements = [0, 1, 2, 3]> : tensor<?x8xf32> -> tensor<?x8xf32>
  return %s : tensor<?x8xf32>
}
