// RUN: shardlin-opt %s --shardlin-generate-backward -split-input-file -verify-diagnostics
// RUN: not shardlin-opt %s '--shardlin-generate-backward=functions=missing' 2>&1 | FileCheck %s --check-prefix=MISSING

// What shardlin-generate-backward cannot differentiate: one located error
// naming the op (or the function) and why.

func.func @sin(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{cannot differentiate 'math.sin': shardlin-generate-backward differentiates shardlin.linear, the lowered shardlin ops (local_shard, local_chunk, all_gather, all_to_all, reduce_scatter, all_reduce, gemm, bias_add, convert, and from_local of a returned value), shardlin.attention, rope and local_slice, tensor.collapse_shape and expand_shape, a norm's sum over the last dim (a linalg.generic into R x 1 or a linalg.reduce, combining by arith.addf), and the elementwise ops the shardlin runtime executes (arith.addf, subf, mulf}}
  %y = math.sin %x : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// A call is inlined (a layer's norm helper), but only of a function with a
// body.
func.func private @callee(%x: tensor<4xf32>) -> tensor<4xf32>
func.func @call(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{shardlin-generate-backward inlines a call only to a function of the module with one block; 'callee' is not one}}
  %y = func.call @callee(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// A maximum over the last dim (softmax's) has no adjoint; a norm's sum has.
func.func @row_max(%x: tensor<4x8xf32>) -> tensor<4x1xf32> {
  %c = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<4x1xf32>
  %i = linalg.fill ins(%c : f32) outs(%e : tensor<4x1xf32>) -> tensor<4x1xf32>
  // expected-error@+1 {{cannot differentiate a maximum over the last dim (softmax's): shardlin-generate-backward differentiates the sums over the last dim that norms compute, not a maximum}}
  %m = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, 0)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x8xf32>) outs(%i : tensor<4x1xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.maximumf %in, %acc : f32
    linalg.yield %r : f32
  } -> tensor<4x1xf32>
  return %m : tensor<4x1xf32>
}

// -----

// The sum of a whole vector is not a sum per row.
func.func @vector_sum(%x: tensor<8xf32>) -> tensor<f32> {
  %c = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %i = linalg.fill ins(%c : f32) outs(%e : tensor<f32>) -> tensor<f32>
  // expected-error@+1 {{cannot differentiate the sum of a rank-1 tensor: shardlin-generate-backward differentiates sums over the last dim of a tensor of rank 2 or more (one per row)}}
  %s = linalg.reduce ins(%x : tensor<8xf32>) outs(%i : tensor<f32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %r = arith.addf %in, %acc : f32
      linalg.yield %r : f32
    }
  return %s : tensor<f32>
}

// -----

// A contraction is not an elementwise op.
func.func @matmul(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %e = tensor.empty() : tensor<4x4xf32>
  // expected-error@+1 {{cannot differentiate 'linalg.matmul'}}
  %y = linalg.matmul ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %y : tensor<4x4xf32>
}

// -----

// A bias is the same on every rank; one computed by a linear is not.
!w = !shardlin.sharded<tensor<6x4xf32>, #shardlin.chunk<dim = 0, placements = [1, 0]>>
!v = !shardlin.sharded<tensor<6x6xf32>, #shardlin.chunk<dim = 0, placements = [1, 0]>>
func.func @bias_from_linear(%x: tensor<2x4xf32>, %w: !w, %b: tensor<6xf32>, %v: !v) -> tensor<2x6xf32> {
  %h = shardlin.linear %b, %v : (tensor<6xf32>, !v) -> tensor<6xf32>
  // expected-error@+1 {{'shardlin.linear' op cannot be differentiated: its bias is computed by 'shardlin.linear', whose value may differ between ranks; a bias is the same on every rank (a function argument, or computed from arguments and constants by elementwise ops and reshapes) and its gradient is summed over ranks}}
  %y = shardlin.linear %x, %w, %h : (tensor<2x4xf32>, !w, tensor<6xf32>) -> tensor<2x6xf32>
  return %y : tensor<2x6xf32>
}

// -----

// expected-error@+1 {{cannot add the backward of @taken: a symbol named 'taken_backward' already exists}}
func.func @taken(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
func.func private @taken_backward(%x: tensor<4xf32>) -> tensor<4xf32>

// -----

// Lowered IR: a local_chunk's source (a bias, or a replicated activation),
// a bias_add's or a gemm's bias is the same on every rank; one computed by
// a gemm is not. The message calls the chunk's source what it is, not a
// bias.
func.func @chunk_of_gemm(%x: tensor<4x4xf32>) -> tensor<4x?xf32> {
  %p = shardlin.gemm %x, %x : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  // expected-error@+1 {{'shardlin.local_chunk' op cannot be differentiated: the value it takes its chunk of is computed by 'shardlin.gemm', whose value may differ between ranks; the value a local_chunk takes its chunk of (a bias, or a replicated activation) is the same on every rank (a function argument, or computed from arguments and constants by elementwise ops and reshapes) and its gradient is summed over ranks}}
  %c = shardlin.local_chunk %p along <dim = 1, placements = [1, 0, 2]> : tensor<4x4xf32> -> tensor<4x?xf32>
  return %c : tensor<4x?xf32>
}

// -----

// x^n differentiates to n x^(n-1), with n - 1 in i64.
func.func @power_min(%x: tensor<4xf32>) -> tensor<4xf32> {
  %n = arith.constant dense<-9223372036854775808> : tensor<4xi64>
  // expected-error@+1 {{cannot differentiate math.fpowi with the exponent -2^63 (its derivative's exponent n - 1 does not fit 64 bits)}}
  %y = math.fpowi %x, %n : tensor<4xf32>, tensor<4xi64>
  return %y : tensor<4xf32>
}

// -----

// A bias_add's bias computed by a gemm is called a bias.
func.func @bias_of_gemm(%x: tensor<4x4xf32>, %r: tensor<1x4xf32>) -> tensor<4x4xf32> {
  %p = shardlin.gemm %r, %x : (tensor<1x4xf32>, tensor<4x4xf32>) -> tensor<1x4xf32>
  %b = tensor.collapse_shape %p [[0, 1]] : tensor<1x4xf32> into tensor<4xf32>
  // expected-error@+1 {{'shardlin.bias_add' op cannot be differentiated: its bias is computed by 'shardlin.gemm', whose value may differ between ranks; a bias is the same on every rank}}
  %y = shardlin.bias_add %x, %b : tensor<4x4xf32>, tensor<4xf32>
  return %y : tensor<4x4xf32>
}

// -----

// expected-error@+1 {{cannot generate the backward of a function with more than one block}}
func.func @branches(%x: tensor<4xf32>, %c: i1) -> tensor<4xf32> {
  cf.cond_br %c, ^a, ^b
^a:
  return %x : tensor<4xf32>
^b:
  return %x : tensor<4xf32>
}

// -----

// expected-error@+1 {{cannot generate the backward of a function with an argument of type 'tensor<4xi1>' (a gradient is a float tensor)}}
func.func @boolean(%c: tensor<4xi1>, %x: tensor<4xf32>) -> tensor<4xf32> {
  %y = arith.select %c, %x, %x : tensor<4xi1>, tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// from_local is differentiated where it makes a result; not where another op
// reads its sharded value.
!fl = !shardlin.sharded<tensor<8x4xf32>, #shardlin.chunk<dim = 0, placements = [0, 1]>>
func.func @from_local_read(%x: tensor<4x4xf32>) -> (!fl, tensor<4x4xf32>) {
  // expected-error@+1 {{cannot differentiate 'shardlin.from_local' whose result is used by other ops than the return}}
  %s = shardlin.from_local %x : tensor<4x4xf32> -> !fl
  %l = shardlin.local_shard %s : !fl -> tensor<4x4xf32>
  return %s, %l : !fl, tensor<4x4xf32>
}

// -----

// MISSING: error: shardlin-generate-backward: no function named 'missing'
