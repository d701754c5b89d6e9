// The cost model reads static rows where a module has them, also when a
// rank's share of them is `?` (issue 40, item 7): the rows of a sharded
// argument split unevenly over the ranks (10 rows over 4: chunks of 3, 3,
// 3, 1) are at most 3 per rank, not the assumed-rows of a dynamic batch
// (1024 by default). Here that flips the choice: a 256 x 256 weight is
// cheaper to gather than 1024 rows of activations, but 3 rows are cheaper
// to move than the weight.
// RUN: shardlin-opt %s -split-input-file '--lower-sharded-linear=explain=true' 2>&1 >/dev/null | FileCheck %s
// RUN: shardlin-opt %s -split-input-file '--lower-sharded-linear' | FileCheck %s --check-prefix=IR

!x = !shardlin.sharded<tensor<10x256xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3]>>
!w = !shardlin.sharded<tensor<256x256xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3]>>

// CHECK: lower-static-rows.mlir:[[@LINE+6]]:8: remark: lowered col-wise with activations (cheapest estimate); activations: est.
// CHECK-NOT: assumed-rows
// IR-LABEL: func.func @split_rows
// IR: shardlin.gemm {{.*}}strategy = "activations"
func.func @split_rows(%x: !x, %w: !w) -> tensor<?x256xf32> {
  %xl = shardlin.local_shard %x : !x -> tensor<?x256xf32>
  %y = shardlin.linear %xl, %w : (tensor<?x256xf32>, !w) -> tensor<?x256xf32>
  return %y : tensor<?x256xf32>
}

// -----

!x = !shardlin.sharded<tensor<10x256xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3], bounds = [0, 1, 2, 8, 10]>>
!w = !shardlin.sharded<tensor<256x256xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3]>>

// Explicit bounds: the largest chunk (6 rows), through an elementwise op
// and a reshape.
// CHECK: lower-static-rows.mlir:[[@LINE+8]]:8: remark: lowered col-wise with activations (cheapest estimate); activations: est.
// IR-LABEL: func.func @bounds
// IR: shardlin.gemm {{.*}}strategy = "activations"
func.func @bounds(%x: !x, %w: !w) -> tensor<?x2x256xf32> {
  %xl = shardlin.local_shard %x : !x -> tensor<?x256xf32>
  %n = arith.negf %xl : tensor<?x256xf32>
  %c0 = arith.constant 0 : index
  %d = tensor.dim %n, %c0 : tensor<?x256xf32>
  %y = shardlin.linear %n, %w : (tensor<?x256xf32>, !w) -> tensor<?x256xf32>
  %c2 = arith.constant 2 : index
  %h = arith.divui %d, %c2 : index
  %z = tensor.expand_shape %y [[0, 1], [2]] output_shape [%h, 2, 256] : tensor<?x256xf32> into tensor<?x2x256xf32>
  return %z : tensor<?x2x256xf32>
}

// -----

!w = !shardlin.sharded<tensor<256x256xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3]>>

// Rows of run-time size: the assumed 1024 rows, and the weight gathered.
// CHECK: lower-static-rows.mlir:[[@LINE+4]]:8: remark: lowered col-wise with gather-weight (cheapest estimate) for 1024 rows per rank (the batch dims are dynamic; option assumed-rows)
// IR-LABEL: func.func @dynamic_rows
// IR: shardlin.gemm {{.*}}strategy = "gather-weight"
func.func @dynamic_rows(%x: tensor<?x256xf32>, %w: !w) -> tensor<?x256xf32> {
  %y = shardlin.linear %x, %w : (tensor<?x256xf32>, !w) -> tensor<?x256xf32>
  return %y : tensor<?x256xf32>
}
