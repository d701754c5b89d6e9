// RMSNorm and LayerNorm in front of an MLP (issue 40), as torch-mlir
// exports them (Inputs/norm-mlp.mlir: the reductions over the last dim into
// R x 1, their broadcast along the rows, the parameters as arguments), on 4
// ranks: x split along its rows at [0, 2, 4, 6, 6] (rank 3 holds no row)
// and x replicated. The norms are rank-local (reduce_last and elementwise
// instructions with R x 1 column operands; no collective for them); every
// rank's rows against the float64 reference (Inputs/norms.py), on threads,
// --jit and under mpirun.

// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/norms.py gen --out-dir %t/d --seed 40
// RUN: shardlin-run %S/Inputs/norm-mlp.mlir --entry=ln_seq --world-size=4 --emit-program=%t/p
// RUN: FileCheck %s --check-prefix=PROG < %t/p
// PROG: instr fill result [[Z:[0-9]+]] operands 1 {{[0-9]+}} expr 1 const 0x0p+0
// PROG: instr reduce_last result [[S:[0-9]+]] operands 2 {{[0-9]+}} [[Z]] expr 3 input 0 input 1 add 0 1
// PROG: instr elementwise result {{[0-9]+}} operands 1 [[S]] expr
// PROG: instr reduce_last
// PROG-NOT: all_reduce
// PROG: instr all_gather

// RUN: shardlin-run %S/Inputs/norm-mlp.mlir --entry=rms_seq --world-size=4 --arg=%t/d/x.npy --arg=%t/d/nw.npy --arg=%t/d/w1.npy --arg=%t/d/b1.npy --arg=%t/d/w2.npy --arg=%t/d/b2.npy --out=%t/rs.{rank}.npy
// RUN: %python %S/Inputs/norms.py check --dir %t/d --norm rms --out '%t/rs.{rank}.npy' --world-size 4 --offsets 0,2,4,6,6 | FileCheck %s
// RUN: shardlin-run %S/Inputs/norm-mlp.mlir --entry=rms_rep --world-size=4 --arg=%t/d/x.npy --arg=%t/d/nw.npy --arg=%t/d/w1.npy --arg=%t/d/b1.npy --arg=%t/d/w2.npy --arg=%t/d/b2.npy --out=%t/rr.{rank}.npy
// RUN: %python %S/Inputs/norms.py check --dir %t/d --norm rms --out '%t/rr.{rank}.npy' --world-size 4 | FileCheck %s
// RUN: shardlin-run %S/Inputs/norm-mlp.mlir --entry=ln_seq --world-size=4 --arg=%t/d/x.npy --arg=%t/d/nw.npy --arg=%t/d/nb.npy --arg=%t/d/w1.npy --arg=%t/d/b1.npy --arg=%t/d/w2.npy --arg=%t/d/b2.npy --out=%t/ls.{rank}.npy
// RUN: %python %S/Inputs/norms.py check --dir %t/d --norm ln --out '%t/ls.{rank}.npy' --world-size 4 --offsets 0,2,4,6,6 | FileCheck %s
// RUN: shardlin-run %S/Inputs/norm-mlp.mlir --entry=ln_rep --world-size=4 --arg=%t/d/x.npy --arg=%t/d/nw.npy --arg=%t/d/nb.npy --arg=%t/d/w1.npy --arg=%t/d/b1.npy --arg=%t/d/w2.npy --arg=%t/d/b2.npy --out=%t/lr.{rank}.npy
// RUN: %python %S/Inputs/norms.py check --dir %t/d --norm ln --out '%t/lr.{rank}.npy' --world-size 4 | FileCheck %s
// CHECK: ok: 4 ranks

