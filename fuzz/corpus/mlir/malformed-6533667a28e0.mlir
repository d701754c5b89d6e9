// shardlin-opt never crashes on malformed input: each case below is rejected
// with an error located at the offending line and column, and a non-zero
// exit (`not` fails if the tool crashes instead).


//--- garbage.mlir
// GARBAGE: garbage.mlir:[[@LINE+1]]:1: error: custom op 'this' is unknown
this is not mlir

//--- unknown-op.mlir
func.func @f(%x: tensor<4xf32>) {
  // UNKNOWN-OP: unknown-op.mlir:[[@LINE+1]]:8: error: custom op 'shardlin.foo' is unknown
  %0 = shardlin.foo %x : tensor<4xf32>
  return
}

//--- unknown-generic-op.mlir
func.func @f() {
  // UNKNOWN-GENERIC-OP: unknown-generic-op.mlir:[[@LINE+1]]:3: error: unregistered operation 'shardlin.foo' found in dialect ('shardlin') that does not allow unknown operations
  "shardlin.foo"() : () -> ()
  return
}

//--- bad-attr.mlir
// BAD-ATTR: bad-attr.mlir:[[@LINE+1]]:54: error: expected integer value
func.func @f() attributes {s = #shardlin.chunk<dim = x>} {
  return
}

//--- bad-attr-in-op.mlir
func.func @f(%b: tensor<4xf32>) {
  // BAD-ATTR-IN-OP: bad-attr-in-op.mlir:[[@LINE+1]]:48: error: custom op 'shardlin.local_chunk' expected 'placements'
  %0 = shardlin.local_chunk %b along <dim = 0, ranks = [1, 0]> : tensor<4xf32> -> tensor<2xf32>
  return
}

//--- unknown-attr.mlir
// UNKNOWN-ATTR: unknown-attr.mlir:[[@LINE+1]]:42: error: unknown attribute `nope` in dialect `shardlin`
func.func @f() attributes {s = #shardlin.nope<1>} {
  return
}

//--- unknown-type.mlir
// UNKNOWN-TYPE: unknown-type.mlir:[[@LINE+1]]:28: error: unknown {{ *}}type `nope` in dialect `shardlin`
func.func @f(%w: !shardlin.nope<>) {
  return
}

//--- sharded-no-chunk.mlir
// SHARDED-NO-CHUNK: sharded-no-chunk.mlir:[[@LINE+1]]:49: error: expected ','
func.func @f(%w: !shardlin.sharded<tensor<4xf32>>) {
  return
}

//--- big-placement.mlir
// BIG-PLACEMENT: big-placement.mlir:[[@LINE+1]]:74: error: integer value too large
func.func @f() attributes {s = #shardlin.chunk<dim = 0, placements = [0, 99999999999999999999]>} {
  return
}

//--- big-dim.mlir
// BIG-DIM: big-dim.mlir:[[@LINE+1]]:54: error: integer value too large
func.func @f() attributes {s = #shardlin.chunk<dim = 99999999999999999999, placements = [0]>} {
  return
}

//--- verifier.mlir
// Without -verify-diagnostics a verifier error is a failure, too.
func.func @f(%y: tensor<5x11xf32>, %b: tensor<10xf32>) {
  // VERIFIER: verifier.mlir:[[@LINE+1]]:8: error: 'shardlin.bias_add' op bias size 10 does not match the input's last dim 11
  %0 = shardlin.bias_add %y, %b : tensor<5x11xf32>, tensor<10xf32>
  return
}

//--- pass-failure.mlir
// A pass failure is a non-zero exit.
func.func @f(%x: tensor<4611686018427387904x2x19xf32>,
    %w: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [1, 0]>>) {
  // PASS-FAILURE: pass-failure.mlir:[[@LINE+1]]:8: error: 'shardlin.linear' op the input's batch dims ('tensor<4611686018427387904x2x19xf32>') overflow a 64-bit row count
  %y = shardlin.linear %x, %w : (tensor<4611686018427387904x2x19xf32>, !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [1, 0]>>) -> tensor<4611686018427387904x2x11xf32>
  return
}

//--- truncated.mlir
func.func @f(%x: tensor<4xf32>) {
  // TRUNCATED: truncated.mlir:[[@LINE+1]]:49: error: expected non-function type
  %0 = shardlin.bias_add %x, %x : tensor<4xf32>,
