// An op whose result nothing reads is dropped before the program is
// translated (issue 27, finding 10): a dead op the plan executor cannot run
// (here an unused linalg.softmax and the tensor.empty it writes into) is
// no reason to refuse the module, which runs and matches npytool's float64
// reference on every rank. A live softmax is still refused. (The issue's
// unused linalg.transpose runs now, dead or live: rank-local transposes are
// plan-executor ops since issue 29.)

// RUN: rm -rf %t && mkdir -p %t && split-file %s %t
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 10 --k 7 --batch-shape 5 --world-size 3 --seed 45 --out-dir %t/d
// RUN: shardlin-run %t/dead.mlir --arg=%t/d/x.{rank}.npy --arg=%t/d/w.npy --out=%t/d/y.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/d --out '%t/d/y.{rank}.npy' --world-size 3 | FileCheck %s --check-prefix=OK3
// OK3: ok: 3 ranks
// RUN: shardlin-run %t/dead.mlir --emit-program=%t/dead.prog
// RUN: FileCheck %s --check-prefix=PROGRAM --input-file=%t/dead.prog
// PROGRAM-NOT: softmax
// PROGRAM: instr gemm
// RUN: not shardlin-run %t/live.mlir --emit-program=%t/live.prog 2>&1 | FileCheck %s --check-prefix=LIVE
// LIVE: error: the shardlin runtime cannot execute 'linalg.softmax'

//--- dead.mlir
func.func @main(%x: tensor<5x7xf32>,
                %w: !shardlin.sharded<tensor<10x7xf32>, #shardlin.chunk<dim = 0, placements = [1, 2, 0]>>) -> tensor<5x10xf32> {
  %e = tensor.empty() : tensor<5x7xf32>
  %s = linalg.softmax dimension(1) ins(%x : tensor<5x7xf32>) outs(%e : tensor<5x7xf32>) -> tensor<5x7xf32>
  %y = shardlin.linear %x, %w : (tensor<5x7xf32>, !shardlin.sharded<tensor<10x7xf32>, #shardlin.chunk<dim = 0, placements = [1, 2, 0]>>) -> tensor<5x10xf32>
  return %y : tensor<5x10xf32>
}

//--- live.mlir
func.func @main(%x: tensor<5x7xf32>) -> tensor<5x7xf32> {
  %e = tensor.empty() : tensor<5x7xf32>
  %s = linalg.softmax dimension(1) ins(%x : tensor<5x7xf32>) outs(%e : tensor<5x7xf32>) -> tensor<5x7xf32>
  return %s : tensor<5x7xf32>
}
