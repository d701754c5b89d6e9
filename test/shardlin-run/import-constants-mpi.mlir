// REQUIRES: mpi
// import-constants.mlir's exporter-style modules under mpirun, one process
// per rank: each process takes its chunk of the split weights from the
// module's constants, and every rank's output is checked against float64.

// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/exported_module.py fill %S/Inputs/exported-mlp.mlir --out-dir %t/mlp --seed 21 --x-shape 6,40
// RUN: timeout 120 mpirun --allow-run-as-root --oversubscribe -np 4 shardlin-run %t/mlp/module.mlir --backend=mpi --entry=mlp_seq --arg=%t/mlp/x.npy --out=%t/mlp/seq.{rank}.npy
// RUN: %python %S/Inputs/exported_module.py check --model mlp --dir %t/mlp --out %t/mlp/seq.{rank}.npy --world-size 4 | FileCheck %s
// RUN: %python %S/Inputs/exported_module.py fill %S/Inputs/exported-lin2d.mlir --out-dir %t/lin --seed 22 --x-shape 6,40
// RUN: timeout 120 mpirun --allow-run-as-root --oversubscribe -np 4 shardlin-run %t/lin/module.mlir --backend=mpi --entry=col --arg=%t/lin/x.npy --out=%t/lin/col.{rank}.npy
// RUN: %python %S/Inputs/exported_module.py check --model lin --dir %t/lin --out %t/lin/col.{rank}.npy --world-size 4 | FileCheck %s
// The saved program under shardlin-exec with MPI: the same outputs.
// RUN: shardlin-run %t/lin/module.mlir --entry=col --emit-program=%t/col.prog
// RUN: timeout 120 mpirun --allow-run-as-root --oversubscribe -np 4 shardlin-exec %t/col.prog --backend=mpi --arg=%t/lin/x.npy --out=%t/lin/col-exec.{rank}.npy
// RUN: cmp %t/lin/col.2.npy %t/lin/col-exec.2.npy
// CHECK: ok: 4 ranks
