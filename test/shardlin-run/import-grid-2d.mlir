// An upstream module on a 2-D shard.grid (Inputs/upstream-grid-2d.mlir: 2
// data-parallel replicas x 4 tensor-parallel ranks) runs as 2 replicas of
// its 4-rank program without --grid: the import records the replicas
// (shardlin.data_parallel), and shardlin-run runs that grid. Each replica's
// rows come from its own files ({replica}); every output against float64.
// RUN: rm -rf %t && mkdir -p %t/o
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 10 --k 16 --batch-shape 10 --world-size 1 --bias --seed 71 --out-dir %t/r0
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 10 --k 16 --batch-shape 10 --world-size 1 --bias --seed 72 --out-dir %t/r1
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 1 --k 10 --batch-shape 10 --world-size 1 --seed 73 --out-dir %t/dy0
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 1 --k 10 --batch-shape 10 --world-size 1 --seed 74 --out-dir %t/dy1

// The forward, each replica with its own weights here: threads (--verbose
// shows the 8 ranks), --jit, and mpirun -np 8.
// RUN: shardlin-run %S/Inputs/upstream-grid-2d.mlir --entry=col --verbose --arg='%t/r{replica}/x.0.npy' --arg='%t/r{replica}/w.npy' --arg='%t/r{replica}/b.npy' --out='%t/o/y.{replica}.npy' 2>&1 | FileCheck %s --check-prefix=RANKS
// RANKS: shardlin-run: rank 7: plan
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/r0 --out '%t/o/y.0.npy' --world-size 1 | FileCheck %s --check-prefix=FWD
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/r1 --out '%t/o/y.1.npy' --world-size 1 | FileCheck %s --check-prefix=FWD
// The imported arguments' marks (shardlin.replicated) do not reach LLVM,
// whose translation warned "Unhandled parameter attribute" for each:
// nothing on stderr.
// RUN: shardlin-run %S/Inputs/upstream-grid-2d.mlir --entry=col --jit --arg='%t/r{replica}/x.0.npy' --arg='%t/r{replica}/w.npy' --arg='%t/r{replica}/b.npy' --out='%t/o/jy.{replica}.npy' 2> %t/o/jit.err
// RUN: count 0 < %t/o/jit.err
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/r0 --out '%t/o/jy.0.npy' --world-size 1 | FileCheck %s --check-prefix=FWD
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/r1 --out '%t/o/jy.1.npy' --world-size 1 | FileCheck %s --check-prefix=FWD
// RUN: %if mpi %{ timeout 120 mpirun --allow-run-as-root --oversubscribe -np 8 shardlin-run %S/Inputs/upstream-grid-2d.mlir --entry=col --backend=mpi --arg='%t/r{replica}/x.0.npy' --arg='%t/r{replica}/w.npy' --arg='%t/r{replica}/b.npy' --out='%t/o/my.{replica}.npy' %}
// RUN: %if mpi %{ %python %shardlin_src/testing/tools/npytool.py check --dir %t/r0 --out '%t/o/my.0.npy' --world-size 1 | FileCheck %s --check-prefix=FWD %}
// RUN: %if mpi %{ %python %shardlin_src/testing/tools/npytool.py check --dir %t/r1 --out '%t/o/my.1.npy' --world-size 1 | FileCheck %s --check-prefix=FWD %}
// FWD: ok: 1 ranks, max relative error

// Rows known only at run time, split over the replicas: 3 rows in replica
// 0, 5 in replica 1 (each its own weights, no bias), threads and --jit.
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 10 --k 16 --batch-shape 3 --world-size 1 --seed 75 --out-dir %t/d0
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 10 --k 16 --batch-shape 5 --world-size 1 --seed 76 --out-dir %t/d1
// RUN: shardlin-run %S/Inputs/upstream-grid-2d.mlir --entry=rows_dynamic --arg='%t/d{replica}/x.0.npy' --arg='%t/d{replica}/w.npy' --out='%t/o/dy.{replica}.npy'
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/d0 --out '%t/o/dy.0.npy' --world-size 1 | FileCheck %s --check-prefix=FWD
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/d1 --out '%t/o/dy.1.npy' --world-size 1 | FileCheck %s --check-prefix=FWD
// RUN: shardlin-run %S/Inputs/upstream-grid-2d.mlir --jit --entry=rows_dynamic --arg='%t/d{replica}/x.0.npy' --arg='%t/d{replica}/w.npy' --out='%t/o/jdy.{replica}.npy'
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/d1 --out '%t/o/jdy.1.npy' --world-size 1 | FileCheck %s --check-prefix=FWD

