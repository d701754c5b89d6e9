// --shardlin-externalize-parameters refuses, with a located error and a
// non-zero exit, what it cannot move, and writes no file then.

// RUN: rm -rf %t && mkdir -p %t
// RUN: shardlin-opt %s -split-input-file -verify-diagnostics --allow-unregistered-dialect --shardlin-externalize-parameters="file=%t/p.safetensors"
// RUN: not test -e %t/p.safetensors

// An element type safetensors has no name for.
func.func @index_constant() {
  // expected-error@+1 {{cannot externalize a constant of element type 'index': safetensors holds f16, bf16, f32, f64, i1, i8-i64 and ui8-ui64 (raise min-elements above 16 to leave it in the module)}}
  %c = arith.constant dense<7> : tensor<16xindex>
  "test.use"(%c) : (tensor<16xindex>) -> ()
  return
}

// -----

func.func @complex_constant() {
  // expected-error@+1 {{cannot externalize a constant of element type 'complex<f32>'}}
  %c = arith.constant dense<(1.0, 2.0)> : tensor<16xcomplex<f32>>
  "test.use"(%c) : (tensor<16xcomplex<f32>>) -> ()
  return
}

// -----

func.func @i4_constant() {
  // expected-error@+1 {{cannot externalize a constant of element type 'i4'}}
  %c = arith.constant dense<3> : tensor<16xi4>
  "test.use"(%c) : (tensor<16xi4>) -> ()
  return
}

// -----

// A public function another one calls: its signature would change.
func.func @callee() -> tensor<16xf32> {
  %c = arith.constant dense<1.0> : tensor<16xf32>
  return %c : tensor<16xf32>
}
func.func @caller() -> tensor<16xf32> {
  // expected-error@+1 {{cannot externalize the constants of @callee: this op refers to it, and its signature would change}}
  %r = func.call @callee() : () -> tensor<16xf32>
  return %r : tensor<16xf32>
}

// -----

// One resource, two types: one parameter has one type.
func.func @two_types() {
  %a = arith.constant dense_resource<blob> : tensor<16xf32>
  // expected-error@+1 {{dense_resource<blob> is used as 'tensor<16xf32>' and as 'tensor<4x4xf32>'; one parameter has one type}}
  %b = arith.constant dense_resource<blob> : tensor<4x4xf32>
  "test.use"(%a, %b) : (tensor<16xf32>, tensor<4x4xf32>) -> ()
  return
}

{-#
  dialect_resources: {
    builtin: {
      blob: "0x040000000000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F"
    }
  }
#-}

// -----

// A blob of the wrong size, and one the module does not hold.
func.func @short_blob() {
  // expected-error@+1 {{dense_resource<short> holds 8 bytes, but 'tensor<16xf32>' needs 64}}
  %a = arith.constant dense_resource<short> : tensor<16xf32>
  "test.use"(%a) : (tensor<16xf32>) -> ()
  return
}

{-#
  dialect_resources: {
    builtin: {
      short: "0x040000000000803F0000803F"
    }
  }
#-}

// -----

func.func @missing_blob() {
  // expected-error@+1 {{dense_resource<nowhere> has no data in the module (its blob is missing from dialect_resources)}}
  %a = arith.constant dense_resource<nowhere> : tensor<16xf32>
  "test.use"(%a) : (tensor<16xf32>) -> ()
  return
}

// -----

// A name shardlin's program text cannot carry.
func.func @spaced_name() {
  // expected-error@+1 {{dense_resource<a b>: a parameter's name cannot hold spaces or control characters}}
  %a = arith.constant dense_resource<"a b"> : tensor<16xf32>
  "test.use"(%a) : (tensor<16xf32>) -> ()
  return
}

{-#
  dialect_resources: {
    builtin: {
      "a b": "0x040000000000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F"
    }
  }
#-}
