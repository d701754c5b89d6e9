// shardlin-run --jit on modules with upstream ops the plan executor does
// not run (Inputs/jit-upstream.mlir): linalg.softmax, math.log1p,
// arith.cmpf + arith.select, linalg.matmul between rank-local tensors,
// scf.for carrying a tensor, a module without shardlin ops in f64, and a
// strided result copied out with memrefCopy (MLIR's C runner utilities).
// Inputs/jit_upstream.py computes each entry's float64 reference on every
// rank; threads and mpirun.

// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 6 --k 9 --batch-shape 4 --world-size 3 --bias --seed 31 --out-dir %t/d
// RUN: %python %S/Inputs/jit_upstream.py gen --out-dir %t/d --world-size 3 --seed 32

// RUN: shardlin-run %S/Inputs/jit-upstream.mlir --jit --entry=softmax_select --arg=%t/d/x.{rank}.npy --arg=%t/d/w.npy --arg=%t/d/b.npy --out=%t/d/softmax.{rank}.npy
// RUN: %python %S/Inputs/jit_upstream.py check --dir %t/d --entry softmax_select --world-size 3 --out '%t/d/softmax.{rank}.npy' | FileCheck %s --check-prefix=OK3
// OK3: ok: 3 ranks

// RUN: shardlin-run %S/Inputs/jit-upstream.mlir --jit --entry=matmul_loop --arg=%t/d/x.{rank}.npy --arg=%t/d/w.npy --arg=%t/d/b.npy --arg=%t/d/m.npy --out=%t/d/loop.{rank}.npy
// RUN: %python %S/Inputs/jit_upstream.py check --dir %t/d --entry matmul_loop --world-size 3 --out '%t/d/loop.{rank}.npy' | FileCheck %s --check-prefix=OK3

// No shardlin op: any number of ranks (here 3, each with its own a).
// RUN: shardlin-run %S/Inputs/jit-upstream.mlir --jit --entry=local_f64 --world-size=3 --arg=%t/d/a.{rank}.npy --arg=%t/d/mm.npy --out=%t/d/f64.{rank}.npy
// RUN: %python %S/Inputs/jit_upstream.py check --dir %t/d --entry local_f64 --world-size 3 --out '%t/d/f64.{rank}.npy' | FileCheck %s --check-prefix=OK3

// Two results, the second a strided view of the first (rank r's two
// columns), copied out by memrefCopy.
// RUN: shardlin-run %S/Inputs/jit-upstream.mlir --jit --entry=with_chunk --arg=%t/d/x.{rank}.npy --arg=%t/d/w.npy --arg=%t/d/b.npy --out=%t/d/y.{rank}.npy --out=%t/d/cols.{rank}.npy
// RUN: %python %S/Inputs/jit_upstream.py check --dir %t/d --entry with_chunk --world-size 3 --out '%t/d/y.{rank}.npy' | FileCheck %s --check-prefix=OK3
// RUN: %python %S/Inputs/jit_upstream.py check --dir %t/d --entry with_chunk_1 --world-size 3 --out '%t/d/cols.{rank}.npy' | FileCheck %s --check-prefix=OK3

// The same under mpirun, one process (and one compilation) per rank.
// RUN: %if mpi %{ timeout 120 mpirun --allow-run-as-root --oversubscribe -np 3 shardlin-run %S/Inputs/jit-upstream.mlir --jit --backend=mpi --entry=softmax_select --arg=%t/d/x.{rank}.npy --arg=%t/d/w.npy --arg=%t/d/b.npy --out=%t/d/mpi-softmax.{rank}.npy %}
// RUN: %if mpi %{ %python %S/Inputs/jit_upstream.py check --dir %t/d --entry softmax_select --world-size 3 --out '%t/d/mpi-softmax.{rank}.npy' | FileCheck %s --check-prefix=OK3 %}
// RUN: %if mpi %{ timeout 120 mpirun --allow-run-as-root --oversubscribe -np 3 shardlin-run %S/Inputs/jit-upstream.mlir --jit --backend=mpi --entry=matmul_loop --arg=%t/d/x.{rank}.npy --arg=%t/d/w.npy --arg=%t/d/b.npy --arg=%t/d/m.npy --out=%t/d/mpi-loop.{rank}.npy %}
// RUN: %if mpi %{ %python %S/Inputs/jit_upstream.py check --dir %t/d --entry matmul_loop --world-size 3 --out '%t/d/mpi-loop.{rank}.npy' | FileCheck %s --check-prefix=OK3 %}
// RUN: %if mpi %{ timeout 120 mpirun --allow-run-as-root --oversubscribe -np 3 shardlin-run %S/Inputs/jit-upstream.mlir --jit --backend=mpi --entry=with_chunk --arg=%t/d/x.{rank}.npy --arg=%t/d/w.npy --arg=%t/d/b.npy --out=%t/d/mpi-y.{rank}.npy --out=%t/d/mpi-cols.{rank}.npy %}
// RUN: %if mpi %{ %python %S/Inputs/jit_upstream.py check --dir %t/d --entry with_chunk_1 --world-size 3 --out '%t/d/mpi-cols.{rank}.npy' | FileCheck %s --check-prefix=OK3 %}
