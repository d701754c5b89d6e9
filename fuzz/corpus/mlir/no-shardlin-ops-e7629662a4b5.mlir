// --lower-sharded-linear is the identity on a module without shardlin ops:
// its output is exactly the plain round trip's.

func.func @mixed(%x: tensor<2x3x8xf32>, %s: f32) -> (tensor<6x8xf32>, tensor<2x3x8xf32>) {
  %e = tensor.empty() : tensor<2x3x8xf32>
  %f = tensor.splat %s : tensor<2x3x8xf32>
  %a = arith.addf %x, %f : tensor<2x3x8xf32>
  %c = tensor.collapse_shape %a [[0, 1], [2]] : tensor<2x3x8xf32> into tensor<6x8xf32>
  return %c, %e : tensor<6x8xf32>, tensor<2x3x8xf32>
}

func.func private @decl(tensor<4xf32>) -> tensor<4xf32>
