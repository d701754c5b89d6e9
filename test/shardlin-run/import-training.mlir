// Training from the import path: the backward of upstream-form modules
// (--shardlin-import-shard, then --shardlin-generate-backward) and a
// data-parallel x tensor-parallel grid of them (--grid=DPxTP: the module's
// shard.grid is one replica's TP ranks). Every gradient against the dense
// model's float64 ones (Inputs/linear_grads.py on the global files: one
// "rank" that holds them all); each replica's input gradient its own, the
// weight's and the bias's averaged over the replicas.
// RUN: rm -rf %t && mkdir -p %t/o

// Col-wise (upstream-linears.mlir's col_uneven: x sequence-sharded at
// [0, 0, 2, 5, 10], N at [0, 4, 4, 8, 10]); its result is split (from_local),
// its x a sharded argument whose gradient is each rank's rows'.
// RUN: shardlin-opt %S/Inputs/upstream-linears.mlir --shardlin-import-shard -o %t/imported.mlir
// RUN: shardlin-opt %t/imported.mlir '--shardlin-generate-backward=functions=col_uneven strategy=activations recompute=always' -o %t/bw.mlir
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 10 --k 16 --batch-shape 10 --world-size 1 --bias --seed 41 --out-dir %t/r0
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 10 --k 16 --batch-shape 10 --world-size 1 --bias --seed 52 --out-dir %t/r1
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 1 --k 10 --batch-shape 10 --world-size 1 --seed 61 --out-dir %t/dy0
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 1 --k 10 --batch-shape 10 --world-size 1 --seed 62 --out-dir %t/dy1
// RUN: shardlin-run %t/bw.mlir --entry=col_uneven_backward --arg=%t/r0/x.0.npy --arg=%t/r0/w.npy --arg=%t/r0/b.npy --arg=%t/dy0/x.0.npy --out=%t/o/dx.npy --out=%t/o/dw.npy --out=%t/o/db.npy
// RUN: %python %S/Inputs/linear_grads.py %t/r0 1 %t/dy0/x.0.npy %t/o/dx.npy %t/o/dw.npy %t/o/db.npy | FileCheck %s --check-prefix=ONE
// RUN: shardlin-run %t/bw.mlir --jit --entry=col_uneven_backward --arg=%t/r0/x.0.npy --arg=%t/r0/w.npy --arg=%t/r0/b.npy --arg=%t/dy0/x.0.npy --out=%t/o/jdx.npy --out=%t/o/jdw.npy --out=%t/o/jdb.npy
// RUN: %python %S/Inputs/linear_grads.py %t/r0 1 %t/dy0/x.0.npy %t/o/jdx.npy %t/o/jdw.npy %t/o/jdb.npy | FileCheck %s --check-prefix=ONE
// ONE: ok: 1 ranks, max relative error

// Two replicas of the 4-rank layer (8 ranks), each with its own x and dy,
// the same weights: threads, --jit, and mpirun -np 8.
// RUN: shardlin-run %t/bw.mlir --grid=2x4 --entry=col_uneven_backward --arg='%t/r{replica}/x.0.npy' --arg=%t/r0/w.npy --arg=%t/r0/b.npy --arg='%t/dy{replica}/x.0.npy' --out='%t/o/gdx.{replica}.npy' --out='%t/o/gdw.{replica}.npy' --out='%t/o/gdb.{replica}.npy'
// RUN: %python %S/Inputs/linear_grads.py '%t/r{replica}' 1 '%t/dy{replica}/x.0.npy' '%t/o/gdx.{replica}.npy' '%t/o/gdw.{replica}.npy' '%t/o/gdb.{replica}.npy' --replicas 2 | FileCheck %s --check-prefix=GRID
// RUN: shardlin-run %t/bw.mlir --jit --grid=2x4 --entry=col_uneven_backward --arg='%t/r{replica}/x.0.npy' --arg=%t/r0/w.npy --arg=%t/r0/b.npy --arg='%t/dy{replica}/x.0.npy' --out='%t/o/jgdx.{replica}.npy' --out='%t/o/jgdw.{replica}.npy' --out='%t/o/jgdb.{replica}.npy'
// RUN: %python %S/Inputs/linear_grads.py '%t/r{replica}' 1 '%t/dy{replica}/x.0.npy' '%t/o/jgdx.{replica}.npy' '%t/o/jgdw.{replica}.npy' '%t/o/jgdb.{replica}.npy' --replicas 2 | FileCheck %s --check-prefix=GRID
// RUN: %if mpi %{ timeout 120 mpirun --allow-run-as-root --oversubscribe -np 8 shardlin-run %t/bw.mlir --backend=mpi --grid=2x4 --entry=col_uneven_backward --arg='%t/r{replica}/x.0.npy' --arg=%t/r0/w.npy --arg=%t/r0/b.npy --arg='%t/dy{replica}/x.0.npy' --out='%t/o/mgdx.{replica}.npy' --out='%t/o/mgdw.{replica}.npy' --out='%t/o/mgdb.{replica}.npy' %}
// RUN: %if mpi %{ %python %S/Inputs/linear_grads.py '%t/r{replica}' 1 '%t/dy{replica}/x.0.npy' '%t/o/mgdx.{replica}.npy' '%t/o/mgdw.{replica}.npy' '%t/o/mgdb.{replica}.npy' --replicas 2 | FileCheck %s --check-prefix=GRID %}
// GRID: ok: 1 ranks x 2 replicas, max relative error

