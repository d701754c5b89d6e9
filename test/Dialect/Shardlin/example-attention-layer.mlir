// The example transformer layer (examples/attention/layer.mlir) verifies
// and lowers: the attention and the SwiGLU sub-blocks each to one
// all_gather and one reduce_scatter (sequence-parallel), nothing else.
// RUN: shardlin-opt %shardlin_src/examples/attention/layer.mlir --verify-roundtrip -o /dev/null
// RUN: shardlin-opt %shardlin_src/examples/attention/layer.mlir --lower-sharded-linear | FileCheck %s

// CHECK-LABEL: func.func @layer
// CHECK: shardlin.all_gather
// CHECK-NOT: shardlin.{{all_gather|all_to_all|all_reduce|reduce_scatter}}
// CHECK: shardlin.local_slice %{{.*}} dim = 0 ranges = [0, 4, 0, 8, 4, 8]
// CHECK-NOT: shardlin.{{all_gather|all_to_all|all_reduce|reduce_scatter}}
// CHECK: shardlin.attention {{.*}}kv_heads = array<i64: 0, 1, 0, 2, 1, 2>, q_heads = array<i64: 0, 2, 2, 4, 4, 6>
// CHECK-NOT: shardlin.{{all_gather|all_to_all|all_reduce|reduce_scatter}}
// CHECK: shardlin.reduce_scatter
// CHECK-NOT: shardlin.{{all_gather|all_to_all|all_reduce|reduce_scatter}}
// CHECK: call @rms_norm
// CHECK-NOT: shardlin.{{all_to_all|all_reduce|reduce_scatter}}
// CHECK: shardlin.all_gather
// CHECK-NOT: shardlin.{{all_gather|all_to_all|all_reduce|reduce_scatter}}
// CHECK: shardlin.reduce_scatter
// CHECK-NOT: shardlin.{{all_gather|all_to_all|all_reduce|reduce_scatter|linear}}
// CHECK: return
