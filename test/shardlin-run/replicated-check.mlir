// A replicated argument must be the same on every rank (issue 39). An
// upstream-form module whose x is not split (Inputs/upstream-replicated.mlir:
// a col-wise weight, x and the result replicated) given a different x per
// rank used to run: with --strategy=activations each rank's output mixed
// columns computed from the other ranks' x, and exited 0. The import marks
// x and b `shardlin.replicated`, the program text keeps it, and the ranks
// compare a hash of each before running: every strategy fails, naming the
// argument and the ranks that differ, and writes nothing.

// RUN: rm -rf %t && mkdir -p %t/out
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 12 --k 16 --batch-shape 4 --world-size 3 --bias --seed 61 --out-dir %t/d

// The import's mark, and the program text's.
// RUN: shardlin-opt %S/Inputs/upstream-replicated.mlir --shardlin-import-shard | FileCheck %s --check-prefix=IR
// IR: func.func @col_replicated(%{{.*}}: tensor<4x16xf32> {shardlin.replicated}, %{{.*}}: !shardlin.sharded<{{.*}}>, %{{.*}}: tensor<12xf32> {shardlin.replicated})
// RUN: shardlin-run %S/Inputs/upstream-replicated.mlir --entry=col_replicated --strategy=activations --emit-program=%t/col.prog
// RUN: FileCheck %s --check-prefix=PROG < %t/col.prog
// PROG: arg 0 plain replicated loc {{.*}}upstream-replicated.mlir:12:27
// PROG: arg 1 sharded 2 12 16 spec 0 3 0 1 2 loc {{.*}}upstream-replicated.mlir:12:49
// PROG: arg 2 plain replicated loc {{.*}}upstream-replicated.mlir:12:72
// The backward takes the forward's arguments first, and keeps their mark
// (here a col-wise layer's replicated bias).
// RUN: shardlin-opt %S/Inputs/upstream-linears.mlir --shardlin-import-shard | shardlin-opt '--shardlin-generate-backward=functions=col_uneven strategy=activations recompute=always' | FileCheck %s --check-prefix=BW
// BW: func.func @col_uneven_backward(%{{[a-z0-9]+}}: !shardlin.sharded<{{[^>]*>[^>]*}}>>, %{{[a-z0-9]+}}: !shardlin.sharded<{{[^>]*>[^>]*}}>>, %{{[a-z0-9]+}}: tensor<10xf32> {shardlin.replicated}, %{{[a-z0-9]+}}: !shardlin.sharded<

// A different x per rank: every strategy fails, before any collective.
// RUN: not shardlin-run %S/Inputs/upstream-replicated.mlir --entry=col_replicated --strategy=activations --arg=%t/d/x.{rank}.npy --arg=%t/d/w.npy --arg=%t/d/b.npy --out=%t/out/y.{rank}.npy 2>&1 | FileCheck %s --check-prefix=DIFF
// RUN: not shardlin-run %S/Inputs/upstream-replicated.mlir --entry=col_replicated --strategy=gather-weight --arg=%t/d/x.{rank}.npy --arg=%t/d/w.npy --arg=%t/d/b.npy --out=%t/out/y.{rank}.npy 2>&1 | FileCheck %s --check-prefix=DIFF
// RUN: not shardlin-exec %t/col.prog --arg=%t/d/x.{rank}.npy --arg=%t/d/w.npy --arg=%t/d/b.npy --out=%t/out/y.{rank}.npy 2>&1 | FileCheck %s --check-prefix=DIFF
// DIFF: error: rank 0: argument 0 ({{.*}}upstream-replicated.mlir:12:27) is declared replicated but its values differ between ranks: ranks 1, 2 hold other values than rank 0; a replicated argument (one the module does not split) must be the same on every rank: give every rank the same file, or split the argument in the module if each rank has its own (--check-replicated=false skips this check)
// RUN: ls -A %t/out | count 0

// One rank's file differs: only that rank is named. The bias is checked too.
// RUN: cp %t/d/x.0.npy %t/xs.0.npy && cp %t/d/x.0.npy %t/xs.1.npy && cp %t/d/x.1.npy %t/xs.2.npy
// RUN: not shardlin-run %S/Inputs/upstream-replicated.mlir --entry=col_replicated --arg=%t/xs.{rank}.npy --arg=%t/d/w.npy --arg=%t/d/b.npy --out=%t/out/y.{rank}.npy 2>&1 | FileCheck %s --check-prefix=ONE
// ONE: argument 0 ({{.*}}:12:27) is declared replicated but its values differ between ranks: rank 2 holds other values than rank 0;
// RUN: %python -c "import sys; sys.path.insert(0, '%shardlin_src/testing/tools'); import npytool as n; d, s, v = n.read_npy('%t/d/b.npy'); v = list(v); v[3] += 1; n.write_npy('%t/b.1.npy', d, s, v)"
// RUN: cp %t/d/b.npy %t/b.0.npy && cp %t/d/b.npy %t/b.2.npy
// RUN: not shardlin-run %S/Inputs/upstream-replicated.mlir --entry=col_replicated --arg=%t/d/x.0.npy --arg=%t/d/w.npy --arg=%t/b.{rank}.npy --out=%t/out/y.{rank}.npy 2>&1 | FileCheck %s --check-prefix=BIAS
// BIAS: argument 2 ({{.*}}:12:72) is declared replicated but its values differ between ranks: rank 1 holds other values than rank 0;
// RUN: ls -A %t/out | count 0

