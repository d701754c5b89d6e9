// RUN: rm -rf %t && mkdir -p %t/out
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 10 --k 7 --batch-shape 5 --world-size 3 --seed 41 --out-dir %t
// RUN: cp %t/w.npy %t/w.copy && cp %t/x.0.npy %t/x0.copy

// ---- Two outputs that are one file: refused before any work ----------------

// RUN: not shardlin-run %S/Inputs/two-results.mlir --arg=%t/x.{rank}.npy --arg=%t/w.npy --out=%t/out/y.npy --out=%t/out/y.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=SAME --match-full-lines --implicit-check-not='{{.}}'
// SAME: shardlin-run: error: --out '{{.*}}/out/y.npy' (result 1) names the same file as the output of result 0 ('{{.*}}/out/y.npy'): each result needs a file of its own

// Spelled differently, and an existing file reached through a symlink.
// RUN: not shardlin-run %S/Inputs/two-results.mlir --arg=%t/x.{rank}.npy --arg=%t/w.npy --out=%t/out/y.npy --out=%t/out/../out/y.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=SAME2 --match-full-lines
// SAME2: shardlin-run: error: --out '{{.*}}/out/../out/y.npy' (result 1) names the same file as the output of result 0 ('{{.*}}/out/y.npy'): each result needs a file of its own

// A per-rank output and a plain one that rank 1's name meets.
// RUN: not shardlin-run %S/Inputs/two-results.mlir --arg=%t/x.{rank}.npy --arg=%t/w.npy --out=%t/out/y.{rank}.npy --out=%t/out/y.1.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=RANK --match-full-lines
// RANK: shardlin-run: error: --out '{{.*}}/out/y.1.npy' (result 1) names the same file as the output of result 0 on rank 1 ('{{.*}}/out/y.1.npy'): each result needs a file of its own

// ---- An output that names an input: refused, the input untouched ------------

// RUN: not shardlin-run %S/Inputs/col-w3.mlir --arg=%t/x.{rank}.npy --arg=%t/w.npy --out=%t/w.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=INPUT --match-full-lines
// INPUT: shardlin-run: error: --out '{{.*}}/w.npy' (result 0) names the input of argument 1 ('{{.*}}/w.npy'): writing it would replace the input
// RUN: not shardlin-run %S/Inputs/col-w3.mlir --arg=%t/x.{rank}.npy --arg=%t/w.npy --out=%t/x.{rank}.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=INPUT-RANK --match-full-lines
// INPUT-RANK: shardlin-run: error: --out '{{.*}}/x.0.npy' (result 0, rank 0) names the input of argument 0 ('{{.*}}/x.0.npy'): writing it would replace the input
// RUN: ln -s %t/w.npy %t/out-link.npy
// RUN: not shardlin-run %S/Inputs/col-w3.mlir --arg=%t/x.{rank}.npy --arg=%t/w.npy --out=%t/out-link.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=LINK --match-full-lines
// LINK: shardlin-run: error: --out '{{.*}}/out-link.npy' (result 0) names the input of argument 1 ('{{.*}}/w.npy'): writing it would replace the input
// shardlin-exec shares the runner, and the rule.
// RUN: shardlin-run %S/Inputs/col-w3.mlir --emit-program=%t/col.prog
// RUN: not shardlin-exec %t/col.prog --arg=%t/x.{rank}.npy --arg=%t/w.npy --out=%t/w.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=EXEC --match-full-lines
// EXEC: shardlin-exec: error: --out '{{.*}}/w.npy' (result 0) names the input of argument 1 ('{{.*}}/w.npy'): writing it would replace the input

// Nothing was written, and the inputs are as they were.
// RUN: ls -A %t/out | count 0
// RUN: cmp %t/w.npy %t/w.copy
// RUN: cmp %t/x.0.npy %t/x0.copy

// ---- Two outputs of their own: both written, both right ---------------------

// RUN: shardlin-run %S/Inputs/two-results.mlir --arg=%t/x.{rank}.npy --arg=%t/w.npy --out=%t/out/y.{rank}.npy --out=%t/out/z.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t --out '%t/out/y.{rank}.npy' --world-size 3 | FileCheck %s --check-prefix=OK
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t --out '%t/out/z.{rank}.npy' --world-size 3 | FileCheck %s --check-prefix=OK
// OK: ok: 3 ranks
