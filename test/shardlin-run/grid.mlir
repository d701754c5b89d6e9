// shardlin-run --grid=DPxTP (docs/training.md, "Grids"): two replicas of a
// backward function on 2 ranks each, 4 ranks in all, each replica on its own
// inputs and results' gradients ({replica} in the paths) with the same
// weights; the weight's and the bias's gradients averaged over the
// replicas, the inputs' gradients each replica's own; every rank of every
// replica checked against the dense model's float64 gradients
// (Inputs/linear_grads.py --replicas). Threads, compiled to native code
// (--jit), under mpirun, and on cuda-local where a GPU is usable.

// RUN: rm -rf %t && mkdir -p %t/o
// RUN: shardlin-opt %s '--shardlin-generate-backward=strategy=activations recompute=always' -o %t/bw.mlir
// N = 5 over 2 ranks (chunks 3 and 2), placements [1, 0], f32.
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 5 --k 7 --batch-shape 3 --world-size 2 --bias --seed 41 --out-dir %t/r0
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 5 --k 7 --batch-shape 3 --world-size 2 --bias --seed 42 --out-dir %t/r1
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 1 --k 5 --batch-shape 3 --world-size 2 --seed 43 --out-dir %t/dy0
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 1 --k 5 --batch-shape 3 --world-size 2 --seed 44 --out-dir %t/dy1
// RUN: shardlin-run %t/bw.mlir --grid=2x2 --entry=col_backward --arg='%t/r{replica}/x.{rank}.npy' --arg=%t/r0/w.npy --arg=%t/r0/b.npy --arg='%t/dy{replica}/x.{rank}.npy' --out='%t/o/dx.{replica}.{rank}.npy' --out='%t/o/dw.{replica}.npy' --out='%t/o/db.{replica}.{rank}.npy'
// RUN: %python %S/Inputs/linear_grads.py '%t/r{replica}' 2 '%t/dy{replica}/x.{rank}.npy' '%t/o/dx.{replica}.{rank}.npy' '%t/o/dw.{replica}.npy' '%t/o/db.{replica}.{rank}.npy' --replicas 2 | FileCheck %s
// CHECK: ok: 2 ranks x 2 replicas

// RUN: shardlin-run --jit %t/bw.mlir --grid=2x2 --world-size=4 --entry=col_backward --arg='%t/r{replica}/x.{rank}.npy' --arg=%t/r0/w.npy --arg=%t/r0/b.npy --arg='%t/dy{replica}/x.{rank}.npy' --out='%t/o/jdx.{replica}.{rank}.npy' --out='%t/o/jdw.{replica}.npy' --out='%t/o/jdb.{replica}.{rank}.npy'
// RUN: %python %S/Inputs/linear_grads.py '%t/r{replica}' 2 '%t/dy{replica}/x.{rank}.npy' '%t/o/jdx.{replica}.{rank}.npy' '%t/o/jdw.{replica}.npy' '%t/o/jdb.{replica}.{rank}.npy' --replicas 2 | FileCheck %s

// RUN: %if mpi %{ timeout 120 mpirun --allow-run-as-root --oversubscribe -np 4 shardlin-run %t/bw.mlir --backend=mpi --grid=2x2 --entry=col_backward --arg='%t/r{replica}/x.{rank}.npy' --arg=%t/r0/w.npy --arg=%t/r0/b.npy --arg='%t/dy{replica}/x.{rank}.npy' --out='%t/o/mdx.{replica}.{rank}.npy' --out='%t/o/mdw.{replica}.npy' --out='%t/o/mdb.{replica}.{rank}.npy' %}
// RUN: %if mpi %{ %python %S/Inputs/linear_grads.py '%t/r{replica}' 2 '%t/dy{replica}/x.{rank}.npy' '%t/o/mdx.{replica}.{rank}.npy' '%t/o/mdw.{replica}.npy' '%t/o/mdb.{replica}.{rank}.npy' --replicas 2 | FileCheck %s %}

// An MPI job of the wrong size for the grid.
// RUN: %if mpi %{ not timeout 120 mpirun --allow-run-as-root --oversubscribe -np 3 shardlin-run %t/bw.mlir --backend=mpi --grid=2x2 --entry=col_backward --arg='%t/r{replica}/x.{rank}.npy' --arg=%t/r0/w.npy --arg=%t/r0/b.npy --arg='%t/dy{replica}/x.{rank}.npy' --out='%t/o/ndx.{replica}.{rank}.npy' --out='%t/o/ndw.{replica}.npy' --out='%t/o/ndb.{replica}.{rank}.npy' > %t/np3.txt 2>&1 %}
// RUN: %if mpi %{ FileCheck %s --check-prefix=NP3 < %t/np3.txt %}
// NP3: error: --grid=2x2 has 4 ranks, but the MPI job has 3 processes: run it with mpirun -np 4

