// Batch dims known only at run time (tensor<?x3x19xf32>): each rank's input
// file gives its batch size, which may differ between ranks and be 0; every
// strategy runs them, and the program compiled once (--emit-program) runs
// other sizes under shardlin-exec. Each run is checked against npytool's
// float64 reference on every rank.

// RUN: rm -rf %t && mkdir -p %t/out

// Row-wise over 4 ranks with 2, 0, 5 and 1 rows of 3 (uneven, one empty).
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 11 --k 19 --batch-shape 2x3,0x3,5x3,1x3 --world-size 4 --bias --seed 41 --out-dir %t/row
// RUN: shardlin-run %S/Inputs/row-dynamic.mlir --world-size=4 --strategy=activations --arg=%t/row/x.{rank}.npy --arg=%t/row/w.npy --arg=%t/row/b.npy --out=%t/row/y.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/row --out '%t/row/y.{rank}.npy' --world-size 4 | FileCheck %s --check-prefix=OK4
// RUN: shardlin-run %S/Inputs/row-dynamic.mlir --world-size=4 --strategy=gather-weight --arg=%t/row/x.{rank}.npy --arg=%t/row/w.npy --arg=%t/row/b.npy --out=%t/row/y.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/row --out '%t/row/y.{rank}.npy' --world-size 4 | FileCheck %s --check-prefix=OK4
// OK4: ok: 4 ranks

// --verbose says what auto assumed for the unknown rows, and each rank's
// traffic follows its own rows: under activations rank 1 (no rows) sends
// only the other ranks' partial sums, (2 + 5 + 1) * 3 rows x 11 x 4 bytes.
// RUN: shardlin-run %S/Inputs/row-dynamic.mlir --world-size=4 --verbose --assumed-rows=7 --arg=%t/row/x.{rank}.npy --arg=%t/row/w.npy --arg=%t/row/b.npy --out=%t/row/y.{rank}.npy 2>&1 | FileCheck %s --check-prefix=VERBOSE
// VERBOSE: remark: lowered row-wise with {{.*}} for 7 rows per rank (the batch dims are dynamic; option assumed-rows)
// RUN: shardlin-run %S/Inputs/row-dynamic.mlir --world-size=4 --verbose --strategy=activations --arg=%t/row/x.{rank}.npy --arg=%t/row/w.npy --arg=%t/row/b.npy --out=%t/row/y.{rank}.npy 2>&1 | FileCheck %s --check-prefix=BYTES
// BYTES: rank 1: {{.*}}; sent 1056 bytes in 2 collectives

// Compiled once, run with other sizes: the program keeps the dynamic dim
// and restores the result's from the input (reshape with two operands).
// RUN: shardlin-run %S/Inputs/row-dynamic.mlir --strategy=activations --emit-program=%t/row.prog
// RUN: FileCheck %s --check-prefix=PROGRAM --input-file=%t/row.prog
// PROGRAM: {{^}}shardlin-program v1{{$}}
// PROGRAM: {{^}}value 0 f32 3 ? 3 19{{$}}
// PROGRAM: {{^}}instr all_to_all result {{[0-9]+}} operands 1 {{[0-9]+}} chunk 1 4 2 3 0 1 concat 0 4 0 1 2 3 loc
// PROGRAM: {{^}}instr reshape result 9 operands 2 8 0 loc
// PROGRAM: {{^}}results 1 9{{$}}
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 11 --k 19 --batch-shape 1x3,3x3,0x3,0x3 --world-size 4 --bias --seed 42 --out-dir %t/row2
// RUN: shardlin-exec %t/row.prog --world-size=4 --arg=%t/row2/x.{rank}.npy --arg=%t/row2/w.npy --arg=%t/row2/b.npy --out=%t/row2/y.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/row2 --out '%t/row2/y.{rank}.npy' --world-size 4 | FileCheck %s --check-prefix=OK4

// Col-wise, 2-D, every strategy, with no rows at all on every rank.
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 11 --k 19 --batch-shape 4,1,7 --world-size 3 --bias --seed 43 --out-dir %t/col
// RUN: shardlin-run %S/Inputs/col-dynamic.mlir --world-size=3 --strategy=activations --arg=%t/col/x.{rank}.npy --arg=%t/col/w.npy --arg=%t/col/b.npy --out=%t/col/y.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/col --out '%t/col/y.{rank}.npy' --world-size 3 | FileCheck %s --check-prefix=OK3
// RUN: shardlin-run %S/Inputs/col-dynamic.mlir --world-size=3 --strategy=gather-weight --arg=%t/col/x.{rank}.npy --arg=%t/col/w.npy --arg=%t/col/b.npy --out=%t/col/y.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/col --out '%t/col/y.{rank}.npy' --world-size 3 | FileCheck %s --check-prefix=OK3
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 11 --k 19 --batch-shape 0,0,0 --world-size 3 --bias --seed 44 --out-dir %t/none
// RUN: shardlin-run %S/Inputs/col-dynamic.mlir --world-size=3 --strategy=activations --arg=%t/none/x.{rank}.npy --arg=%t/none/w.npy --arg=%t/none/b.npy --out=%t/none/y.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/none --out '%t/none/y.{rank}.npy' --world-size 3 | FileCheck %s --check-prefix=OK3
// OK3: ok: 3 ranks

// A file whose static dim differs from the signature's fails every rank
// with one error naming the rank, the file and both shapes; nothing is
// written.
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 11 --k 19 --batch-shape 2x4 --world-size 4 --bias --seed 45 --out-dir %t/bad
// RUN: cp %t/row/x.0.npy %t/row/x.2.npy %t/row/x.3.npy %t/bad/
// RUN: not shardlin-run %S/Inputs/row-dynamic.mlir --world-size=4 --arg=%t/bad/x.{rank}.npy --arg=%t/row/w.npy --arg=%t/row/b.npy --out=%t/out/y.{rank}.npy 2>&1 | FileCheck %s --check-prefix=STATIC -DT=%t
// STATIC: shardlin-run: error: rank 1: argument 0 ([[T]]/bad/x.1.npy): shape [2, 4, 19] does not match the entry signature's [?, 3, 19] (dim 1 is 4, not 3)
// RUN: cp %t/col/x.1.npy %t/bad/x.1.npy
// RUN: not shardlin-run %S/Inputs/row-dynamic.mlir --world-size=4 --arg=%t/bad/x.{rank}.npy --arg=%t/row/w.npy --arg=%t/row/b.npy --out=%t/out/y.{rank}.npy 2>&1 | FileCheck %s --check-prefix=RANK2 -DT=%t
// RANK2: shardlin-run: error: rank 1: argument 0 ([[T]]/bad/x.1.npy): shape [1, 19] has rank 2 but the entry signature's [?, 3, 19] has rank 3
// RUN: ls -A %t/out | count 0
