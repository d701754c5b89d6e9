// RUN: shardlin-opt %s -split-input-file -verify-diagnostics

// shardlin.constant's verifier: the value's type and element type, the
// result's type against it, and a dense_resource blob's size.

func.func @other_result() -> tensor<3xf32> {
  // expected-error@+1 {{'shardlin.constant' op result type 'tensor<3xf32>' differs from the value's type 'tensor<2xf32>'}}
  %c = shardlin.constant dense<[1.0, 2.0]> : tensor<2xf32> -> tensor<3xf32>
  return %c : tensor<3xf32>
}

// -----

func.func @other_sharded() {
  // expected-error@+1 {{'shardlin.constant' op result '!shardlin.sharded<tensor<4x2xf32>, #shardlin.chunk<dim = 0, placements = [0, 1]>>' is not a sharded type of the value's type 'tensor<2x4xf32>'}}
  %c = shardlin.constant dense<1.0> : tensor<2x4xf32> -> !shardlin.sharded<tensor<4x2xf32>, #shardlin.chunk<dim = 0, placements = [0, 1]>>
  return
}

// -----

func.func @element_type() {
  // expected-error@+1 {{'shardlin.constant' op expects a value of a static tensor type of f16, bf16, f32 or f64 (no encoding), got 'tensor<2xi32>'}}
  %c = shardlin.constant dense<[1, 2]> : tensor<2xi32> -> tensor<2xf32>
  return
}

// -----

func.func @element_type_result() {
  // expected-error@+1 {{'shardlin.constant' op result #0 must be ranked tensor of f16, bf16, f32 or f64 values or A global tensor of which each rank holds one chunk, but got 'tensor<2xi32>'}}
  %c = shardlin.constant dense<[1.0, 2.0]> : tensor<2xf32> -> tensor<2xi32>
  return
}

// -----

func.func @blob_size() {
  // expected-error@+1 {{'shardlin.constant' op dense_resource<short> holds 12 bytes but 'tensor<2x3xf32>' needs 24}}
  %c = shardlin.constant dense_resource<short> : tensor<2x3xf32> -> tensor<2x3xf32>
  return
}

{-#
  dialect_resources: {
    builtin: {
      short: "0x040000000000803F0000803F0000803F"
    }
  }
#-}