// The native path.
// RUN: shardlin-run %S/Inputs/norm-mlp.mlir --jit --entry=rms_seq --world-size=4 --arg=%t/d/x.npy --arg=%t/d/nw.npy --arg=%t/d/w1.npy --arg=%t/d/b1.npy --arg=%t/d/w2.npy --arg=%t/d/b2.npy --out=%t/jrs.{rank}.npy
// RUN: %python %S/Inputs/norms.py check --dir %t/d --norm rms --out '%t/jrs.{rank}.npy' --world-size 4 --offsets 0,2,4,6,6 | FileCheck %s
// RUN: shardlin-run %S/Inputs/norm-mlp.mlir --jit --entry=ln_seq --world-size=4 --arg=%t/d/x.npy --arg=%t/d/nw.npy --arg=%t/d/nb.npy --arg=%t/d/w1.npy --arg=%t/d/b1.npy --arg=%t/d/w2.npy --arg=%t/d/b2.npy --out=%t/jls.{rank}.npy
// RUN: %python %S/Inputs/norms.py check --dir %t/d --norm ln --out '%t/jls.{rank}.npy' --world-size 4 --offsets 0,2,4,6,6 | FileCheck %s
// RUN: shardlin-run %S/Inputs/norm-mlp.mlir --jit --entry=ln_rep --world-size=4 --arg=%t/d/x.npy --arg=%t/d/nw.npy --arg=%t/d/nb.npy --arg=%t/d/w1.npy --arg=%t/d/b1.npy --arg=%t/d/w2.npy --arg=%t/d/b2.npy --out=%t/jlr.{rank}.npy
// RUN: %python %S/Inputs/norms.py check --dir %t/d --norm ln --out '%t/jlr.{rank}.npy' --world-size 4 | FileCheck %s

// A 3-D x (Inputs/norm-3d.mlir): the maximum and the sum over the last dim
// into 5 x 2 x 1, both broadcast along the rows, split at [0, 2, 4, 5, 5]
// and replicated, threads and --jit.
// RUN: %python %S/Inputs/norms.py gen3d --out-dir %t/d3 --seed 41
// RUN: shardlin-run %S/Inputs/norm-3d.mlir --entry=seq --world-size=4 --emit-program=%t/p3
// RUN: FileCheck %s --check-prefix=PROG3 < %t/p3
// PROG3: instr reduce_last {{.*}} expr 3 input 0 input 1 maximum 0 1
// PROG3: instr reduce_last {{.*}} expr 3 input 0 input 1 add 0 1
// PROG3-NOT: all_
// RUN: shardlin-run %S/Inputs/norm-3d.mlir --entry=seq --world-size=4 --arg=%t/d3/x3.npy --arg=%t/d3/w3.npy --out=%t/s3.{rank}.npy
// RUN: %python %S/Inputs/norms.py check --dir %t/d3 --norm max3d --out '%t/s3.{rank}.npy' --world-size 4 --offsets 0,2,4,5,5 | FileCheck %s
// RUN: shardlin-run %S/Inputs/norm-3d.mlir --entry=rep --world-size=4 --arg=%t/d3/x3.npy --arg=%t/d3/w3.npy --out=%t/r3.{rank}.npy
// RUN: %python %S/Inputs/norms.py check --dir %t/d3 --norm max3d --out '%t/r3.{rank}.npy' --world-size 4 | FileCheck %s
// RUN: shardlin-run %S/Inputs/norm-3d.mlir --jit --entry=seq --world-size=4 --arg=%t/d3/x3.npy --arg=%t/d3/w3.npy --out=%t/js3.{rank}.npy
// RUN: %python %S/Inputs/norms.py check --dir %t/d3 --norm max3d --out '%t/js3.{rank}.npy' --world-size 4 --offsets 0,2,4,5,5 | FileCheck %s

// RUN: %if mpi %{ timeout 120 mpirun --allow-run-as-root --oversubscribe -np 4 shardlin-run %S/Inputs/norm-mlp.mlir --entry=ln_seq --backend=mpi --arg=%t/d/x.npy --arg=%t/d/nw.npy --arg=%t/d/nb.npy --arg=%t/d/w1.npy --arg=%t/d/b1.npy --arg=%t/d/w2.npy --arg=%t/d/b2.npy --out=%t/mls.{rank}.npy %}
// RUN: %if mpi %{ %python %S/Inputs/norms.py check --dir %t/d --norm ln --out '%t/mls.{rank}.npy' --world-size 4 --offsets 0,2,4,6,6 | FileCheck %s %}
