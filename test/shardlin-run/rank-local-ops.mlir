// The plan executor runs the rank-local upstream ops that were --jit's only
// (issue 29): linalg.matmul (its transposes from the indexing maps, a zero
// fill init dropped, any other init added after), linalg.transpose, and a
// chain that reads no tensor of its shape (`fill`). Each rank its own x;
// every rank against the float64 reference, on threads and under mpirun.

// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 6 --k 9 --batch-shape 4 --world-size 3 --bias --seed 51 --out-dir %t/d
// RUN: shardlin-run %S/Inputs/rank-local-ops.mlir --entry=linear --world-size=3 --emit-program=%t/p
// RUN: FileCheck %s --check-prefix=PROG < %t/p
// PROG: instr transpose {{.*}} perm 2 1 0 loc
// PROG: instr fill {{.*}} expr 1 input 0 loc
// PROG: instr gemm result [[P:[0-9]+]] operands 2 0 {{[0-9]+}} trans 0 0 loc
// PROG: instr elementwise {{.*}} operands 2 [[P]] {{[0-9]+}} expr 3 input 0 input 1 add 0 1 loc
// RUN: shardlin-run %S/Inputs/rank-local-ops.mlir --entry=linear --world-size=3 --arg=%t/d/x.{rank}.npy --arg=%t/d/w.npy --arg=%t/d/b.npy --out=%t/y.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/d --out '%t/y.{rank}.npy' --world-size 3 | FileCheck %s
// CHECK: ok: 3 ranks

// jit-upstream.mlir's @local_f64 (a zero-filled matmul, log1p(|.|)) in f64
// without --jit (its copy in Inputs/rank-local-ops.mlir).
// RUN: %python %S/Inputs/jit_upstream.py gen --out-dir %t/d --world-size 3 --seed 52
// RUN: shardlin-run %S/Inputs/rank-local-ops.mlir --entry=local_f64 --world-size=3 --arg=%t/d/a.{rank}.npy --arg=%t/d/mm.npy --out=%t/f64.{rank}.npy
// RUN: %python %S/Inputs/jit_upstream.py check --dir %t/d --entry local_f64 --world-size 3 --out '%t/f64.{rank}.npy' | FileCheck %s --check-prefix=OK3
// OK3: ok: 3 ranks

// A tensor of constants alone, on every rank.
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 3 --k 3 --batch-shape 2 --world-size 2 --seed 53 --out-dir %t/c
// RUN: shardlin-run %S/Inputs/rank-local-ops.mlir --entry=constants --world-size=2 --arg=%t/c/x.{rank}.npy --out=%t/c/y.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py show %t/c/y.1.npy | FileCheck %s --check-prefix=CONST
// CONST:      <f4 (2, 3)
// CONST-NEXT: 3.0000    3.0000    3.0000
// CONST-NEXT: 3.0000    3.0000    3.0000

// RUN: %if mpi %{ timeout 120 mpirun --allow-run-as-root --oversubscribe -np 3 shardlin-run %S/Inputs/rank-local-ops.mlir --entry=linear --backend=mpi --arg=%t/d/x.{rank}.npy --arg=%t/d/w.npy --arg=%t/d/b.npy --out=%t/mpi.{rank}.npy %}
// RUN: %if mpi %{ %python %shardlin_src/testing/tools/npytool.py check --dir %t/d --out '%t/mpi.{rank}.npy' --world-size 3 | FileCheck %s %}