// Training: the imported module's backward (the replica's types; the
// attribute stays on the module), run on the module's grid without --grid:
// the weight's and the bias's gradients averaged over the replicas, each
// replica's input gradient its own (Inputs/linear_grads.py --replicas).
// RUN: shardlin-opt %S/Inputs/upstream-grid-2d.mlir --shardlin-import-shard -o %t/imported.mlir
// RUN: FileCheck %s --check-prefix=IMPORTED < %t/imported.mlir
// IMPORTED: module attributes {shardlin.data_parallel = 2 : i64}
// IMPORTED: func.func @col(%arg0: !shardlin.sharded<tensor<10x16xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3], bounds = [0, 0, 2, 5, 10]>>
// RUN: shardlin-opt %t/imported.mlir '--shardlin-generate-backward=functions=col strategy=activations recompute=always' -o %t/bw.mlir
// RUN: shardlin-run %t/bw.mlir --entry=col_backward --arg='%t/r{replica}/x.0.npy' --arg=%t/r0/w.npy --arg=%t/r0/b.npy --arg='%t/dy{replica}/x.0.npy' --out='%t/o/dx.{replica}.npy' --out='%t/o/dw.{replica}.npy' --out='%t/o/db.{replica}.npy'
// RUN: %python %S/Inputs/linear_grads.py '%t/r{replica}' 1 '%t/dy{replica}/x.0.npy' '%t/o/dx.{replica}.npy' '%t/o/dw.{replica}.npy' '%t/o/db.{replica}.npy' --replicas 2 | FileCheck %s --check-prefix=GRID
// RUN: shardlin-run %t/bw.mlir --jit --entry=col_backward --arg='%t/r{replica}/x.0.npy' --arg=%t/r0/w.npy --arg=%t/r0/b.npy --arg='%t/dy{replica}/x.0.npy' --out='%t/o/jdx.{replica}.npy' --out='%t/o/jdw.{replica}.npy' --out='%t/o/jdb.{replica}.npy'
// RUN: %python %S/Inputs/linear_grads.py '%t/r{replica}' 1 '%t/dy{replica}/x.0.npy' '%t/o/jdx.{replica}.npy' '%t/o/jdw.{replica}.npy' '%t/o/jdb.{replica}.npy' --replicas 2 | FileCheck %s --check-prefix=GRID
// RUN: %if mpi %{ timeout 120 mpirun --allow-run-as-root --oversubscribe -np 8 shardlin-run %t/bw.mlir --backend=mpi --entry=col_backward --arg='%t/r{replica}/x.0.npy' --arg=%t/r0/w.npy --arg=%t/r0/b.npy --arg='%t/dy{replica}/x.0.npy' --out='%t/o/mdx.{replica}.npy' --out='%t/o/mdw.{replica}.npy' --out='%t/o/mdb.{replica}.npy' %}
// RUN: %if mpi %{ %python %S/Inputs/linear_grads.py '%t/r{replica}' 1 '%t/dy{replica}/x.0.npy' '%t/o/mdx.{replica}.npy' '%t/o/mdw.{replica}.npy' '%t/o/mdb.{replica}.npy' --replicas 2 | FileCheck %s --check-prefix=GRID %}
// GRID: ok: 1 ranks x 2 replicas, max relative error

// --grid overrides the module's replicas: one replica of the same program
// (a plain 4-rank run of replica 0's data).
// RUN: shardlin-run %S/Inputs/upstream-grid-2d.mlir --entry=col --grid=1x4 --arg=%t/r0/x.0.npy --arg=%t/r0/w.npy --arg=%t/r0/b.npy --out=%t/o/one.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/r0 --out '%t/o/one.npy' --world-size 1 | FileCheck %s --check-prefix=FWD

// Errors: the replicas need their own outputs; an MPI job of another size
// than the grid's; --world-size against the grid's.
// RUN: not shardlin-run %S/Inputs/upstream-grid-2d.mlir --entry=col --arg='%t/r{replica}/x.0.npy' --arg=%t/r0/w.npy --arg=%t/r0/b.npy --out=%t/o/same.npy 2>&1 | FileCheck %s --check-prefix=SAME
// SAME: error: on a grid every output path needs {replica} (each replica writes its own): '{{.*}}same.npy'
// RUN: %if mpi %{ not timeout 120 mpirun --allow-run-as-root --oversubscribe -np 4 shardlin-run %S/Inputs/upstream-grid-2d.mlir --entry=col --backend=mpi --arg='%t/r{replica}/x.0.npy' --arg=%t/r0/w.npy --arg=%t/r0/b.npy --out='%t/o/np4.{replica}.npy' > %t/np4.txt 2>&1 %}
// RUN: %if mpi %{ FileCheck %s --check-prefix=NP4 < %t/np4.txt %}
// NP4: error: the module's data-parallel grid of 2 replicas of 4 ranks has 8 ranks, but the MPI job has 4 processes: run it with mpirun -np 8
// RUN: not shardlin-run %S/Inputs/upstream-grid-2d.mlir --entry=col --world-size=4 --arg='%t/r{replica}/x.0.npy' --arg=%t/r0/w.npy --arg=%t/r0/b.npy --out='%t/o/ws.{replica}.npy' 2>&1 | FileCheck %s --check-prefix=WS
// WS: error: the module's data-parallel grid of 2 replicas of 4 ranks has 8 ranks; --world-size=4

// The whole batch (both replicas' 20 rows, the module's own global x) where
// each replica reads its 10: the message says that each replica reads its
// own and how to name the files ({replica}), not a {rank} path, which
// cannot help. Also with --jit.
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 10 --k 16 --batch-shape 20 --world-size 1 --bias --seed 77 --out-dir %t/whole
// RUN: not shardlin-run %S/Inputs/upstream-grid-2d.mlir --entry=col --arg=%t/whole/x.0.npy --arg=%t/whole/w.npy --arg=%t/whole/b.npy --out='%t/o/whole.{replica}.npy' 2>&1 | FileCheck %s --check-prefix=WHOLE
// RUN: not shardlin-run %S/Inputs/upstream-grid-2d.mlir --entry=col --jit --arg=%t/whole/x.0.npy --arg=%t/whole/w.npy --arg=%t/whole/b.npy --out='%t/o/whole.{replica}.npy' 2>&1 | FileCheck %s --check-prefix=WHOLE
// WHOLE: error: replica {{[01]}}: rank {{[0-3]}}: argument 0 ({{.*}}whole/x.0.npy): shape [20, 16] does not match the entry signature's [10, 16] (one replica's global shape of a sharded argument: on a grid of 2 replicas each replica reads its own, so give one file per replica with {replica} in the path, e.g. x.{replica}.npy, or with {replica} and {rank}, one per rank of each replica)