// The same x in every rank's file: it runs, and every rank's y is rank 0's
// reference, on both strategies.
// RUN: cp %t/d/x.0.npy %t/xs.2.npy
// RUN: shardlin-run %S/Inputs/upstream-replicated.mlir --entry=col_replicated --strategy=activations --arg=%t/xs.{rank}.npy --arg=%t/d/w.npy --arg=%t/b.0.npy --out=%t/same.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/d --out '%t/same.0.npy' --world-size 1 | FileCheck %s --check-prefix=OK
// OK: ok: 1 ranks
// RUN: cmp %t/same.0.npy %t/same.1.npy
// RUN: cmp %t/same.0.npy %t/same.2.npy
// RUN: shardlin-run %S/Inputs/upstream-replicated.mlir --entry=col_replicated --strategy=gather-weight --arg=%t/xs.{rank}.npy --arg=%t/d/w.npy --arg=%t/b.0.npy --out=%t/same-gw.{rank}.npy
// RUN: cmp %t/same.0.npy %t/same-gw.2.npy

// --verbose reports the check's time per rank.
// RUN: shardlin-run %S/Inputs/upstream-replicated.mlir --entry=col_replicated --verbose --arg=%t/xs.{rank}.npy --arg=%t/d/w.npy --arg=%t/b.0.npy --out=%t/same.{rank}.npy 2>&1 | FileCheck %s --check-prefix=VERBOSE
// VERBOSE: rank 2: plan {{.*}}, load {{.*}} ms, check replicated {{.*}} ms, agree

// Row counts that differ (2, 0 and 4 rows) used to fail in the all_gather
// of the features with a size mismatch naming no argument; now the shapes
// are compared when the ranks exchange their sizes.
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 12 --k 16 --batch-shape 2,0,4 --world-size 3 --bias --seed 62 --out-dir %t/r
// RUN: not shardlin-run %S/Inputs/upstream-replicated.mlir --entry=col_replicated_rows --strategy=activations --arg=%t/r/x.{rank}.npy --arg=%t/r/w.npy --arg=%t/r/b.npy --out=%t/out/y.{rank}.npy 2>&1 | FileCheck %s --check-prefix=ROWS
// RUN: not shardlin-run %S/Inputs/upstream-replicated.mlir --entry=col_replicated_rows --strategy=gather-weight --arg=%t/r/x.{rank}.npy --arg=%t/r/w.npy --arg=%t/r/b.npy --out=%t/out/y.{rank}.npy 2>&1 | FileCheck %s --check-prefix=ROWS
// ROWS: error: rank 0: argument 0 ({{.*}}upstream-replicated.mlir:33:32) is declared replicated but its shape differs between ranks (rank 0 [2, 16], rank 1 [0, 16], rank 2 [4, 16]); a replicated argument
// RUN: ls -A %t/out | count 0

// --check-replicated=false trusts the files: gather-weight then gives each
// rank its own x W^T + b (the check is what tells the strategies apart).
// RUN: shardlin-run %S/Inputs/upstream-replicated.mlir --entry=col_replicated --strategy=gather-weight --check-replicated=false --arg=%t/d/x.{rank}.npy --arg=%t/d/w.npy --arg=%t/d/b.npy --out=%t/own.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/d --out '%t/own.{rank}.npy' --world-size 3 | FileCheck %s --check-prefix=OWN
// OWN: ok: 3 ranks
// RUN: shardlin-exec %t/col.prog --check-replicated=false --arg=%t/d/x.{rank}.npy --arg=%t/d/w.npy --arg=%t/d/b.npy --out=%t/unchecked.{rank}.npy
// RUN: not shardlin-run %S/Inputs/upstream-replicated.mlir --entry=col_replicated_rows --check-replicated=false --strategy=activations --arg=%t/r/x.{rank}.npy --arg=%t/r/w.npy --arg=%t/r/b.npy --out=%t/out/y.{rank}.npy 2>&1 | FileCheck %s --check-prefix=UNCHECKED
// UNCHECKED: size mismatch

// The native path (--jit) runs the same check: its entry's signature keeps
// the mark.
// RUN: not shardlin-run %S/Inputs/upstream-replicated.mlir --entry=col_replicated --jit --arg=%t/d/x.{rank}.npy --arg=%t/d/w.npy --arg=%t/d/b.npy --out=%t/out/y.{rank}.npy 2>&1 | FileCheck %s --check-prefix=JIT
// JIT: argument 0 ({{.*}}upstream-replicated.mlir:12:27) is declared replicated but its values differ between ranks: ranks 1, 2 hold other values than rank 0;
// RUN: shardlin-run %S/Inputs/upstream-replicated.mlir --entry=col_replicated --jit --arg=%t/xs.{rank}.npy --arg=%t/d/w.npy --arg=%t/b.0.npy --out=%t/jit.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/d --out '%t/jit.1.npy' --world-size 1 | FileCheck %s --check-prefix=OK
