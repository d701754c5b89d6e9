// Backward functions on the runtime (docs/training.md): functions of
// elementwise ops alone, a saving forward and a linear's backward. The
// derivatives computed by the runtime (threads) against float64 formulas;
// f16 in f32, rounded once.
// RUN: rm -rf %t && mkdir -p %t
// RUN: shardlin-opt %s --shardlin-generate-backward -o %t/bw.mlir
// RUN: %python %S/Inputs/backward_run.py gen %t
// RUN: shardlin-run %t/bw.mlir --world-size=1 --entry=gelu_tanh_backward --arg=%t/x.npy --arg=%t/dy.npy --out=%t/gelu_tanh.npy
// RUN: shardlin-run %t/bw.mlir --world-size=1 --entry=relu_backward --arg=%t/x.npy --arg=%t/dy.npy --out=%t/relu.npy
// RUN: shardlin-run %t/bw.mlir --world-size=1 --entry=gelu_erf16_backward --arg=%t/x16.npy --arg=%t/dy16.npy --out=%t/gelu_erf16.npy
// RUN: %python %S/Inputs/backward_run.py check %t | FileCheck %s
// CHECK: gelu_tanh: max relative error
// CHECK: relu: max relative error 0.0e+00
// CHECK: gelu_erf16: max relative error
// CHECK: ok

// A saving forward on 4 ranks: its result is the layer's, and its saved
// value the gathered rows of every rank's x.
// RUN: shardlin-opt %s '--shardlin-generate-backward=functions=layer strategy=activations recompute=never' -o %t/layer.mlir
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 11 --k 19 --batch-shape 5 --world-size 4 --bias --out-dir %t/d
// RUN: shardlin-run %t/layer.mlir --world-size=4 --strategy=activations --entry=layer_forward_saving --arg='%t/d/x.{rank}.npy' --arg=%t/d/w.npy --arg=%t/d/b.npy --out='%t/d/y.{rank}.npy' --out='%t/d/xg.{rank}.npy'
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/d --out '%t/d/y.{rank}.npy' --world-size 4 | FileCheck %s --check-prefix=SAVING
// RUN: %python %shardlin_src/testing/tools/npytool.py show %t/d/xg.2.npy | FileCheck %s --check-prefix=GATHERED
// SAVING: ok: 4 ranks
// GATHERED: <f4 (20, 19)
// The backward, with y as the results' gradient and the saved gathered x:
// every rank's gradients against the dense model's (more in
// test/shardlin-run/backward.mlir).
// RUN: shardlin-run %t/layer.mlir --world-size=4 --strategy=activations --entry=layer_backward --arg='%t/d/x.{rank}.npy' --arg=%t/d/w.npy --arg=%t/d/b.npy --arg='%t/d/y.{rank}.npy' --arg='%t/d/xg.{rank}.npy' --out='%t/d/dx.{rank}.npy' --out='%t/d/dw.npy' --out='%t/d/db.{rank}.npy'
// RUN: %python %shardlin_src/test/shardlin-run/Inputs/linear_grads.py %t/d 4 '%t/d/y.{rank}.npy' '%t/d/dx.{rank}.npy' %t/d/dw.npy '%t/d/db.{rank}.npy' | FileCheck %s --check-prefix=GRADS
// GRADS: ok: 4 ranks

#id = affine_map<(d0, d1) -> (d0, d1)>

func.func @gelu_tanh(%h: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %half = arith.constant dense<0.5> : tensor<4x8xf32>
  %one = arith.constant dense<1.0> : tensor<4x8xf32>
  %c = arith.constant dense<0.7978845608028654> : tensor<4x8xf32>
  %k = arith.constant dense<0.044715> : tensor<4x8xf32>
  %h2 = arith.mulf %h, %h : tensor<4x8xf32>
  %h3 = arith.mulf %h2, %h : tensor<4x8xf32>
  %t0 = arith.mulf %k, %h3 : tensor<4x8xf32>
  %t1 = arith.addf %h, %t0 : tensor<4x8xf32>
  %t2 = arith.mulf %c, %t1 : tensor<4x8xf32>
  %t3 = math.tanh %t2 : tensor<4x8xf32>
  %t4 = arith.addf %one, %t3 : tensor<4x8xf32>
  %t5 = arith.mulf %half, %h : tensor<4x8xf32>
  %a = arith.mulf %t5, %t4 : tensor<4x8xf32>
  return %a : tensor<4x8xf32>
}

func.func @gelu_erf16(%x: tensor<4x8xf16>) -> tensor<4x8xf16> {
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x8xf16>) outs(%x : tensor<4x8xf16>) {
  ^bb0(%v: f16, %o: f16):
    %half = arith.constant 0.5 : f16
    %one = arith.constant 1.0 : f16
    %s = arith.constant 0.70710678 : f16
    %t = arith.mulf %v, %s : f16
    %e = math.erf %t : f16
    %p = arith.addf %one, %e : f16
    %h = arith.mulf %half, %v : f16
    %r = arith.mulf %h, %p : f16
    linalg.yield %r : f16
  } -> tensor<4x8xf16>
  return %a : tensor<4x8xf16>
}

func.func @relu(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %z = arith.constant dense<0.0> : tensor<4x8xf32>
  %a = arith.maximumf %x, %z : tensor<4x8xf32>
  return %a : tensor<4x8xf32>
}

!w = !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 0, placements = [2, 3, 0, 1]>>
func.func @layer(%x: tensor<5x19xf32>, %w: !w, %b: tensor<11xf32>) -> tensor<5x11xf32> {
  %y = shardlin.linear %x, %w, %b : (tensor<5x19xf32>, !w, tensor<11xf32>) -> tensor<5x11xf32>
  return %y : tensor<5x11xf32>
}
