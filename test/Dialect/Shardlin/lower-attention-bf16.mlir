// RUN: shardlin-opt %s --lower-sharded-linear | FileCheck %s \
// RUN:   --implicit-check-not=shardlin.all_gather --implicit-check-not=shardlin.reduce_scatter \
// RUN:   --implicit-check-not=shardlin.all_to_all --implicit-check-not=shardlin.all_reduce

// A bf16 attention block: the GEMMs, rope and attention in bf16 (the
// attention's softmax in f32 by its semantics), O's partial products in f32
// through the reduce_scatter, rounded once to bf16.

// CHECK-LABEL: func.func @bf16_block
// CHECK: shardlin.all_gather %{{.*}} : tensor<4x8xbf16> -> tensor<12x8xbf16>
// CHECK: shardlin.attention {{.*}} : tensor<3x4x?xbf16>, tensor<3x4x?xbf16>, tensor<3x4x?xbf16> -> tensor<3x4x?xbf16>
// CHECK: shardlin.gemm {{.*}} -> tensor<12x8xf32>
// CHECK: shardlin.reduce_scatter %{{.*}} : tensor<12x8xf32> -> tensor<4x8xf32>
// CHECK: shardlin.convert %{{.*}} : tensor<4x8xf32> -> tensor<4x8xbf16>


!w = !shardlin.sharded<tensor<28x8xbf16>, #shardlin.chunk<dim = 0, placements = [1, 2, 0], bounds = [0, 8, 24, 28]>>
!wo = !shardlin.sharded<tensor<8x28xbf16>, #shardlin.chunk<dim = 1, placements = [1, 2, 0], bounds = [0, 8, 24, 28]>>

func.func @bf16_block(%x: tensor<4x8xbf16>, %wq: !w, %wk: !w, %wv: !w, %wo: !wo) -> tensor<4x8xbf16> {
  %q = shardlin.linear %x, %wq : (tensor<4x8xbf16>, !w) -> tensor<4x28xbf16>
  %k = shardlin.linear %x, %wk : (tensor<4x8xbf16>, !w) -> tensor<4x28xbf16>
  %v = shardlin.linear %x, %wv : (tensor<4x8xbf16>, !w) -> tensor<4x28xbf16>
  %a = shardlin.attention %q, %k, %v {head_dim = 4 : i64, causal} : tensor<4x28xbf16>, tensor<4x28xbf16>, tensor<4x28xbf16> -> tensor<4x28xbf16>
  %y = shardlin.linear %a, %wo : (tensor<4x28xbf16>, !wo) -> tensor<4x8xbf16>
  return %y : tensor<4x8xbf16>
}
