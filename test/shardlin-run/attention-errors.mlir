// What the plan executor refuses around issue 41's ops, with located
// errors: a shardlin.attention in its global form (no head tables) in a
// program that nothing gives a world size, and a call it cannot inline.

// RUN: rm -rf %t && split-file %s %t
// RUN: not shardlin-run %t/global.mlir --emit-program=%t/g.prog 2>&1 | FileCheck %s --check-prefix=GLOBAL
// GLOBAL: global.mlir:3:8: error: the shardlin runtime runs a shardlin.attention without q_heads/kv_heads only in a program whose world size a chunk spec or collective before it gives (every rank then runs all heads on its rows); lower the block with --lower-sharded-linear or add the sharded values
// RUN: not shardlin-run %t/extern.mlir --emit-program=%t/e.prog 2>&1 | FileCheck %s --check-prefix=EXTERN
// EXTERN: extern.mlir:4:8: error: the shardlin runtime inlines a call only to a function of the module with one block; 'norm' is not one

//--- global.mlir
func.func @main(%q: tensor<4x8xf32>, %k: tensor<4x4xf32>, %v: tensor<4x4xf32>) -> tensor<4x8xf32> {
  // Two query heads share one kv head.
  %a = shardlin.attention %q, %k, %v {head_dim = 4 : i64, causal} : tensor<4x8xf32>, tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x8xf32>
  return %a : tensor<4x8xf32>
}

//--- extern.mlir
func.func private @norm(tensor<4x8xf32>) -> tensor<4x8xf32>
func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // Declared only: nothing to inline.
  %y = func.call @norm(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
