// Per-rank shard files: a {rank} path for a sharded argument may hold that
// rank's chunk (what a checkpoint saved per rank looks like), its shape
// checked against the chunk rule; a file of the global shape (with or
// without {rank}) is the global tensor, of which each rank reads its chunk. Uneven chunks with
// permuted placements, on both split dims, threads and (if built) MPI.

// RUN: rm -rf %t && mkdir -p %t
// RUN: shardlin-run %shardlin_src/test/shardlin-run/Inputs/row-uneven-bias.mlir --emit-program=%t/row.prog
// RUN: shardlin-run %shardlin_src/test/shardlin-run/Inputs/col-w3.mlir --emit-program=%t/col.prog

// ---- Row-wise (dim 1, K = 19 over W = 4: chunks 5, 5, 5, 4 held by ranks 2, 3, 0, 1)
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 11 --k 19 --batch-shape 5 --world-size 4 --bias --seed 51 --out-dir %t/row
// RUN: %python %S/Inputs/shard.py %t/row/w.npy --dim 1 --placements 2,3,0,1 --out '%t/row/w.{rank}.npy'
// RUN: shardlin-exec %t/row.prog --world-size=4 --arg=%t/row/x.{rank}.npy --arg=%t/row/w.{rank}.npy --arg=%t/row/b.npy --out=%t/row/y.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/row --out '%t/row/y.{rank}.npy' --world-size 4 | FileCheck %s --check-prefix=OK4
// RUN: shardlin-run %shardlin_src/test/shardlin-run/Inputs/row-uneven-bias.mlir --arg=%t/row/x.{rank}.npy --arg=%t/row/w.{rank}.npy --arg=%t/row/b.npy --out=%t/row/z.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/row --out '%t/row/z.{rank}.npy' --world-size 4 | FileCheck %s --check-prefix=OK4
// OK4: ok: 4 ranks

// ---- Col-wise (dim 0, N = 10 over W = 3: chunks 4, 4, 2 held by ranks 1, 2, 0)
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 10 --k 7 --batch-shape 5 --world-size 3 --seed 52 --out-dir %t/col
// RUN: %python %S/Inputs/shard.py %t/col/w.npy --dim 0 --placements 1,2,0 --out '%t/col/w.{rank}.npy'
// RUN: shardlin-exec %t/col.prog --world-size=3 --arg=%t/col/x.{rank}.npy --arg=%t/col/w.{rank}.npy --out=%t/col/y.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/col --out '%t/col/y.{rank}.npy' --world-size 3 | FileCheck %s --check-prefix=OK3
// RUN: %if mpi %{ timeout 120 mpirun --allow-run-as-root --oversubscribe -np 3 shardlin-exec %t/col.prog --backend=mpi --arg=%t/col/x.{rank}.npy --arg=%t/col/w.{rank}.npy --out=%t/col/m.{rank}.npy %}
// RUN: %if mpi %{ %python %shardlin_src/testing/tools/npytool.py check --dir %t/col --out '%t/col/m.{rank}.npy' --world-size 3 | FileCheck %s --check-prefix=OK3 %}
// OK3: ok: 3 ranks

// ---- A shard of the wrong shape names the rank, the file, both shapes ------
// Rank 1 holds chunk 3 (4 columns); give it rank 0's shard (5 columns).
// RUN: mkdir -p %t/bad && cp %t/row/w.*.npy %t/bad/ && cp %t/row/w.0.npy %t/bad/w.1.npy
// RUN: not shardlin-exec %t/row.prog --world-size=4 --arg=%t/row/x.{rank}.npy --arg=%t/bad/w.{rank}.npy --arg=%t/row/b.npy --out=%t/bad/y.{rank}.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BAD-SHARD -DDIR=%t/bad --match-full-lines --implicit-check-not='{{.}}'
// BAD-SHARD: shardlin-exec: error: rank 1: argument 1 ([[DIR]]/w.1.npy): rank 1's shard has shape [11, 5], but the chunk spec gives rank 1 the shape [11, 4] (rows [15, 19) of dim 1 of the global [11, 19]; a file of the global shape is read as the global tensor)
// RUN: test ! -e %t/bad/y.0.npy
// A file of the global shape under a {rank} name is the global tensor, as
// before: rank 1 takes its chunk of it.
// RUN: cp %t/row/w.npy %t/bad/w.1.npy && cp %t/row/w.0.npy %t/bad/w.0.npy
// RUN: shardlin-exec %t/row.prog --world-size=4 --arg=%t/row/x.{rank}.npy --arg=%t/bad/w.{rank}.npy --arg=%t/row/b.npy --out=%t/bad/y.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/row --out '%t/bad/y.{rank}.npy' --world-size 4 | FileCheck %s --check-prefix=OK4
// And a shard where the global tensor is expected says how to pass shards.
// RUN: not shardlin-exec %t/row.prog --world-size=4 --arg=%t/row/x.{rank}.npy --arg=%t/row/w.0.npy --arg=%t/row/b.npy --out=%t/bad/y.{rank}.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=SHARD-AS-GLOBAL -DDIR=%t/row
// SHARD-AS-GLOBAL: argument 1 ([[DIR]]/w.0.npy): shape [11, 5] does not match the entry signature's [11, 19] (the global shape of a sharded argument; a path with {rank} may name each rank's chunk instead)
