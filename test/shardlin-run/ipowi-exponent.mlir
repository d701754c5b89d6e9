// math.fpowi whose exponent integer size computations (math.ipowi,
// arith.subi: the index math an importer may write) compute from constants:
// the exponent is folded (3^2 - 3 = 6), and the chain runs on the plan
// executor and through --jit, and its backward differentiates it
// (6 x^5). The values are exact in f32: every result is checked exactly.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python -c "import sys; sys.path.insert(0, '%shardlin_src/testing/tools'); import npytool; npytool.write_npy('%t/x.npy', '<f4', [1, 4], [0.5, 1.5, 2.0, -1.0]); npytool.write_npy('%t/dy.npy', '<f4', [1, 4], [1.0, 1.0, 1.0, 0.5])"
// RUN: shardlin-run %s --world-size=1 --arg=%t/x.npy --out=%t/y.npy
// RUN: %python -c "import sys; sys.path.insert(0, '%shardlin_src/testing/tools'); import npytool; print(npytool.read_npy('%t/y.npy')[2])" | FileCheck %s --check-prefix=Y
// RUN: shardlin-run %s --jit --world-size=1 --arg=%t/x.npy --out=%t/yj.npy
// RUN: %python -c "import sys; sys.path.insert(0, '%shardlin_src/testing/tools'); import npytool; print(npytool.read_npy('%t/yj.npy')[2])" | FileCheck %s --check-prefix=Y
// Y: [0.015625, 11.390625, 64.0, 1.0]
// RUN: shardlin-opt %s --shardlin-generate-backward -o %t/bw.mlir
// RUN: shardlin-run %t/bw.mlir --entry=main_backward --world-size=1 --arg=%t/x.npy --arg=%t/dy.npy --out=%t/dx.npy
// RUN: %python -c "import sys; sys.path.insert(0, '%shardlin_src/testing/tools'); import npytool; print(npytool.read_npy('%t/dx.npy')[2])" | FileCheck %s --check-prefix=DX
// RUN: shardlin-run %t/bw.mlir --jit --entry=main_backward --world-size=1 --arg=%t/x.npy --arg=%t/dy.npy --out=%t/dxj.npy
// RUN: %python -c "import sys; sys.path.insert(0, '%shardlin_src/testing/tools'); import npytool; print(npytool.read_npy('%t/dxj.npy')[2])" | FileCheck %s --check-prefix=DX
// DX: [0.1875, 45.5625, 192.0, -3.0]
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @main(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %c2 = arith.constant 2 : i64
  %c3 = arith.constant 3 : i64
  %n = math.ipowi %c3, %c2 : i64
  %e = arith.subi %n, %c3 : i64
  %0 = tensor.empty() : tensor<1x4xf32>
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<1x4xf32>) outs(%0 : tensor<1x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %p = math.fpowi %in, %e : f32, i64
    linalg.yield %p : f32
  } -> tensor<1x4xf32>
  return %y : tensor<1x4xf32>
}
