// REQUIRES: mpi
// replicated-check.mlir under mpirun, one process per rank: a different x
// per rank fails every process before the program's first collective,
// naming the argument and the ranks that differ (no hang, nothing
// written); row counts that differ name the argument too; the same x on
// every rank runs; --check-replicated=false skips the check.

// RUN: rm -rf %t && mkdir -p %t/out
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 12 --k 16 --batch-shape 4 --world-size 3 --bias --seed 63 --out-dir %t/d
// RUN: sh -c 'timeout 120 mpirun --allow-run-as-root --oversubscribe -np 3 shardlin-run %S/Inputs/upstream-replicated.mlir --backend=mpi --entry=col_replicated --strategy=activations --arg=%t/d/x.{rank}.npy --arg=%t/d/w.npy --arg=%t/d/b.npy --out=%t/out/y.{rank}.npy 2>&1; echo "exit $?"' \
// RUN:   | FileCheck %s --check-prefix=DIFF
// DIFF-DAG: error: rank 0: argument 0 ({{.*}}upstream-replicated.mlir:12:27) is declared replicated but its values differ between ranks: ranks 1, 2 hold other values than rank 0;
// DIFF-DAG: error: rank 1: argument 0 ({{.*}}upstream-replicated.mlir:12:27) is declared replicated but its values differ between ranks: ranks 1, 2 hold other values than rank 0;
// DIFF-DAG: error: rank 2: argument 0 ({{.*}}upstream-replicated.mlir:12:27) is declared replicated but its values differ between ranks: ranks 1, 2 hold other values than rank 0;
// DIFF: {{^}}exit 1{{$}}
// RUN: ls -A %t/out | count 0

// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 12 --k 16 --batch-shape 2,0,4 --world-size 3 --bias --seed 64 --out-dir %t/r
// RUN: sh -c 'timeout 120 mpirun --allow-run-as-root --oversubscribe -np 3 shardlin-run %S/Inputs/upstream-replicated.mlir --backend=mpi --entry=col_replicated_rows --strategy=activations --arg=%t/r/x.{rank}.npy --arg=%t/r/w.npy --arg=%t/r/b.npy --out=%t/out/y.{rank}.npy 2>&1; echo "exit $?"' \
// RUN:   | FileCheck %s --check-prefix=ROWS
// ROWS: error: rank {{[0-2]}}: argument 0 ({{.*}}upstream-replicated.mlir:33:32) is declared replicated but its shape differs between ranks (rank 0 [2, 16], rank 1 [0, 16], rank 2 [4, 16]);
// ROWS: {{^}}exit 1{{$}}
// RUN: ls -A %t/out | count 0

// RUN: cp %t/d/x.0.npy %t/xs.0.npy && cp %t/d/x.0.npy %t/xs.1.npy && cp %t/d/x.0.npy %t/xs.2.npy
// RUN: timeout 120 mpirun --allow-run-as-root --oversubscribe -np 3 shardlin-run %S/Inputs/upstream-replicated.mlir --backend=mpi --entry=col_replicated --strategy=activations --arg=%t/xs.{rank}.npy --arg=%t/d/w.npy --arg=%t/d/b.npy --out=%t/same.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/d --out '%t/same.2.npy' --world-size 1 | FileCheck %s --check-prefix=OK
// OK: ok: 1 ranks

// RUN: timeout 120 mpirun --allow-run-as-root --oversubscribe -np 3 shardlin-run %S/Inputs/upstream-replicated.mlir --backend=mpi --entry=col_replicated --strategy=gather-weight --check-replicated=false --arg=%t/d/x.{rank}.npy --arg=%t/d/w.npy --arg=%t/d/b.npy --out=%t/own.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/d --out '%t/own.{rank}.npy' --world-size 3 | FileCheck %s --check-prefix=OWN
// OWN: ok: 3 ranks
