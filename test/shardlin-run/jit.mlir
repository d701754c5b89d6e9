// shardlin-run --jit on the threads backend: the module compiled to native
// code (--shardlin-lower-to-llvm, MLIR's ExecutionEngine) and run by the
// file runner with the same flags, paths and checks as the plan executor.
// Each case makes inputs and a float64 reference with testing/tools/npytool.py and
// checks every rank's output (npytool check fails on a wrong dtype, shape
// or value). Modules with upstream ops: jit-upstream-ops.mlir; mpirun:
// jit-mpi.mlir; errors: jit-errors.mlir.

// RUN: rm -rf %t && mkdir -p %t

// Row-wise, uneven and permuted (W = 4, K = 19 in chunks 5, 5, 5, 4 held by
// ranks 2, 3, 0, 1), with a bias, both strategies.
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 11 --k 19 --batch-shape 5 --world-size 4 --bias --seed 1 --out-dir %t/row
// RUN: shardlin-run %S/Inputs/row-uneven-bias.mlir --jit --strategy=activations --world-size=4 --arg=%t/row/x.{rank}.npy --arg=%t/row/w.npy --arg=%t/row/b.npy --out=%t/row/act.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/row --out '%t/row/act.{rank}.npy' --world-size 4 | FileCheck %s --check-prefix=OK4
// RUN: shardlin-run %S/Inputs/row-uneven-bias.mlir --jit --strategy=gather-weight --arg=%t/row/x.{rank}.npy --arg=%t/row/w.npy --arg=%t/row/b.npy --out=%t/row/gw.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/row --out '%t/row/gw.{rank}.npy' --world-size 4 | FileCheck %s --check-prefix=OK4
// OK4: ok: 4 ranks

// The JIT makes the plan executor's runtime calls: the same collectives and
// bytes on every rank (--verbose), and says how long compiling took.
// RUN: shardlin-run %S/Inputs/row-uneven-bias.mlir --verbose --strategy=activations --arg=%t/row/x.{rank}.npy --arg=%t/row/w.npy --arg=%t/row/b.npy --out=%t/row/plan.{rank}.npy 2>&1 | FileCheck %s --check-prefix=TRAFFIC
// RUN: shardlin-run %S/Inputs/row-uneven-bias.mlir --jit --verbose --strategy=activations --arg=%t/row/x.{rank}.npy --arg=%t/row/w.npy --arg=%t/row/b.npy --out=%t/row/act.{rank}.npy 2>&1 | FileCheck %s --check-prefixes=TRAFFIC,JIT-TIME
// JIT-TIME: shardlin-run: jit: parsed in {{[0-9.]+}} ms, lowered to LLVM in {{[0-9.]+}} ms, compiled to native code in {{[0-9.]+}} ms
// TRAFFIC-DAG: rank 0: {{.*}}; sent 940 bytes in 2 collectives
// TRAFFIC-DAG: rank 1: {{.*}}; sent 960 bytes in 2 collectives
// TRAFFIC-DAG: rank 2: {{.*}}; sent 940 bytes in 2 collectives
// TRAFFIC-DAG: rank 3: {{.*}}; sent 940 bytes in 2 collectives

// Col-wise, W = 3, uneven and permuted (N = 10 in chunks 4, 4, 2 held by
// ranks 1, 2, 0), no bias; both strategies.
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 10 --k 7 --batch-shape 5 --world-size 3 --seed 2 --out-dir %t/col
// RUN: shardlin-run %S/Inputs/col-w3.mlir --jit --strategy=activations --arg=%t/col/x.{rank}.npy --arg=%t/col/w.npy --out=%t/col/act.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/col --out '%t/col/act.{rank}.npy' --world-size 3 | FileCheck %s --check-prefix=OK3
// RUN: shardlin-run %S/Inputs/col-w3.mlir --jit --strategy=gather-weight --arg=%t/col/x.{rank}.npy --arg=%t/col/w.npy --out=%t/col/gw.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/col --out '%t/col/gw.{rank}.npy' --world-size 3 | FileCheck %s --check-prefix=OK3
// OK3: ok: 3 ranks

