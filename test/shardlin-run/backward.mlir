// shardlin-run --entry runs a backward function (issue 26): @col and @row
// through --shardlin-generate-backward, then @col_backward / @row_backward
// (and @col_forward_saving for the saved variant) run on W ranks, every
// rank's input and bias gradient and the weight's gradient (assembled from
// every rank's chunk, and each rank's own chunk with a {rank} path) checked
// against the dense model's float64 gradients (Inputs/linear_grads.py).
// Threads, compiled to native code (--jit), and under mpirun.

// RUN: rm -rf %t && mkdir -p %t
// RUN: shardlin-opt %s '--shardlin-generate-backward=functions=col strategy=activations recompute=always' -o %t/col.mlir
// RUN: shardlin-opt %s '--shardlin-generate-backward=functions=col strategy=activations recompute=never' -o %t/col-saved.mlir
// RUN: shardlin-opt %s '--shardlin-generate-backward=functions=row strategy=activations recompute=always' -o %t/row.mlir

// Col-wise: N = 11 over 4 ranks (chunks 3, 3, 3, 2), placements [2, 3, 0, 1], f32.
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 11 --k 19 --batch-shape 5 --world-size 4 --bias --seed 31 --out-dir %t/c
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 1 --k 11 --batch-shape 5 --world-size 4 --seed 32 --out-dir %t/cdy
// RUN: shardlin-run %t/col.mlir --world-size=4 --strategy=activations --entry=col_backward --arg='%t/c/x.{rank}.npy' --arg=%t/c/w.npy --arg=%t/c/b.npy --arg='%t/cdy/x.{rank}.npy' --out='%t/c/dx.{rank}.npy' --out=%t/c/dw.npy --out='%t/c/db.{rank}.npy'
// RUN: shardlin-run %t/col.mlir --world-size=4 --strategy=activations --entry=col_backward --arg='%t/c/x.{rank}.npy' --arg=%t/c/w.npy --arg=%t/c/b.npy --arg='%t/cdy/x.{rank}.npy' --out='%t/c/dx2.{rank}.npy' --out='%t/c/dw.{rank}.npy' --out='%t/c/db2.{rank}.npy'
// RUN: %python %S/Inputs/linear_grads.py %t/c 4 '%t/cdy/x.{rank}.npy' '%t/c/dx.{rank}.npy' %t/c/dw.npy '%t/c/db.{rank}.npy' --dw-chunks '%t/c/dw.{rank}.npy' --dim 0 --placements 2,3,0,1 | FileCheck %s
// CHECK: ok: 4 ranks

// The same through native code.
// RUN: shardlin-run --jit %t/col.mlir --world-size=4 --strategy=activations --entry=col_backward --arg='%t/c/x.{rank}.npy' --arg=%t/c/w.npy --arg=%t/c/b.npy --arg='%t/cdy/x.{rank}.npy' --out='%t/c/jdx.{rank}.npy' --out=%t/c/jdw.npy --out='%t/c/jdb.{rank}.npy'
// RUN: %python %S/Inputs/linear_grads.py %t/c 4 '%t/cdy/x.{rank}.npy' '%t/c/jdx.{rank}.npy' %t/c/jdw.npy '%t/c/jdb.{rank}.npy' | FileCheck %s

