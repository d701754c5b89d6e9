// RUN: shardlin-opt %s | FileCheck %s
// RUN: shardlin-opt %s --verify-roundtrip -o /dev/null
// RUN: shardlin-opt %s -mlir-print-op-generic | shardlin-opt | FileCheck %s

// shardlin.attention, shardlin.rope, shardlin.local_slice and its adjoint
// shardlin.local_place as they are
// written and as the lowering emits them.

// CHECK-LABEL: func.func @global_gqa
// CHECK: shardlin.rope %{{.*}}, %{{.*}}, %{{.*}} {head_dim = 4 : i64} : tensor<2x8x48xf32>, tensor<8x2xf32>, tensor<8x2xf32> -> tensor<2x8x48xf32>
// CHECK: shardlin.rope %{{.*}}, %{{.*}}, %{{.*}} {head_dim = 4 : i64, inverse} : tensor<2x8x16xf32>
// CHECK: shardlin.attention %{{.*}}, %{{.*}}, %{{.*}} {causal, head_dim = 4 : i64} : tensor<2x8x48xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32> -> tensor<2x8x48xf32>
func.func @global_gqa(%q: tensor<2x8x48xf32>, %k: tensor<2x8x16xf32>, %v: tensor<2x8x16xf32>,
                      %cos: tensor<8x2xf32>, %sin: tensor<8x2xf32>) -> tensor<2x8x48xf32> {
  %qr = shardlin.rope %q, %cos, %sin {head_dim = 4 : i64} : tensor<2x8x48xf32>, tensor<8x2xf32>, tensor<8x2xf32> -> tensor<2x8x48xf32>
  %kr = shardlin.rope %k, %cos, %sin {head_dim = 4 : i64, inverse} : tensor<2x8x16xf32>, tensor<8x2xf32>, tensor<8x2xf32> -> tensor<2x8x16xf32>
  %o = shardlin.attention %qr, %kr, %v {head_dim = 4 : i64, causal} : tensor<2x8x48xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32> -> tensor<2x8x48xf32>
  return %o : tensor<2x8x48xf32>
}

// A 2-D sequence, a dynamic length, a mask, an explicit scale and group.
// CHECK-LABEL: func.func @masked
// CHECK: shardlin.attention %{{.*}}, %{{.*}}, %{{.*}} mask %{{.*}} {group = 1 : i64, head_dim = 2 : i64, scale = 2.500000e-01 : f64} : tensor<?x6xbf16>, tensor<?x6xbf16>, tensor<?x6xbf16>, tensor<?x?xbf16> -> tensor<?x6xbf16>
func.func @masked(%q: tensor<?x6xbf16>, %m: tensor<?x?xbf16>) -> tensor<?x6xbf16> {
  %o = shardlin.attention %q, %q, %q mask %m {head_dim = 2 : i64, scale = 0.25 : f64, group = 1 : i64} : tensor<?x6xbf16>, tensor<?x6xbf16>, tensor<?x6xbf16>, tensor<?x?xbf16> -> tensor<?x6xbf16>
  return %o : tensor<?x6xbf16>
}

// The rank-local form: 12 query heads, 4 kv heads (group 3) over 8 ranks;
// ranks 6 and 7 hold no heads; neighbouring kv ranges overlap.
// CHECK-LABEL: func.func @rank_local
// CHECK: shardlin.local_slice %{{.*}} dim = 0 ranges = [0, 4, 0, 8, 4, 8, 8, 12, 8, 16, 12, 16, 0, 0, 0, 0] : tensor<16x8xf32> -> tensor<?x8xf32>
// CHECK: shardlin.attention %{{.*}} {causal, group = 3 : i64, head_dim = 4 : i64, kv_heads = array<i64: 0, 1, 0, 2, 1, 2, 2, 3, 2, 4, 3, 4, 0, 0, 0, 0>, q_heads = array<i64: 0, 2, 2, 4, 4, 6, 6, 8, 8, 10, 10, 12, 12, 12, 12, 12>, scale = 5.000000e-01 : f64}
func.func @rank_local(%wk: tensor<16x8xf32>, %q: tensor<8x4x?xf32>, %k: tensor<8x4x?xf32>) -> tensor<8x4x?xf32> {
  %ks = shardlin.local_slice %wk dim = 0 ranges = [0, 4, 0, 8, 4, 8, 8, 12, 8, 16, 12, 16, 0, 0, 0, 0] : tensor<16x8xf32> -> tensor<?x8xf32>
  %o = shardlin.attention %q, %k, %k {head_dim = 4 : i64, scale = 0.5 : f64, causal, group = 3 : i64,
                                      q_heads = array<i64: 0, 2, 2, 4, 4, 6, 6, 8, 8, 10, 10, 12, 12, 12, 12, 12>,
                                      kv_heads = array<i64: 0, 1, 0, 2, 1, 2, 2, 3, 2, 4, 3, 4, 0, 0, 0, 0>}
      : tensor<8x4x?xf32>, tensor<8x4x?xf32>, tensor<8x4x?xf32> -> tensor<8x4x?xf32>
  return %o : tensor<8x4x?xf32>
}

// local_place: the adjoint of local_slice, the same dim and ranges; the
// placed dim of the result static, the operand's static only where every
// range has one size. Along the columns, and of a vector.
// CHECK-LABEL: func.func @place
// CHECK: shardlin.local_place %{{.*}} dim = 0 ranges = [0, 4, 0, 8, 4, 8] : tensor<?x8xf32> -> tensor<8x8xf32>
// CHECK: shardlin.local_place %{{.*}} dim = 1 ranges = [0, 2, 2, 4, 6, 8] : tensor<3x2xbf16> -> tensor<3x8xbf16>
// CHECK: shardlin.local_place %{{.*}} dim = 0 ranges = [0, 0, 3, 8] : tensor<?xf64> -> tensor<8xf64>
func.func @place(%g: tensor<?x8xf32>, %c: tensor<3x2xbf16>, %v: tensor<?xf64>)
    -> (tensor<8x8xf32>, tensor<3x8xbf16>, tensor<8xf64>) {
  %a = shardlin.local_place %g dim = 0 ranges = [0, 4, 0, 8, 4, 8] : tensor<?x8xf32> -> tensor<8x8xf32>
  %b = shardlin.local_place %c dim = 1 ranges = [0, 2, 2, 4, 6, 8] : tensor<3x2xbf16> -> tensor<3x8xbf16>
  %d = shardlin.local_place %v dim = 0 ranges = [0, 0, 3, 8] : tensor<?xf64> -> tensor<8xf64>
  return %a, %b, %d : tensor<8x8xf32>, tensor<3x8xbf16>, tensor<8xf64>
}