// A 1-D input: one rank holds an empty chunk of K.
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 6 --k 9 --batch-shape '' --world-size 4 --bias --seed 3 --out-dir %t/vec
// RUN: shardlin-run %S/Inputs/row-1d.mlir --jit --arg=%t/vec/x.{rank}.npy --arg=%t/vec/w.npy --arg=%t/vec/b.npy --out=%t/vec/y.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/vec --out '%t/vec/y.{rank}.npy' --world-size 4 | FileCheck %s --check-prefix=OK4
// RUN: %python %shardlin_src/testing/tools/npytool.py show %t/vec/y.2.npy | FileCheck %s --check-prefix=VEC-SHAPE
// VEC-SHAPE: <f4 (6,)

// A 3-D input (batch shape 2x3), col-wise.
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 7 --k 8 --batch-shape 2x3 --world-size 4 --bias --seed 4 --out-dir %t/3d
// RUN: shardlin-run %S/Inputs/col-3d.mlir --jit --arg=%t/3d/x.{rank}.npy --arg=%t/3d/w.npy --arg=%t/3d/b.npy --out=%t/3d/y.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/3d --out '%t/3d/y.{rank}.npy' --world-size 4 | FileCheck %s --check-prefix=OK4
// RUN: %python %shardlin_src/testing/tools/npytool.py show %t/3d/y.0.npy | FileCheck %s --check-prefix=3D-SHAPE
// 3D-SHAPE: <f4 (2, 3, 7)

// Every dtype: f64 row-wise over W = 3, f16 col-wise and bf16 row-wise over
// W = 4.
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 5 --k 8 --batch-shape 4 --world-size 3 --bias --dtype f64 --seed 5 --out-dir %t/f64
// RUN: shardlin-run %S/Inputs/f64-row.mlir --jit --arg=%t/f64/x.{rank}.npy --arg=%t/f64/w.npy --arg=%t/f64/b.npy --out=%t/f64/y.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/f64 --out '%t/f64/y.{rank}.npy' --world-size 3 --dtype f64 | FileCheck %s --check-prefix=OK3
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 9 --k 6 --batch-shape 3 --world-size 4 --bias --dtype f16 --seed 6 --out-dir %t/f16
// RUN: shardlin-run %S/Inputs/f16-col.mlir --jit --arg=%t/f16/x.{rank}.npy --arg=%t/f16/w.npy --arg=%t/f16/b.npy --out=%t/f16/y.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/f16 --out '%t/f16/y.{rank}.npy' --world-size 4 --dtype f16 | FileCheck %s --check-prefix=OK4
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 5 --k 10 --batch-shape 3 --world-size 4 --bias --dtype bf16 --seed 7 --out-dir %t/bf16
// RUN: shardlin-run %S/Inputs/bf16-row.mlir --jit --arg=%t/bf16/x.{rank}.npy --arg=%t/bf16/w.npy --arg=%t/bf16/b.npy --out=%t/bf16/y.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/bf16 --out '%t/bf16/y.{rank}.npy' --world-size 4 --dtype bf16 | FileCheck %s --check-prefix=OK4

// f16 and bf16 partial sums of a K split, kept in f32 through the
// reduce_scatter (the crafted elements overflow f16 or lose the answer in
// bf16 when rounded early).
// RUN: %python %S/Inputs/partial_sums.py gen --dtype f16 --out-dir %t/ps16
// RUN: shardlin-run %S/Inputs/partial-sums-f16.mlir --jit --strategy=activations --arg=%t/ps16/x.{rank}.npy --arg=%t/ps16/w.npy --arg=%t/ps16/b.npy --out=%t/ps16/y.{rank}.npy
// RUN: %python %S/Inputs/partial_sums.py check --dtype f16 --dir %t/ps16 --out '%t/ps16/y.{rank}.npy' | FileCheck %s --check-prefix=PS
// RUN: %python %S/Inputs/partial_sums.py gen --dtype bf16 --out-dir %t/psb16
// RUN: shardlin-run %S/Inputs/partial-sums-bf16.mlir --jit --strategy=activations --arg=%t/psb16/x.{rank}.npy --arg=%t/psb16/w.npy --arg=%t/psb16/b.npy --out=%t/psb16/y.{rank}.npy
// RUN: %python %S/Inputs/partial_sums.py check --dtype bf16 --dir %t/psb16 --out '%t/psb16/y.{rank}.npy' | FileCheck %s --check-prefix=PS
// PS: ok: 2 ranks

