// An entry that returns a sharded value: with a {rank} path each rank
// writes its local chunk (the rank's part of the chunk rule), while a
// sharded argument is read from the global tensor, so returning the
// argument as it came gives each rank its own rows; with a path without
// {rank} the whole tensor is written, assembled from every rank's chunk
// (issue 27.9: it was rank 0's chunk alone, silently), on threads and under
// mpirun. README, "Sharded arguments" says so.

// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 10 --k 7 --batch-shape 5 --world-size 3 --seed 46 --out-dir %t
// RUN: shardlin-run %s --arg=%t/w.npy --out=%t/w-out.{rank}.npy
// Placements [1, 2, 0] over 10 rows: chunks of 4, 4 and 2 rows, chunk c on
// rank placements[c], so rank 0 holds rows 8-9, rank 1 rows 0-3, rank 2 rows
// 4-7.
// RUN: %python -c "import sys; sys.path.insert(0, sys.argv[1]); import npytool as t; _, gs, g = t.read_npy(sys.argv[2]); rows = {0: (8, 10), 1: (0, 4), 2: (4, 8)}; ok = all(t.read_npy(sys.argv[3] %% r)[1] == (b - a, 7) and t.read_npy(sys.argv[3] %% r)[2] == g[a * 7:b * 7] for r, (a, b) in rows.items()); print('chunks ok' if ok else 'chunks differ')" %shardlin_src/testing/tools %t/w.npy %t/w-out.%%d.npy | FileCheck %s
// CHECK: chunks ok

// Without {rank}: the whole 10 x 7 tensor, equal to the argument, through
// both tools, compiled to native code (--jit), and under mpirun.
// RUN: shardlin-run %s --arg=%t/w.npy --out=%t/whole.npy
// RUN: %python -c "import sys; sys.path.insert(0, sys.argv[1]); import npytool as t; a = t.read_npy(sys.argv[2]); b = t.read_npy(sys.argv[3]); print('whole ok' if a[1:] == b[1:] else 'whole differs: %%s' %% (b[1],))" %shardlin_src/testing/tools %t/w.npy %t/whole.npy | FileCheck %s --check-prefix=WHOLE
// WHOLE: whole ok
// RUN: shardlin-run --jit %s --arg=%t/w.npy --out=%t/whole-jit.npy
// RUN: cmp %t/whole.npy %t/whole-jit.npy
// RUN: shardlin-run %s --emit-program=%t/ret.prog
// RUN: shardlin-exec %t/ret.prog --arg=%t/w.npy --out=%t/whole-exec.npy
// RUN: cmp %t/whole.npy %t/whole-exec.npy
// RUN: %if mpi %{ timeout 120 mpirun --allow-run-as-root --oversubscribe -np 3 shardlin-exec %t/ret.prog --backend=mpi --arg=%t/w.npy --out=%t/whole-mpi.npy %}
// RUN: %if mpi %{ cmp %t/whole.npy %t/whole-mpi.npy %}
// The program records the result's layout.
// RUN: FileCheck %s --check-prefix=PROG < %t/ret.prog
// PROG: results 1 [[V:[0-9]+]]
// PROG-NEXT: result 0 sharded 2 10 7 spec 0 3 1 2 0

func.func @main(%w: !shardlin.sharded<tensor<10x7xf32>, #shardlin.chunk<dim = 0, placements = [1, 2, 0]>>)
    -> !shardlin.sharded<tensor<10x7xf32>, #shardlin.chunk<dim = 0, placements = [1, 2, 0]>> {
  return %w : !shardlin.sharded<tensor<10x7xf32>, #shardlin.chunk<dim = 0, placements = [1, 2, 0]>>
}
