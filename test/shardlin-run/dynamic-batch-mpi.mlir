// REQUIRES: mpi
// Batch dims known only at run time under mpirun, one process per rank:
// each process reads its own batch size from its file, the sizes differ
// between ranks (one has none), and every strategy runs them; each rank is
// checked against npytool's float64 reference. Every mpirun is bounded by
// `timeout`, so a hang fails the test.

// RUN: rm -rf %t && mkdir -p %t/out

// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 11 --k 19 --batch-shape 3x3,1x3,0x3,4x3 --world-size 4 --bias --seed 51 --out-dir %t/row
// RUN: timeout 120 mpirun --allow-run-as-root --oversubscribe -np 4 shardlin-run %S/Inputs/row-dynamic.mlir --backend=mpi --strategy=activations --arg=%t/row/x.{rank}.npy --arg=%t/row/w.npy --arg=%t/row/b.npy --out=%t/row/y.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/row --out '%t/row/y.{rank}.npy' --world-size 4 | FileCheck %s --check-prefix=OK4
// RUN: timeout 120 mpirun --allow-run-as-root --oversubscribe -np 4 shardlin-run %S/Inputs/row-dynamic.mlir --backend=mpi --strategy=gather-weight --arg=%t/row/x.{rank}.npy --arg=%t/row/w.npy --arg=%t/row/b.npy --out=%t/row/y.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/row --out '%t/row/y.{rank}.npy' --world-size 4 | FileCheck %s --check-prefix=OK4
// OK4: ok: 4 ranks

// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 11 --k 19 --batch-shape 0,6,2 --world-size 3 --bias --seed 52 --out-dir %t/col
// RUN: timeout 120 mpirun --allow-run-as-root --oversubscribe -np 3 shardlin-run %S/Inputs/col-dynamic.mlir --backend=mpi --strategy=activations --arg=%t/col/x.{rank}.npy --arg=%t/col/w.npy --arg=%t/col/b.npy --out=%t/col/y.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/col --out '%t/col/y.{rank}.npy' --world-size 3 | FileCheck %s --check-prefix=OK3
// The program compiled once runs under shardlin-exec too.
// RUN: shardlin-run %S/Inputs/col-dynamic.mlir --strategy=activations --emit-program=%t/col.prog
// RUN: timeout 120 mpirun --allow-run-as-root --oversubscribe -np 3 shardlin-exec %t/col.prog --backend=mpi --arg=%t/col/x.{rank}.npy --arg=%t/col/w.npy --arg=%t/col/b.npy --out=%t/col/y2.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/col --out '%t/col/y2.{rank}.npy' --world-size 3 | FileCheck %s --check-prefix=OK3
// OK3: ok: 3 ranks

// A wrong static dim on one rank fails every process, without a hang,
// before the program's first collective; nothing is written.
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 11 --k 19 --batch-shape 2x4 --world-size 4 --bias --seed 53 --out-dir %t/bad
// RUN: cp %t/row/x.0.npy %t/row/x.1.npy %t/row/x.3.npy %t/bad/
// RUN: sh -c 'timeout 120 mpirun --allow-run-as-root --oversubscribe -np 4 shardlin-run %S/Inputs/row-dynamic.mlir --backend=mpi --arg=%t/bad/x.{rank}.npy --arg=%t/row/w.npy --arg=%t/row/b.npy --out=%t/out/y.{rank}.npy 2>&1; echo "exit $?"' \
// RUN:   | FileCheck %s --check-prefix=STATIC -DT=%t
// STATIC: shardlin-run: error: rank 2: argument 0 ([[T]]/bad/x.2.npy): shape [2, 4, 19] does not match the entry signature's [?, 3, 19] (dim 1 is 4, not 3)
// STATIC: {{^}}exit 1{{$}}
// RUN: ls -A %t/out | count 0
