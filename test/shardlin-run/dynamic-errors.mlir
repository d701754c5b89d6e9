// What the runtime cannot size is reported at translation, with the op's
// location: an expand_shape whose dynamic output sizes are not the dims of
// one tensor at the same positions (the sizes of several tensors here).
// RUN: not shardlin-run %s --emit-program=%t.prog 2>&1 | FileCheck %s
// RUN: not test -e %t.prog

func.func @main(%x: tensor<?x4xf32>, %y: tensor<?x4xf32>) -> tensor<?x?x4xf32> {
  %c0 = arith.constant 0 : index
  %a = tensor.dim %x, %c0 : tensor<?x4xf32>
  %b = tensor.dim %y, %c0 : tensor<?x4xf32>
  // CHECK: dynamic-errors.mlir:[[@LINE+1]]:8: error: the shardlin runtime executes a tensor.expand_shape to 'tensor<?x?x4xf32>' only when its dynamic sizes are the dims of one tensor of the same rank at the same positions (tensor.dim %t, i for dim i), or sizes its reassociation groups give (an operand dim over the group's static dims) but one
  %e = tensor.expand_shape %x [[0, 1], [2]] output_shape [%a, %b, 4] : tensor<?x4xf32> into tensor<?x?x4xf32>
  return %e : tensor<?x?x4xf32>
}