// Saved: @col_forward_saving's second result (the gathered x) passed on.
// RUN: shardlin-run %t/col-saved.mlir --world-size=4 --strategy=activations --entry=col_forward_saving --arg='%t/c/x.{rank}.npy' --arg=%t/c/w.npy --arg=%t/c/b.npy --out='%t/c/y.{rank}.npy' --out='%t/c/xg.{rank}.npy'
// RUN: shardlin-run %t/col-saved.mlir --world-size=4 --strategy=activations --entry=col_backward --arg='%t/c/x.{rank}.npy' --arg=%t/c/w.npy --arg=%t/c/b.npy --arg='%t/cdy/x.{rank}.npy' --arg='%t/c/xg.{rank}.npy' --out='%t/c/sdx.{rank}.npy' --out=%t/c/sdw.npy --out='%t/c/sdb.{rank}.npy'
// RUN: %python %S/Inputs/linear_grads.py %t/c 4 '%t/cdy/x.{rank}.npy' '%t/c/sdx.{rank}.npy' %t/c/sdw.npy '%t/c/sdb.{rank}.npy' | FileCheck %s
// The same through native code: the saved argument's annotation
// (shardlin.saved) is not passed on to LLVM, whose translation warned
// "Unhandled parameter attribute" for it; nothing on stderr.
// RUN: shardlin-run --jit %t/col-saved.mlir --world-size=4 --strategy=activations --entry=col_backward --arg='%t/c/x.{rank}.npy' --arg=%t/c/w.npy --arg=%t/c/b.npy --arg='%t/cdy/x.{rank}.npy' --arg='%t/c/xg.{rank}.npy' --out='%t/c/jsdx.{rank}.npy' --out=%t/c/jsdw.npy --out='%t/c/jsdb.{rank}.npy' 2> %t/c/jit-saved.err
// RUN: count 0 < %t/c/jit-saved.err
// RUN: %python %S/Inputs/linear_grads.py %t/c 4 '%t/cdy/x.{rank}.npy' '%t/c/jsdx.{rank}.npy' %t/c/jsdw.npy '%t/c/jsdb.{rank}.npy' | FileCheck %s

// Row-wise: K = 5 over 4 ranks (chunks 2, 2, 1, 0: one empty), placements
// [1, 2, 3, 0], a 2 x 3 batch, f64; threads and under mpirun.
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 6 --k 5 --batch-shape 2x3 --world-size 4 --bias --dtype f64 --seed 33 --out-dir %t/r
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 1 --k 6 --batch-shape 2x3 --world-size 4 --dtype f64 --seed 34 --out-dir %t/rdy
// RUN: shardlin-run %t/row.mlir --world-size=4 --strategy=activations --entry=row_backward --arg='%t/r/x.{rank}.npy' --arg=%t/r/w.npy --arg=%t/r/b.npy --arg='%t/rdy/x.{rank}.npy' --out='%t/r/dx.{rank}.npy' --out=%t/r/dw.npy --out='%t/r/db.{rank}.npy'
// RUN: %python %S/Inputs/linear_grads.py %t/r 4 '%t/rdy/x.{rank}.npy' '%t/r/dx.{rank}.npy' %t/r/dw.npy '%t/r/db.{rank}.npy' | FileCheck %s
// RUN: %if mpi %{ timeout 120 mpirun --allow-run-as-root --oversubscribe -np 4 shardlin-run %t/row.mlir --backend=mpi --world-size=4 --strategy=activations --entry=row_backward --arg='%t/r/x.{rank}.npy' --arg=%t/r/w.npy --arg=%t/r/b.npy --arg='%t/rdy/x.{rank}.npy' --out='%t/r/mdx.{rank}.npy' --out=%t/r/mdw.npy --out='%t/r/mdb.{rank}.npy' %}
// RUN: %if mpi %{ %python %S/Inputs/linear_grads.py %t/r 4 '%t/rdy/x.{rank}.npy' '%t/r/mdx.{rank}.npy' %t/r/mdw.npy '%t/r/mdb.{rank}.npy' | FileCheck %s %}

// An entry that is not there: the error names the public functions.
// RUN: not shardlin-run %t/col.mlir --world-size=4 --entry=nope_backward 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: error: no function named 'nope_backward' (public functions: col, col_backward, row)

func.func @col(%x: tensor<5x19xf32>,
               %w: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 0, placements = [2, 3, 0, 1]>>,
               %b: tensor<11xf32>) -> tensor<5x11xf32> {
  %y = shardlin.linear %x, %w, %b : (tensor<5x19xf32>, !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 0, placements = [2, 3, 0, 1]>>, tensor<11xf32>) -> tensor<5x11xf32>
  return %y : tensor<5x11xf32>
}

func.func @row(%x: tensor<2x3x5xf64>,
               %w: !shardlin.sharded<tensor<6x5xf64>, #shardlin.chunk<dim = 1, placements = [1, 2, 3, 0]>>,
               %b: tensor<6xf64>) -> tensor<2x3x6xf64> {
  %y = shardlin.linear %x, %w, %b : (tensor<2x3x5xf64>, !shardlin.sharded<tensor<6x5xf64>, #shardlin.chunk<dim = 1, placements = [1, 2, 3, 0]>>, tensor<6xf64>) -> tensor<2x3x6xf64>
  return %y : tensor<2x3x6xf64>
}