// W = 1.
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 6 --k 7 --batch-shape 5 --world-size 1 --bias --seed 8 --out-dir %t/w1
// RUN: shardlin-run %S/Inputs/w1.mlir --jit --arg=%t/w1/x.{rank}.npy --arg=%t/w1/w.npy --arg=%t/w1/b.npy --out=%t/w1/y.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/w1 --out '%t/w1/y.{rank}.npy' --world-size 1 | FileCheck %s --check-prefix=OK1
// OK1: ok: 1 ranks

// An output path without {rank} is written by rank 0 only.
// RUN: mkdir -p %t/single/out
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 11 --k 19 --batch-shape 5 --world-size 4 --bias --seed 10 --out-dir %t/single
// RUN: shardlin-run %S/Inputs/row-uneven-bias.mlir --jit --arg=%t/single/x.{rank}.npy --arg=%t/single/w.npy --arg=%t/single/b.npy --out=%t/single/out/y.npy
// RUN: ls -A %t/single/out | count 1
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/single --out %t/single/out/y.npy --world-size 1 | FileCheck %s --check-prefix=OK1

// --entry picks one of two public functions.
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 6 --k 4 --batch-shape 5 --world-size 2 --seed 12 --out-dir %t/entry-col
// RUN: shardlin-run %S/Inputs/two-public.mlir --jit --entry=col_wise --arg=%t/entry-col/x.{rank}.npy --arg=%t/entry-col/w.npy --out=%t/entry-col/y.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/entry-col --out '%t/entry-col/y.{rank}.npy' --world-size 2 | FileCheck %s --check-prefix=OK2
// OK2: ok: 2 ranks

// Two results (the same value returned twice: one allocation, freed once).
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 10 --k 7 --batch-shape 5 --world-size 3 --seed 14 --out-dir %t/two
// RUN: shardlin-run %S/Inputs/two-results.mlir --jit --arg=%t/two/x.{rank}.npy --arg=%t/two/w.npy --out=%t/two/y.{rank}.npy --out=%t/two/z.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/two --out '%t/two/y.{rank}.npy' --world-size 3 | FileCheck %s --check-prefix=OK3
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/two --out '%t/two/z.{rank}.npy' --world-size 3 | FileCheck %s --check-prefix=OK3

// A batch size known only at run time, different on each rank (2, 0, 5 and
// 1 rows of 3): gathering the weight moves no rows; the result's size comes
// from the compiled code.
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 11 --k 19 --batch-shape 2x3,0x3,5x3,1x3 --world-size 4 --bias --seed 41 --out-dir %t/dyn
// RUN: shardlin-run %S/Inputs/row-dynamic.mlir --jit --strategy=gather-weight --arg=%t/dyn/x.{rank}.npy --arg=%t/dyn/w.npy --arg=%t/dyn/b.npy --out=%t/dyn/y.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/dyn --out '%t/dyn/y.{rank}.npy' --world-size 4 | FileCheck %s --check-prefix=OK4
// RUN: %python %shardlin_src/testing/tools/npytool.py show %t/dyn/y.2.npy | FileCheck %s --check-prefix=DYN-SHAPE
// DYN-SHAPE: <f4 (5, 3, 11)
// Moving activations stacks the ranks' rows: the compiled code exchanges the
// row counts first (shardlin.gather_bounds: one collective call more than
// the plan's two), then stacks the rows (all_to_all) and splits them back
// (reduce_scatter); col-wise too (3 ranks with 4, 0 and 3 rows).
// RUN: shardlin-run %S/Inputs/row-dynamic.mlir --jit --strategy=activations --verbose --arg=%t/dyn/x.{rank}.npy --arg=%t/dyn/w.npy --arg=%t/dyn/b.npy --out=%t/dyn/act.{rank}.npy 2>&1 | FileCheck %s --check-prefix=DYN-CALLS
// DYN-CALLS: rank 0: {{.*}} in 3 collectives
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/dyn --out '%t/dyn/act.{rank}.npy' --world-size 4 | FileCheck %s --check-prefix=OK4
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 11 --k 19 --batch-shape 4,0,3 --world-size 3 --bias --seed 42 --out-dir %t/cdyn
// RUN: shardlin-run %S/Inputs/col-dynamic.mlir --jit --strategy=activations --arg=%t/cdyn/x.{rank}.npy --arg=%t/cdyn/w.npy --arg=%t/cdyn/b.npy --out=%t/cdyn/y.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/cdyn --out '%t/cdyn/y.{rank}.npy' --world-size 3 | FileCheck %s --check-prefix=OK3