// The upstream module's forward on the grid as it is (imported by
// shardlin-run), each replica with its own weights here, against its own
// reference.
// RUN: shardlin-run %S/Inputs/upstream-linears.mlir --entry=col_uneven --grid=2x4 --arg='%t/r{replica}/x.0.npy' --arg='%t/r{replica}/w.npy' --arg='%t/r{replica}/b.npy' --out='%t/o/y.{replica}.npy'
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/r0 --out '%t/o/y.0.npy' --world-size 1 | FileCheck %s --check-prefix=FWD
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/r1 --out '%t/o/y.1.npy' --world-size 1 | FileCheck %s --check-prefix=FWD
// FWD: ok: 1 ranks
// RUN: %if mpi %{ timeout 120 mpirun --allow-run-as-root --oversubscribe -np 8 shardlin-run %S/Inputs/upstream-linears.mlir --backend=mpi --entry=col_uneven --grid=2x4 --arg='%t/r{replica}/x.0.npy' --arg='%t/r{replica}/w.npy' --arg='%t/r{replica}/b.npy' --out='%t/o/my.{replica}.npy' %}
// RUN: %if mpi %{ cmp %t/o/y.1.npy %t/o/my.1.npy %}
// A grid whose TP size is not the module's grid's: an error naming both.
// RUN: not shardlin-run %S/Inputs/upstream-linears.mlir --entry=col_uneven --grid=2x3 --arg='%t/r{replica}/x.0.npy' --arg='%t/r{replica}/w.npy' --arg='%t/r{replica}/b.npy' --out='%t/o/bad.{replica}.npy' 2>&1 | FileCheck %s --check-prefix=TP
// TP: shardlin-run: error: --grid=2x3: 'col_uneven' runs on 4 ranks, not 3

// The MLP of ../Dialect/Shardlin/import-equivalence.mlir: its imported
// backward and the backward of the same block written by hand
// (Inputs/hand-written-mlp.mlir) give bit-identical gradients on every rank.
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 32 --k 16 --batch-shape 10 --world-size 1 --bias --seed 42 --out-dir %t/m1
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 16 --k 32 --batch-shape 1 --world-size 1 --bias --seed 43 --out-dir %t/m2
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 1 --k 16 --batch-shape 10 --world-size 1 --seed 44 --out-dir %t/mdy
// RUN: %python -c "import sys; sys.path.insert(0, '%shardlin_src/testing/tools'); import npytool as n; [n.write_npy('%t/%%s.%%d.npy' %% (o, r), '<f4', (e - b, 16), n.read_npy('%t/%%s/x.0.npy' %% d)[2][b * 16:e * 16]) for o, d in [('xr', 'm1'), ('dyr', 'mdy')] for r, (b, e) in enumerate([(0, 3), (3, 6), (6, 9), (9, 10)])]"
// RUN: shardlin-opt %S/../Dialect/Shardlin/import-equivalence.mlir --shardlin-import-shard | shardlin-opt '--shardlin-generate-backward=strategy=activations recompute=always' -o %t/mlp-imported-bw.mlir
// RUN: shardlin-opt %S/../Dialect/Shardlin/Inputs/hand-written-mlp.mlir '--shardlin-generate-backward=strategy=activations recompute=always' -o %t/mlp-hand-bw.mlir
// RUN: shardlin-run %t/mlp-imported-bw.mlir --entry=mlp_backward --strategy=activations --arg=%t/m1/x.0.npy --arg=%t/m1/w.npy --arg=%t/m1/b.npy --arg=%t/m2/w.npy --arg=%t/m2/b.npy --arg=%t/mdy/x.0.npy --out='%t/o/idx.{rank}.npy' --out=%t/o/idw1.npy --out='%t/o/idb1.{rank}.npy' --out=%t/o/idw2.npy --out='%t/o/idb2.{rank}.npy'
// RUN: shardlin-run %t/mlp-hand-bw.mlir --world-size=4 --entry=mlp_backward --strategy=activations --arg='%t/xr.{rank}.npy' --arg=%t/m1/w.npy --arg=%t/m1/b.npy --arg=%t/m2/w.npy --arg=%t/m2/b.npy --arg='%t/dyr.{rank}.npy' --out='%t/o/hdx.{rank}.npy' --out=%t/o/hdw1.npy --out='%t/o/hdb1.{rank}.npy' --out=%t/o/hdw2.npy --out='%t/o/hdb2.{rank}.npy'
// RUN: cmp %t/o/idw1.npy %t/o/hdw1.npy
// RUN: cmp %t/o/idw2.npy %t/o/hdw2.npy
// RUN: cmp %t/o/idx.0.npy %t/o/hdx.0.npy
// RUN: cmp %t/o/idx.3.npy %t/o/hdx.3.npy
// RUN: cmp %t/o/idb1.1.npy %t/o/hdb1.1.npy
// RUN: cmp %t/o/idb2.2.npy %t/o/hdb2.2.npy