// One replica's missing input stops every rank of every replica at once
// (the agreement before the run spans the grid), not after the timeout of
// the other replica's averaging.
// RUN: mkdir -p %t/miss0 %t/miss1 && cp %t/r0/x.0.npy %t/r0/x.1.npy %t/miss0/ && cp %t/r1/x.0.npy %t/miss1/
// RUN: not timeout 60 shardlin-run %t/bw.mlir --grid=2x2 --timeout=300 --verbose --entry=col_backward --arg='%t/miss{replica}/x.{rank}.npy' --arg=%t/r0/w.npy --arg=%t/r0/b.npy --arg='%t/dy{replica}/x.{rank}.npy' --out='%t/o/mdx.{replica}.{rank}.npy' --out='%t/o/mdw.{replica}.npy' --out='%t/o/mdb.{replica}.{rank}.npy' 2>&1 | FileCheck %s --check-prefix=MISS
// MISS-DAG: rank 0: {{.*}}failed: replica 0: rank 0: stopped because a rank of another replica failed
// MISS-DAG: rank 1: {{.*}}failed: replica 0: rank 1: stopped because a rank of another replica failed
// MISS-DAG: rank 3: {{.*}}failed: replica 1: rank 1: argument 0: '{{.*}}miss1/x.1.npy': cannot open
// MISS: error: replica 1: rank 1: argument 0: '{{.*}}miss1/x.1.npy': cannot open: No such file or directory

// On a GPU: the same grid on cuda-local, 4 ranks sharing cuda:0, the
// parameters' gradients averaged in device memory.
// RUN: %if gpu %{ shardlin-run %t/bw.mlir --backend=cuda-local --grid=2x2 --entry=col_backward --arg='%t/r{replica}/x.{rank}.npy' --arg=%t/r0/w.npy --arg=%t/r0/b.npy --arg='%t/dy{replica}/x.{rank}.npy' --out='%t/o/gdx.{replica}.{rank}.npy' --out='%t/o/gdw.{replica}.npy' --out='%t/o/gdb.{replica}.{rank}.npy' %}
// RUN: %if gpu %{ %python %S/Inputs/linear_grads.py '%t/r{replica}' 2 '%t/dy{replica}/x.{rank}.npy' '%t/o/gdx.{replica}.{rank}.npy' '%t/o/gdw.{replica}.npy' '%t/o/gdb.{replica}.{rank}.npy' --replicas 2 | FileCheck %s %}

// Errors: a grid that does not match the program, the world size or the
// form; an output every replica would write.
// RUN: not shardlin-run %t/bw.mlir --grid=2x3 --entry=col_backward 2>&1 | FileCheck %s --check-prefix=TP
// TP: error: --grid=2x3: 'col_backward' runs on 2 ranks, not 3
// RUN: not shardlin-run %t/bw.mlir --grid=2x2 --world-size=2 --entry=col_backward 2>&1 | FileCheck %s --check-prefix=WORLD
// WORLD: error: --grid=2x2 has 4 ranks; --world-size=2
// RUN: not shardlin-run %t/bw.mlir --grid=2by2 --entry=col_backward 2>&1 | FileCheck %s --check-prefix=FORM
// FORM: error: --grid=2by2: expected DPxTP, two integers >= 1 (e.g. --grid=2x4)
// RUN: not shardlin-run %t/bw.mlir --grid=2x2 --entry=col_backward --arg='%t/r{replica}/x.{rank}.npy' --arg=%t/r0/w.npy --arg=%t/r0/b.npy --arg='%t/dy{replica}/x.{rank}.npy' --out='%t/o/dx.{rank}.npy' --out='%t/o/dw.{replica}.npy' --out='%t/o/db.{replica}.{rank}.npy' 2>&1 | FileCheck %s --check-prefix=SAME
// SAME: error: on a grid every output path needs {replica} (each replica writes its own)
// The whole grid's x (6 rows: both replicas' 3) where each replica reads
// its own: the message says so, and how to name one file per replica.
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 5 --k 7 --batch-shape 6 --world-size 1 --seed 45 --out-dir %t/all
// RUN: not shardlin-run %t/bw.mlir --grid=2x2 --entry=col_backward --arg=%t/all/x.0.npy --arg=%t/r0/w.npy --arg=%t/r0/b.npy --arg='%t/dy{replica}/x.{rank}.npy' --out='%t/o/gx.{replica}.{rank}.npy' --out='%t/o/gw.{replica}.npy' --out='%t/o/gb.{replica}.{rank}.npy' 2>&1 | FileCheck %s --check-prefix=WHOLE
// WHOLE: error: replica {{[01]}}: rank {{[01]}}: argument 0 ({{.*}}all/x.0.npy): shape [6, 7] does not match the entry signature's [3, 7] (one replica's shape: on a grid of 2 replicas each replica reads its own, so give one file per replica with {replica} in the path, e.g. x.{replica}.npy)

func.func @col(%x: tensor<3x7xf32>,
               %w: !shardlin.sharded<tensor<5x7xf32>, #shardlin.chunk<dim = 0, placements = [1, 0]>>,
               %b: tensor<5xf32>) -> tensor<3x5xf32> {
  %y = shardlin.linear %x, %w, %b : (tensor<3x7xf32>, !shardlin.sharded<tensor<5x7xf32>, #shardlin.chunk<dim = 0, placements = [1, 0]>>, tensor<5xf32>) -> tensor<3x5xf32>
  return %y : tensor<3x5xf32>
}
