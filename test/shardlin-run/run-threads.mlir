// Contract tests of shardlin-run's command line with the threads backend:
// each case makes inputs and a float64 reference with testing/tools/npytool.py,
// runs the program on W ranks (one thread each) and checks every rank's
// output against the reference (npytool check fails, and prints why, on a
// wrong dtype, shape or value). The programs are under Inputs/.

// RUN: rm -rf %t && mkdir -p %t

// Row-wise, uneven and permuted (W = 4, K = 19 in chunks 5, 5, 5, 4 held by
// ranks 2, 3, 0, 1), with a bias; per-rank inputs and outputs.
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 11 --k 19 --batch-shape 5 --world-size 4 --bias --seed 1 --out-dir %t/row
// RUN: shardlin-run %S/Inputs/row-uneven-bias.mlir --world-size=4 --arg=%t/row/x.{rank}.npy --arg=%t/row/w.npy --arg=%t/row/b.npy --out=%t/row/y.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/row --out '%t/row/y.{rank}.npy' --world-size 4 | FileCheck %s --check-prefix=OK4
// The same with the explicit default backend, and with --world-size left
// out (W is then the number of placements).
// RUN: shardlin-run %S/Inputs/row-uneven-bias.mlir --backend=threads --world-size=4 --arg=%t/row/x.{rank}.npy --arg=%t/row/w.npy --arg=%t/row/b.npy --out=%t/row/y2.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/row --out '%t/row/y2.{rank}.npy' --world-size 4 | FileCheck %s --check-prefix=OK4
// RUN: shardlin-run %S/Inputs/row-uneven-bias.mlir --arg=%t/row/x.{rank}.npy --arg=%t/row/w.npy --arg=%t/row/b.npy --out=%t/row/y3.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/row --out '%t/row/y3.{rank}.npy' --world-size 4 | FileCheck %s --check-prefix=OK4
// OK4: ok: 4 ranks

// Col-wise, W = 3, uneven and permuted (N = 10 in chunks 4, 4, 2 held by
// ranks 1, 2, 0), no bias.
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 10 --k 7 --batch-shape 5 --world-size 3 --seed 2 --out-dir %t/col
// RUN: shardlin-run %S/Inputs/col-w3.mlir --world-size=3 --arg=%t/col/x.{rank}.npy --arg=%t/col/w.npy --out=%t/col/y.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/col --out '%t/col/y.{rank}.npy' --world-size 3 | FileCheck %s --check-prefix=OK3
// OK3: ok: 3 ranks

// A 1-D input (batch shape ''): x is (9,), y is (6,); one rank holds an
// empty chunk of K.
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 6 --k 9 --batch-shape '' --world-size 4 --bias --seed 3 --out-dir %t/vec
// RUN: shardlin-run %S/Inputs/row-1d.mlir --world-size=4 --arg=%t/vec/x.{rank}.npy --arg=%t/vec/w.npy --arg=%t/vec/b.npy --out=%t/vec/y.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/vec --out '%t/vec/y.{rank}.npy' --world-size 4 | FileCheck %s --check-prefix=OK4
// RUN: %python %shardlin_src/testing/tools/npytool.py show %t/vec/y.2.npy | FileCheck %s --check-prefix=VEC-SHAPE
// VEC-SHAPE: <f4 (6,)

// A 3-D input (batch shape 2x3), col-wise.
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 7 --k 8 --batch-shape 2x3 --world-size 4 --bias --seed 4 --out-dir %t/3d
// RUN: shardlin-run %S/Inputs/col-3d.mlir --world-size=4 --arg=%t/3d/x.{rank}.npy --arg=%t/3d/w.npy --arg=%t/3d/b.npy --out=%t/3d/y.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/3d --out '%t/3d/y.{rank}.npy' --world-size 4 | FileCheck %s --check-prefix=OK4
// RUN: %python %shardlin_src/testing/tools/npytool.py show %t/3d/y.0.npy | FileCheck %s --check-prefix=3D-SHAPE
// 3D-SHAPE: <f4 (2, 3, 7)

// f64 (<f8), row-wise over W = 3.
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 5 --k 8 --batch-shape 4 --world-size 3 --bias --dtype f64 --seed 5 --out-dir %t/f64
// RUN: shardlin-run %S/Inputs/f64-row.mlir --world-size=3 --arg=%t/f64/x.{rank}.npy --arg=%t/f64/w.npy --arg=%t/f64/b.npy --out=%t/f64/y.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/f64 --out '%t/f64/y.{rank}.npy' --world-size 3 --dtype f64 | FileCheck %s --check-prefix=OK3

// f16 (<f2), col-wise over W = 4.
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 9 --k 6 --batch-shape 3 --world-size 4 --bias --dtype f16 --seed 6 --out-dir %t/f16
// RUN: shardlin-run %S/Inputs/f16-col.mlir --world-size=4 --arg=%t/f16/x.{rank}.npy --arg=%t/f16/w.npy --arg=%t/f16/b.npy --out=%t/f16/y.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/f16 --out '%t/f16/y.{rank}.npy' --world-size 4 --dtype f16 | FileCheck %s --check-prefix=OK4

