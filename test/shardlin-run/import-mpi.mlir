// REQUIRES: mpi
// import.mlir's upstream-form linears under mpirun, one process per rank:
// W from the grid and from MPI, the global x read by every rank for its
// chunk, the result assembled by rank 0.

// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 10 --k 16 --batch-shape 10 --world-size 1 --bias --seed 44 --out-dir %t/d
// RUN: timeout 120 mpirun --allow-run-as-root --oversubscribe -np 4 shardlin-run %S/Inputs/upstream-linears.mlir --backend=mpi --entry=col_uneven --arg=%t/d/x.0.npy --arg=%t/d/w.npy --arg=%t/d/b.npy --out=%t/col.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/d --out '%t/col.npy' --world-size 1 | FileCheck %s
// RUN: timeout 120 mpirun --allow-run-as-root --oversubscribe -np 4 shardlin-run %S/Inputs/upstream-linears.mlir --backend=mpi --entry=row_uneven --arg=%t/d/x.0.npy --arg=%t/d/w.npy --arg=%t/d/b.npy --out=%t/row.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/d --out '%t/row.2.npy' --world-size 1 | FileCheck %s
// CHECK: ok: 1 ranks

// An MPI job of another size than the grid's is refused.
// RUN: not timeout 120 mpirun --allow-run-as-root --oversubscribe -np 2 shardlin-run %S/Inputs/upstream-linears.mlir --backend=mpi --entry=row_uneven --arg=%t/d/x.0.npy --arg=%t/d/w.npy --arg=%t/d/b.npy --out=%t/bad.npy 2>&1 | FileCheck %s --check-prefix=NP2
// NP2: shardlin-run: error: the MPI job has 2 processes but the module's shard.grid has 4 devices: run it with mpirun -np 4
