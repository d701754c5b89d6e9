// REQUIRES: mpi
// shardlin-exec under mpirun (--backend=mpi), one process per rank, on
// programs emitted by shardlin-run. Every mpirun is bounded by `timeout`.

// RUN: rm -rf %t && mkdir -p %t/out

// Row-wise, uneven and permuted, W = 4, with a bias.
// RUN: shardlin-run %shardlin_src/test/shardlin-run/Inputs/row-uneven-bias.mlir --emit-program=%t/row.prog
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 11 --k 19 --batch-shape 5 --world-size 4 --bias --seed 41 --out-dir %t/row
// RUN: timeout 120 mpirun --allow-run-as-root --oversubscribe -np 4 shardlin-exec %t/row.prog --backend=mpi --arg=%t/row/x.{rank}.npy --arg=%t/row/w.npy --arg=%t/row/b.npy --out=%t/row/y.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/row --out '%t/row/y.{rank}.npy' --world-size 4 | FileCheck %s --check-prefix=OK4
// OK4: ok: 4 ranks

// Col-wise, uneven and permuted, W = 4, with a bias; --world-size agrees.
// RUN: shardlin-run %shardlin_src/test/shardlin-run/Inputs/col-uneven-bias.mlir --emit-program=%t/col.prog
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 11 --k 19 --batch-shape 5 --world-size 4 --bias --seed 42 --out-dir %t/col
// RUN: timeout 120 mpirun --allow-run-as-root --oversubscribe -np 4 shardlin-exec %t/col.prog --backend=mpi --world-size=4 --arg=%t/col/x.{rank}.npy --arg=%t/col/w.npy --arg=%t/col/b.npy --out=%t/col/y.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/col --out '%t/col/y.{rank}.npy' --world-size 4 | FileCheck %s --check-prefix=OK4

// --world-size=3 under -np 4.
// RUN: sh -c 'timeout 120 mpirun --allow-run-as-root --oversubscribe -np 4 shardlin-exec %t/row.prog --backend=mpi --world-size=3 --arg=%t/row/x.{rank}.npy --arg=%t/row/w.npy --arg=%t/row/b.npy --out=%t/out/y.{rank}.npy 2>&1; echo "exit $?"' \
// RUN:   | FileCheck %s --check-prefix=W-MISMATCH
// W-MISMATCH: --world-size=3: the requested world size 3 does not match the MPI world size 4
// W-MISMATCH: {{^}}exit 1{{$}}

// A per-rank input missing on rank 2: no hang, rank 2's error names it.
// RUN: mkdir %t/no2 && cp %t/row/x.0.npy %t/row/x.1.npy %t/row/x.3.npy %t/no2/
// RUN: sh -c 'timeout 60 mpirun --allow-run-as-root --oversubscribe -np 4 shardlin-exec %t/row.prog --backend=mpi --arg=%t/no2/x.{rank}.npy --arg=%t/row/w.npy --arg=%t/row/b.npy --out=%t/out/y.{rank}.npy 2>&1; echo "exit $?"' \
// RUN:   | FileCheck %s --check-prefix=MISSING-RANK2 -DT=%t
// MISSING-RANK2: rank 2: argument 0: '[[T]]/no2/x.2.npy': cannot open: No such file or directory
// MISSING-RANK2: {{^}}exit 1{{$}}

// A garbage program on every process.
// RUN: echo 'this is not a program' > %t/garbage.prog
// RUN: sh -c 'timeout 60 mpirun --allow-run-as-root --oversubscribe -np 4 shardlin-exec %t/garbage.prog --backend=mpi --arg=%t/row/x.{rank}.npy --arg=%t/row/w.npy --arg=%t/row/b.npy --out=%t/out/y.{rank}.npy 2>&1; echo "exit $?"' \
// RUN:   | FileCheck %s --check-prefix=GARBAGE -DT=%t
// GARBAGE: [[T]]/garbage.prog: not a shardlin program (expected the header 'shardlin-program v1')
// GARBAGE: {{^}}exit 1{{$}}

// RUN: ls -A %t/out | count 0
