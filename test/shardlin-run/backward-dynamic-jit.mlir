// Backward functions of linears whose batch size is known only at run time
// and differs by rank (2, 0, 5 and 1 rows; 2, 0, 1 and 3 rows of 3),
// compiled by --jit: the compiled code exchanges the ranks' row counts
// (shardlin.gather_bounds) before the collectives that stack the rows and
// split them back, on threads and under mpirun. Every rank's gradients
// against the dense model's float64 ones (Inputs/linear_grads.py).
// RUN: rm -rf %t && mkdir -p %t
// RUN: shardlin-opt %s '--shardlin-generate-backward=functions=col,row strategy=activations recompute=always' -o %t/b.mlir
// RUN: FileCheck %s --check-prefix=IR --input-file=%t/b.mlir
// IR-LABEL: func.func @col_backward
// IR: shardlin.linear
// RUN: shardlin-opt %t/b.mlir --lower-sharded-linear=strategy=activations --shardlin-localize-sharded --shardlin-prepare-native | FileCheck %s --check-prefix=NATIVE
// NATIVE-LABEL: func.func @col_backward
// NATIVE: %[[B:.*]] = shardlin.gather_bounds %{{.*}} along <dim = 0, placements = [0, 1, 2, 3]> : tensor<?x19xf32> -> tensor<5xi64>
// NATIVE: shardlin.all_gather %{{.*}} along <dim = 0, placements = [0, 1, 2, 3]> bounds(%[[B]] : tensor<5xi64>)

// Col-wise, f32.
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 11 --k 19 --batch-shape 2,0,5,1 --world-size 4 --bias --seed 31 --out-dir %t/c
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 1 --k 11 --batch-shape 2,0,5,1 --world-size 4 --seed 32 --out-dir %t/cdy
// RUN: shardlin-run --jit %t/b.mlir --world-size=4 --strategy=activations --entry=col_backward --arg='%t/c/x.{rank}.npy' --arg=%t/c/w.npy --arg=%t/c/b.npy --arg='%t/cdy/x.{rank}.npy' --out='%t/c/dx.{rank}.npy' --out=%t/c/dw.npy --out='%t/c/db.{rank}.npy'
// RUN: %python %S/Inputs/linear_grads.py %t/c 4 '%t/cdy/x.{rank}.npy' '%t/c/dx.{rank}.npy' %t/c/dw.npy '%t/c/db.{rank}.npy' | FileCheck %s

// Row-wise, f64, 3-D x.
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 6 --k 5 --batch-shape 2x3,0x3,1x3,3x3 --world-size 4 --bias --dtype f64 --seed 33 --out-dir %t/r
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 1 --k 6 --batch-shape 2x3,0x3,1x3,3x3 --world-size 4 --dtype f64 --seed 34 --out-dir %t/rdy
// RUN: shardlin-run --jit %t/b.mlir --world-size=4 --strategy=activations --entry=row_backward --arg='%t/r/x.{rank}.npy' --arg=%t/r/w.npy --arg=%t/r/b.npy --arg='%t/rdy/x.{rank}.npy' --out='%t/r/dx.{rank}.npy' --out=%t/r/dw.npy --out='%t/r/db.{rank}.npy'
// RUN: %python %S/Inputs/linear_grads.py %t/r 4 '%t/rdy/x.{rank}.npy' '%t/r/dx.{rank}.npy' %t/r/dw.npy '%t/r/db.{rank}.npy' | FileCheck %s
// RUN: %if mpi %{ timeout 120 mpirun --allow-run-as-root --oversubscribe -np 4 shardlin-run --jit %t/b.mlir --backend=mpi --world-size=4 --strategy=activations --entry=row_backward --arg='%t/r/x.{rank}.npy' --arg=%t/r/w.npy --arg=%t/r/b.npy --arg='%t/rdy/x.{rank}.npy' --out='%t/r/mdx.{rank}.npy' --out=%t/r/mdw.npy --out='%t/r/mdb.{rank}.npy' %}
// RUN: %if mpi %{ %python %S/Inputs/linear_grads.py %t/r 4 '%t/rdy/x.{rank}.npy' '%t/r/mdx.{rank}.npy' %t/r/mdw.npy '%t/r/mdb.{rank}.npy' | FileCheck %s %}
// CHECK: ok: 4 ranks

func.func @col(%x: tensor<?x19xf32>,
               %w: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 0, placements = [2, 3, 0, 1]>>,
               %b: tensor<11xf32>) -> tensor<?x11xf32> {
  %y = shardlin.linear %x, %w, %b : (tensor<?x19xf32>, !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 0, placements = [2, 3, 0, 1]>>, tensor<11xf32>) -> tensor<?x11xf32>
  return %y : tensor<?x11xf32>
}

func.func @row(%x: tensor<?x3x5xf64>,
               %w: !shardlin.sharded<tensor<6x5xf64>, #shardlin.chunk<dim = 1, placements = [1, 2, 3, 0]>>,
               %b: tensor<6xf64>) -> tensor<?x3x6xf64> {
  %y = shardlin.linear %x, %w, %b : (tensor<?x3x5xf64>, !shardlin.sharded<tensor<6x5xf64>, #shardlin.chunk<dim = 1, placements = [1, 2, 3, 0]>>, tensor<6xf64>) -> tensor<?x3x6xf64>
  return %y : tensor<?x3x6xf64>
}
