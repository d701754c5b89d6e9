// Head-aligned chunks (`block = 4`) run end to end: the lowering passes
// them to the runtime Program as explicit bounds (the `spec` lines of
// --emit-program), and every rank's output matches the float64 reference
// (testing/tools/npytool.py), col-wise and row-wise, both strategies.

// RUN: rm -rf %t && mkdir -p %t
// RUN: shardlin-run %S/Inputs/head-chunks.mlir --entry=col --world-size=3 --emit-program=%t/col.prog
// RUN: FileCheck %s --check-prefix=SPEC < %t/col.prog
// SPEC: spec {{.*}}0 12 24 28

// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 28 --k 7 --batch-shape 5 --world-size 3 --seed 41 --out-dir %t/col
// RUN: shardlin-run %S/Inputs/head-chunks.mlir --entry=col --world-size=3 --arg=%t/col/x.{rank}.npy --arg=%t/col/w.npy --out=%t/col/y.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/col --out '%t/col/y.{rank}.npy' --world-size 3 | FileCheck %s
// RUN: shardlin-run %S/Inputs/head-chunks.mlir --entry=col --world-size=3 --strategy=gather-weight --arg=%t/col/x.{rank}.npy --arg=%t/col/w.npy --out=%t/col/g.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/col --out '%t/col/g.{rank}.npy' --world-size 3 | FileCheck %s

// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 6 --k 28 --batch-shape 5 --world-size 3 --bias --seed 42 --out-dir %t/row
// RUN: shardlin-run %S/Inputs/head-chunks.mlir --entry=row --world-size=3 --arg=%t/row/x.{rank}.npy --arg=%t/row/w.npy --arg=%t/row/b.npy --out=%t/row/y.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/row --out '%t/row/y.{rank}.npy' --world-size 3 | FileCheck %s
// CHECK: ok: 3 ranks
