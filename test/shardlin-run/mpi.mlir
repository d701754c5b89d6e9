// REQUIRES: mpi
// shardlin-run under mpirun, one process per rank (--backend=mpi): rank and
// W come from MPI. Every mpirun is bounded by `timeout`, so a hang fails the
// test (timeout's exit status 124) instead of stalling it.

// RUN: rm -rf %t && mkdir -p %t/out

// Row-wise, uneven and permuted (W = 4, K = 19 in chunks 5, 5, 5, 4 held by
// ranks 2, 3, 0, 1), with a bias.
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 11 --k 19 --batch-shape 5 --world-size 4 --bias --seed 21 --out-dir %t/row
// RUN: timeout 120 mpirun --allow-run-as-root --oversubscribe -np 4 shardlin-run %S/Inputs/row-uneven-bias.mlir --backend=mpi --arg=%t/row/x.{rank}.npy --arg=%t/row/w.npy --arg=%t/row/b.npy --out=%t/row/y.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/row --out '%t/row/y.{rank}.npy' --world-size 4 | FileCheck %s --check-prefix=OK4
// OK4: ok: 4 ranks

// Col-wise, uneven and permuted (N = 11 in chunks 3, 3, 3, 2 held by ranks
// 3, 0, 2, 1), with a bias; --world-size given and agreeing with MPI.
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 11 --k 19 --batch-shape 5 --world-size 4 --bias --seed 22 --out-dir %t/col
// RUN: timeout 120 mpirun --allow-run-as-root --oversubscribe -np 4 shardlin-run %S/Inputs/col-uneven-bias.mlir --backend=mpi --world-size=4 --arg=%t/col/x.{rank}.npy --arg=%t/col/w.npy --arg=%t/col/b.npy --out=%t/col/y.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/col --out '%t/col/y.{rank}.npy' --world-size 4 | FileCheck %s --check-prefix=OK4

// An output path without {rank} is written by rank 0 only.
// RUN: mkdir -p %t/col/single
// RUN: timeout 120 mpirun --allow-run-as-root --oversubscribe -np 4 shardlin-run %S/Inputs/col-uneven-bias.mlir --backend=mpi --arg=%t/col/x.{rank}.npy --arg=%t/col/w.npy --arg=%t/col/b.npy --out=%t/col/single/y.npy
// RUN: ls -A %t/col/single | count 1
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/col --out %t/col/single/y.npy --world-size 1 | FileCheck %s --check-prefix=OK1
// OK1: ok: 1 ranks

// --world-size=3 under -np 4: every process fails, mpirun exits non-zero.
// RUN: sh -c 'timeout 120 mpirun --allow-run-as-root --oversubscribe -np 4 shardlin-run %S/Inputs/row-uneven-bias.mlir --backend=mpi --world-size=3 --arg=%t/row/x.{rank}.npy --arg=%t/row/w.npy --arg=%t/row/b.npy --out=%t/out/y.{rank}.npy 2>&1; echo "exit $?"' \
// RUN:   | FileCheck %s --check-prefix=W-MISMATCH
// W-MISMATCH: --world-size=3: the requested world size 3 does not match the MPI world size 4
// W-MISMATCH: {{^}}exit 1{{$}}

// The program's placements must match the MPI world size, too.
// RUN: sh -c 'timeout 120 mpirun --allow-run-as-root --oversubscribe -np 3 shardlin-run %S/Inputs/row-uneven-bias.mlir --backend=mpi --arg=%t/row/x.{rank}.npy --arg=%t/row/w.npy --arg=%t/row/b.npy --out=%t/out/y.{rank}.npy 2>&1; echo "exit $?"' \
// RUN:   | FileCheck %s --check-prefix=PLACEMENTS
// PLACEMENTS: the MPI world size 3 does not match the 4 placements of the program's sharded values
// PLACEMENTS: {{^}}exit 1{{$}}

// A per-rank input missing on rank 2 only: the ranks agree before the first
// collective that their inputs loaded, so every process exits at once with
// an error (rank 2's names its file) instead of the others waiting in a
// collective; `timeout 60` turns a hang into exit 124, which fails the check.
// RUN: mkdir %t/no2 && cp %t/row/x.0.npy %t/row/x.1.npy %t/row/x.3.npy %t/no2/
// RUN: sh -c 'timeout 60 mpirun --allow-run-as-root --oversubscribe -np 4 shardlin-run %S/Inputs/row-uneven-bias.mlir --backend=mpi --arg=%t/no2/x.{rank}.npy --arg=%t/row/w.npy --arg=%t/row/b.npy --out=%t/out/y.{rank}.npy 2>&1; echo "exit $?"' \
// RUN:   | FileCheck %s --check-prefix=MISSING-RANK2 -DT=%t
// MISSING-RANK2: rank 2: argument 0: '[[T]]/no2/x.2.npy': cannot open: No such file or directory
// MISSING-RANK2: {{^}}exit 1{{$}}

// A dtype mismatch on every rank.
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 11 --k 19 --batch-shape 5 --world-size 4 --bias --dtype f64 --out-dir %t/d64
// RUN: sh -c 'timeout 60 mpirun --allow-run-as-root --oversubscribe -np 4 shardlin-run %S/Inputs/row-uneven-bias.mlir --backend=mpi --arg=%t/d64/x.{rank}.npy --arg=%t/row/w.npy --arg=%t/row/b.npy --out=%t/out/y.{rank}.npy 2>&1; echo "exit $?"' \
// RUN:   | FileCheck %s --check-prefix=DTYPE -DT=%t
// DTYPE: argument 0 ([[T]]/d64/x.{{[0-3]}}.npy): element type '<f8' does not match the entry signature's f32 (expected '<f4')
// DTYPE: {{^}}exit 1{{$}}

// None of the failed runs wrote an output.
// RUN: ls -A %t/out | count 0

// Without mpirun, --backend=mpi runs a world of one process, which does not
// match the 4 placements.
// RUN: sh -c 'timeout 60 shardlin-run %S/Inputs/row-uneven-bias.mlir --backend=mpi --arg=%t/row/x.{rank}.npy --arg=%t/row/w.npy --arg=%t/row/b.npy --out=%t/out/y.{rank}.npy 2>&1; echo "exit $?"' \
// RUN:   | FileCheck %s --check-prefix=SINGLETON --match-full-lines --implicit-check-not='{{.}}'
// SINGLETON: shardlin-run: error: the MPI world size 1 does not match the 4 placements of the program's sharded values
// SINGLETON-NEXT: exit 1
// RUN: ls -A %t/out | count 0
