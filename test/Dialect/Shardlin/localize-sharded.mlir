// RUN: shardlin-opt %s -split-input-file --shardlin-localize-sharded | FileCheck %s

// Sharded values become the rank's local tensors, in signatures, calls,
// returns and branches; local_shard disappears.

!w = !shardlin.sharded<tensor<10x7xf32>, #shardlin.chunk<dim = 0, placements = [1, 2, 0]>>
!e = !shardlin.sharded<tensor<8x6xf16>, #shardlin.chunk<dim = 1, placements = [1, 0]>>

// A private callee: its argument is local, and nothing is checked (its
// callers pass what they received).
// CHECK-LABEL: func.func private @helper
// CHECK-SAME: (%[[A:.*]]: tensor<?x7xf32>) -> tensor<?x7xf32>
// CHECK-NEXT: return %[[A]]
func.func private @helper(%w: !w) -> !w {
  return %w : !w
}

// A public entry: the uneven argument's size is checked against the calling
// rank's chunk (4, 4 or 2 rows of 10); an even one (6 over 2: 3 columns)
// has a static type and needs no check.
// CHECK-LABEL: func.func @entry
// CHECK-SAME: (%[[W:.*]]: tensor<?x7xf32>, %[[E:.*]]: tensor<8x3xf16>, %[[C:.*]]: i1) -> (tensor<?x7xf32>, tensor<8x3xf16>)
// CHECK: %[[N:.*]] = tensor.dim %[[W]], %{{.*}}
// CHECK: %[[R:.*]] = shardlin.rank world_size = 3
// CHECK: %[[SIZE:.*]] = arith.subi
// CHECK: %[[OK:.*]] = arith.cmpi eq, %[[N]], %[[SIZE]]
// CHECK: cf.assert %[[OK]], "shardlin: argument 0 of @entry must be the calling rank's chunk of tensor<10x7xf32> under #shardlin.chunk<dim = 0, placements = [1, 2, 0]>: its dim 0 has another size"
// CHECK-NOT: cf.assert
// CHECK: %[[H:.*]] = call @helper(%[[W]]) : (tensor<?x7xf32>) -> tensor<?x7xf32>
// CHECK: cf.cond_br %[[C]], ^bb1(%[[H]] : tensor<?x7xf32>), ^bb1(%[[W]] : tensor<?x7xf32>)
// CHECK: ^bb1(%[[P:.*]]: tensor<?x7xf32>):
// CHECK-NEXT: return %[[P]], %[[E]]
func.func @entry(%w: !w, %e: !e, %c: i1) -> (!w, tensor<8x3xf16>) {
  %h = call @helper(%w) : (!w) -> !w
  %l = shardlin.local_shard %e : !e -> tensor<8x3xf16>
  cf.cond_br %c, ^bb1(%h : !w), ^bb1(%w : !w)
^bb1(%p: !w):
  return %p, %l : !w, tensor<8x3xf16>
}

// -----

// Nothing sharded: nothing changes.
// CHECK-LABEL: func.func @plain
// CHECK-NEXT: return %arg0
func.func @plain(%x: tensor<3xf32>) -> tensor<3xf32> {
  return %x : tensor<3xf32>
}
