// Training an attention layer on a DP x TP grid averages the gradients of
// every parameter over the replicas (shardlin-run --grid, docs/training.md,
// "Grids"), including the two an attention layer has that are not a
// linear's: the RMSNorm's weight (a replicated vector broadcast along the
// rows) and, with more ranks than kv heads, K's and V's weights (replicated,
// a shardlin.gemm's rhs; the lowering slices each rank's kv heads of them).
// @f is those pieces of examples/attention/layer.mlir: h = rms_norm(x, n),
// y = h wq^T (col-wise, 7 features over 3 ranks: 3, 2, 2) + h wk^T (wk
// replicated). On 2 x 3 ranks, each replica its own x and dy: every rank's
// dx (its replica's own) and the averaged dn, dwq, dwk of both replicas
// against float64 gradients (Inputs/attention_grid.py gen-params), f32
// within 1e-5 of each gradient's largest magnitude.

// RUN: rm -rf %t && mkdir -p %t/o
// RUN: shardlin-opt %s '--shardlin-generate-backward=functions=f recompute=always' -o %t/bw.mlir
// RUN: %python %S/Inputs/attention_grid.py gen-params --replicas 2 --world-size 3 --seed 1 --out-dir %t/d
// RUN: shardlin-run %t/bw.mlir --grid=2x3 --entry=f_backward --arg='%t/d/x.{replica}.{rank}.npy' --arg=%t/d/n.npy --arg=%t/d/wq.npy --arg=%t/d/wk.npy --arg='%t/d/dy.{replica}.{rank}.npy' --out='%t/o/dx.{replica}.{rank}.npy' --out='%t/o/dn.{replica}.npy' --out='%t/o/dwq.{replica}.npy' --out='%t/o/dwk.{replica}.npy'
// RUN: %python %S/Inputs/attention_grid.py check-params --dir %t/d --out %t/o/ --replicas 2 --world-size 3 | FileCheck %s
// CHECK: ok: dx dn dwq dwk, 2 replicas x 3 ranks

// RUN: %if mpi %{ timeout 120 mpirun --allow-run-as-root --oversubscribe -np 6 shardlin-run %t/bw.mlir --backend=mpi --grid=2x3 --entry=f_backward --arg='%t/d/x.{replica}.{rank}.npy' --arg=%t/d/n.npy --arg=%t/d/wq.npy --arg=%t/d/wk.npy --arg='%t/d/dy.{replica}.{rank}.npy' --out='%t/o/mdx.{replica}.{rank}.npy' --out='%t/o/mdn.{replica}.npy' --out='%t/o/mdwq.{replica}.npy' --out='%t/o/mdwk.{replica}.npy' %}
// RUN: %if mpi %{ %python %S/Inputs/attention_grid.py check-params --dir %t/d --out %t/o/m --replicas 2 --world-size 3 | FileCheck %s %}

// One replica's gradients alone (its own sum over its ranks, not averaged
// with the other's) fail the check: dn and dwk are parameters' gradients.
// RUN: mkdir -p %t/one
// RUN: shardlin-run %t/bw.mlir --world-size=3 --entry=f_backward --arg='%t/d/x.0.{rank}.npy' --arg=%t/d/n.npy --arg=%t/d/wq.npy --arg=%t/d/wk.npy --arg='%t/d/dy.0.{rank}.npy' --out='%t/one/dx.0.{rank}.npy' --out=%t/one/dn.0.npy --out=%t/one/dwq.0.npy --out=%t/one/dwk.0.npy
// RUN: not %python %S/Inputs/attention_grid.py check-params --dir %t/d --out %t/one/ --replicas 1 --world-size 3 | FileCheck %s --check-prefix=BAD
// BAD: MISMATCH: {{.*}}one/d{{n|wq|wk}}.0.npy relative error

// The same function with its norm in a helper, as examples/attention/layer.mlir
// writes it (@f_call): the grid finds the norm's weight through the call.
// @f's backward is @f_call's (the same function, the call inlined); pointed
// at @f_call, the grid reads @f_call's parameters.
// RUN: sed 's/shardlin.backward_of = @f}/shardlin.backward_of = @f_call}/' %t/bw.mlir > %t/bw-call.mlir
// RUN: FileCheck %s --check-prefix=CALL < %t/bw-call.mlir
// CALL: func.func @f_backward({{.*}} attributes {shardlin.backward_of = @f_call}
// RUN: shardlin-run %t/bw-call.mlir --grid=2x3 --entry=f_backward --arg='%t/d/x.{replica}.{rank}.npy' --arg=%t/d/n.npy --arg=%t/d/wq.npy --arg=%t/d/wk.npy --arg='%t/d/dy.{replica}.{rank}.npy' --out='%t/o/cdx.{replica}.{rank}.npy' --out='%t/o/cdn.{replica}.npy' --out='%t/o/cdwq.{replica}.npy' --out='%t/o/cdwk.{replica}.npy'
// RUN: %python %S/Inputs/attention_grid.py check-params --dir %t/d --out %t/o/c --replicas 2 --world-size 3 | FileCheck %s