// A linear whose input and result every rank holds alike (row_uneven:
// replicated x and result, K split, an all_reduce): the result's gradient
// is one tensor that every rank passes alike (its argument is marked
// shardlin.replicated), and every rank gets the whole dx, dW and db of the
// one dense layer.
// RUN: shardlin-opt %t/imported.mlir '--shardlin-generate-backward=functions=row_uneven recompute=always' -o %t/bw-rep.mlir
// RUN: FileCheck %s --check-prefix=REPLICATED < %t/bw-rep.mlir
// REPLICATED: func.func @row_uneven_backward({{.*}}, %arg3: tensor<10x10xf32> {shardlin.replicated})
// RUN: shardlin-run %t/bw-rep.mlir --entry=row_uneven_backward --arg=%t/r0/x.0.npy --arg=%t/r0/w.npy --arg=%t/r0/b.npy --arg=%t/dy0/x.0.npy --out='%t/o/rdx.{rank}.npy' --out=%t/o/rdw.npy --out='%t/o/rdb.{rank}.npy'
// RUN: %python %S/Inputs/linear_grads.py %t/r0 1 %t/dy0/x.0.npy '%t/o/rdx.{rank}.npy' %t/o/rdw.npy '%t/o/rdb.{rank}.npy' | FileCheck %s --check-prefix=ONE
// RUN: cmp %t/o/rdx.0.npy %t/o/rdx.3.npy
// RUN: cmp %t/o/rdb.0.npy %t/o/rdb.2.npy
// RUN: shardlin-run %t/bw-rep.mlir --jit --entry=row_uneven_backward --arg=%t/r0/x.0.npy --arg=%t/r0/w.npy --arg=%t/r0/b.npy --arg=%t/dy0/x.0.npy --out='%t/o/jrdx.{rank}.npy' --out=%t/o/jrdw.npy --out='%t/o/jrdb.{rank}.npy'
// RUN: %python %S/Inputs/linear_grads.py %t/r0 1 %t/dy0/x.0.npy '%t/o/jrdx.{rank}.npy' %t/o/jrdw.npy '%t/o/jrdb.{rank}.npy' | FileCheck %s --check-prefix=ONE
// RUN: cmp %t/o/jrdx.1.npy %t/o/jrdx.2.npy
// RUN: %if mpi %{ timeout 120 mpirun --allow-run-as-root --oversubscribe -np 4 shardlin-run %t/bw-rep.mlir --backend=mpi --entry=row_uneven_backward --arg=%t/r0/x.0.npy --arg=%t/r0/w.npy --arg=%t/r0/b.npy --arg=%t/dy0/x.0.npy --out='%t/o/mrdx.{rank}.npy' --out=%t/o/mrdw.npy --out='%t/o/mrdb.{rank}.npy' %}
// RUN: %if mpi %{ %python %S/Inputs/linear_grads.py %t/r0 1 %t/dy0/x.0.npy '%t/o/mrdx.{rank}.npy' %t/o/mrdw.npy '%t/o/mrdb.{rank}.npy' | FileCheck %s --check-prefix=ONE %}
// RUN: %if mpi %{ cmp %t/o/mrdx.0.npy %t/o/mrdx.3.npy %}
// A dy that differs between ranks is not one tensor: the runtime says so.
// RUN: mkdir -p %t/rdy && cp %t/dy0/x.0.npy %t/rdy/0.npy && cp %t/dy1/x.0.npy %t/rdy/1.npy && cp %t/dy0/x.0.npy %t/rdy/2.npy && cp %t/dy0/x.0.npy %t/rdy/3.npy
// RUN: not shardlin-run %t/bw-rep.mlir --entry=row_uneven_backward --arg=%t/r0/x.0.npy --arg=%t/r0/w.npy --arg=%t/r0/b.npy --arg='%t/rdy/{rank}.npy' --out='%t/o/bad.{rank}.npy' --out=%t/o/badw.npy --out='%t/o/badb.{rank}.npy' 2>&1 | FileCheck %s --check-prefix=REPDY
// REPDY: error: rank 0: argument 3 ({{.*}}) is declared replicated but its values differ between ranks: rank 1 holds other values than rank 0