// bf16, row-wise over W = 4: inputs as ml_dtypes writes them ('<V2'), and
// as uint16 bit patterns ('<u2'); the outputs are '<V2' either way (what
// ml_dtypes writes, so np.load(f).view(ml_dtypes.bfloat16) reads them).
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 5 --k 10 --batch-shape 3 --world-size 4 --bias --dtype bf16 --seed 7 --out-dir %t/bf16
// RUN: shardlin-run %S/Inputs/bf16-row.mlir --world-size=4 --arg=%t/bf16/x.{rank}.npy --arg=%t/bf16/w.npy --arg=%t/bf16/b.npy --out=%t/bf16/y.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/bf16 --out '%t/bf16/y.{rank}.npy' --world-size 4 --dtype bf16 | FileCheck %s --check-prefix=OK4
// RUN: %python %shardlin_src/testing/tools/npytool.py show %t/bf16/w.npy | FileCheck %s --check-prefix=V2
// RUN: %python %shardlin_src/testing/tools/npytool.py show %t/bf16/y.0.npy | FileCheck %s --check-prefix=V2
// V2: <V2 (
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 5 --k 10 --batch-shape 3 --world-size 4 --bias --dtype bf16 --bf16-descr '<u2' --seed 7 --out-dir %t/bf16u2
// RUN: %python %shardlin_src/testing/tools/npytool.py show %t/bf16u2/w.npy | FileCheck %s --check-prefix=U2
// U2: <u2 (
// RUN: shardlin-run %S/Inputs/bf16-row.mlir --world-size=4 --arg=%t/bf16u2/x.{rank}.npy --arg=%t/bf16u2/w.npy --arg=%t/bf16u2/b.npy --out=%t/bf16u2/y.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/bf16u2 --out '%t/bf16u2/y.{rank}.npy' --world-size 4 --dtype bf16 | FileCheck %s --check-prefix=OK4
// RUN: cmp %t/bf16/y.0.npy %t/bf16u2/y.0.npy

// W = 1.
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 6 --k 7 --batch-shape 5 --world-size 1 --bias --seed 8 --out-dir %t/w1
// RUN: shardlin-run %S/Inputs/w1.mlir --world-size=1 --arg=%t/w1/x.{rank}.npy --arg=%t/w1/w.npy --arg=%t/w1/b.npy --out=%t/w1/y.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/w1 --out '%t/w1/y.{rank}.npy' --world-size 1 | FileCheck %s --check-prefix=OK1
// OK1: ok: 1 ranks

// An input path without {rank} is read by every rank: all four ranks take
// x.0.npy, so each rank's output must equal rank 0's reference. The
// generated inputs differ per rank, so a rank that read its own x.{rank}
// would fail the check against the copied references.
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 11 --k 19 --batch-shape 5 --world-size 4 --bias --seed 9 --out-dir %t/shared
// RUN: cp %t/shared/ref.0.npy %t/shared/ref.1.npy
// RUN: cp %t/shared/ref.0.npy %t/shared/ref.2.npy
// RUN: cp %t/shared/ref.0.npy %t/shared/ref.3.npy
// RUN: cp %t/shared/scale.0.npy %t/shared/scale.1.npy
// RUN: cp %t/shared/scale.0.npy %t/shared/scale.2.npy
// RUN: cp %t/shared/scale.0.npy %t/shared/scale.3.npy
// RUN: shardlin-run %S/Inputs/row-uneven-bias.mlir --world-size=4 --arg=%t/shared/x.0.npy --arg=%t/shared/w.npy --arg=%t/shared/b.npy --out=%t/shared/y.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/shared --out '%t/shared/y.{rank}.npy' --world-size 4 | FileCheck %s --check-prefix=OK4

// An output path without {rank} is written by rank 0 only: the output
// directory holds exactly y.npy (no per-rank files, no leftover temporary
// files), and it is rank 0's result.
// RUN: mkdir -p %t/single/out
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 11 --k 19 --batch-shape 5 --world-size 4 --bias --seed 10 --out-dir %t/single
// RUN: shardlin-run %S/Inputs/row-uneven-bias.mlir --world-size=4 --arg=%t/single/x.{rank}.npy --arg=%t/single/w.npy --arg=%t/single/b.npy --out=%t/single/out/y.npy
// RUN: ls -A %t/single/out | FileCheck %s --check-prefix=SINGLE --match-full-lines
// RUN: ls -A %t/single/out | count 1
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/single --out %t/single/out/y.npy --world-size 1 | FileCheck %s --check-prefix=OK1
// SINGLE: y.npy

// --entry picks one of two public functions (no `main`); each entry only
// accepts its own files, so a wrong pick fails the shape check.
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 6 --k 7 --batch-shape 5 --world-size 2 --bias --seed 11 --out-dir %t/entry-row
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 6 --k 4 --batch-shape 5 --world-size 2 --seed 12 --out-dir %t/entry-col
// RUN: shardlin-run %S/Inputs/two-public.mlir --entry=row_wise --world-size=2 --arg=%t/entry-row/x.{rank}.npy --arg=%t/entry-row/w.npy --arg=%t/entry-row/b.npy --out=%t/entry-row/y.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/entry-row --out '%t/entry-row/y.{rank}.npy' --world-size 2 | FileCheck %s --check-prefix=OK2
// RUN: shardlin-run %S/Inputs/two-public.mlir --entry=col_wise --world-size=2 --arg=%t/entry-col/x.{rank}.npy --arg=%t/entry-col/w.npy --out=%t/entry-col/y.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/entry-col --out '%t/entry-col/y.{rank}.npy' --world-size 2 | FileCheck %s --check-prefix=OK2
// OK2: ok: 2 ranks

// Among several public functions, `main` is the default entry.
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 6 --k 7 --batch-shape 5 --world-size 2 --bias --seed 13 --out-dir %t/main
// RUN: shardlin-run %S/Inputs/several-with-main.mlir --world-size=2 --arg=%t/main/x.{rank}.npy --arg=%t/main/w.npy --arg=%t/main/b.npy --out=%t/main/y.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/main --out '%t/main/y.{rank}.npy' --world-size 2 | FileCheck %s --check-prefix=OK2