!wq = !shardlin.sharded<tensor<7x8xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2]>>
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0, 0)>
#col = affine_map<(d0, d1) -> (d1)>

func.func @f(%x: tensor<4x8xf32>, %nw: tensor<8xf32> {shardlin.replicated}, %wq: !wq,
             %wk: tensor<7x8xf32> {shardlin.replicated}) -> tensor<4x7xf32> {
  // RMSNorm of each row: x * rsqrt(mean(x^2) + eps) * nw.
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 8.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %e1 = tensor.empty() : tensor<4x1xf32>
  %sq = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %a : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4x1xf32>) -> tensor<4x1xf32>
  %ss = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%sq : tensor<4x8xf32>) outs(%z : tensor<4x1xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  } -> tensor<4x1xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%ss : tensor<4x1xf32>) outs(%e1 : tensor<4x1xf32>) {
  ^bb0(%a: f32, %o: f32):
    %mean = arith.divf %a, %n : f32
    %v = arith.addf %mean, %eps : f32
    %q = math.rsqrt %v : f32
    linalg.yield %q : f32
  } -> tensor<4x1xf32>
  %h = linalg.generic {indexing_maps = [#id, #row, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %r, %nw : tensor<4x8xf32>, tensor<4x1xf32>, tensor<8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32, %o: f32):
    %t = arith.mulf %a, %b : f32
    %u = arith.mulf %t, %c : f32
    linalg.yield %u : f32
  } -> tensor<4x8xf32>
  // Q col-wise, K replicated (the layer's K and V with more ranks than kv heads).
  %qy = shardlin.linear %h, %wq : (tensor<4x8xf32>, !wq) -> tensor<4x7xf32>
  %ky = shardlin.gemm %h, %wk transpose_rhs : (tensor<4x8xf32>, tensor<7x8xf32>) -> tensor<4x7xf32>
  %y = arith.addf %qy, %ky : tensor<4x7xf32>
  return %y : tensor<4x7xf32>
}

func.func private @rms_norm(%x: tensor<4x8xf32>, %w: tensor<8xf32>) -> tensor<4x8xf32> {
  // RMSNorm of each row: x * rsqrt(mean(x^2) + eps) * nw.
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 8.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %e1 = tensor.empty() : tensor<4x1xf32>
  %sq = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %a : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4x1xf32>) -> tensor<4x1xf32>
  %ss = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%sq : tensor<4x8xf32>) outs(%z : tensor<4x1xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  } -> tensor<4x1xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%ss : tensor<4x1xf32>) outs(%e1 : tensor<4x1xf32>) {
  ^bb0(%a: f32, %o: f32):
    %mean = arith.divf %a, %n : f32
    %v = arith.addf %mean, %eps : f32
    %q = math.rsqrt %v : f32
    linalg.yield %q : f32
  } -> tensor<4x1xf32>
  %y = linalg.generic {indexing_maps = [#id, #row, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %r, %w : tensor<4x8xf32>, tensor<4x1xf32>, tensor<8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32, %o: f32):
    %t = arith.mulf %a, %b : f32
    %u = arith.mulf %t, %c : f32
    linalg.yield %u : f32
  } -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

func.func @f_call(%x: tensor<4x8xf32>, %nw: tensor<8xf32> {shardlin.replicated}, %wq: !wq,
             %wk: tensor<7x8xf32> {shardlin.replicated}) -> tensor<4x7xf32> {
  %h = func.call @rms_norm(%x, %nw) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  // Q col-wise, K replicated (the layer's K and V with more ranks than kv heads).
  %qy = shardlin.linear %h, %wq : (tensor<4x8xf32>, !wq) -> tensor<4x7xf32>
  %ky = shardlin.gemm %h, %wk transpose_rhs : (tensor<4x8xf32>, tensor<7x8xf32>) -> tensor<4x7xf32>
  %y = arith.addf %qy, %ky : tensor<4x7xf32>
  return %y : tensor<4x7xf32>
}
