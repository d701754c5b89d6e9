// The pass runs on functions (FunctionOpInterface). Given at module level on
// the command line it lowers every function of the module, as
// --pass-pipeline with func.func does; each linear is decided on its own.
// RUN: shardlin-opt %s --lower-sharded-linear=strategy=activations | FileCheck %s
// RUN: shardlin-opt %s --pass-pipeline='builtin.module(func.func(lower-sharded-linear{strategy=activations}))' | FileCheck %s
// RUN: shardlin-opt %s --lower-sharded-linear=explain=true 2>&1 >/dev/null | FileCheck %s --check-prefix=EXPLAIN

// CHECK-LABEL: func.func @row
// CHECK: shardlin.all_to_all
// CHECK: shardlin.reduce_scatter
// CHECK-NOT: shardlin.linear
// CHECK-LABEL: func.func @col
// CHECK: shardlin.all_gather
// CHECK: shardlin.all_to_all
// CHECK-NOT: shardlin.linear

// EXPLAIN: remark: lowered row-wise with
// EXPLAIN: remark: lowered col-wise with
func.func @row(%x: tensor<5x19xf32>, %w: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [1, 0]>>) -> tensor<5x11xf32> {
  %y = shardlin.linear %x, %w : (tensor<5x19xf32>, !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [1, 0]>>) -> tensor<5x11xf32>
  return %y : tensor<5x11xf32>
}

func.func @col(%x: tensor<5x19xf32>, %w: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 0, placements = [1, 0]>>) -> tensor<5x11xf32> {
  %y = shardlin.linear %x, %w : (tensor<5x19xf32>, !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 0, placements = [1, 0]>>) -> tensor<5x11xf32>
  return %y : tensor<5x11xf32>
}
