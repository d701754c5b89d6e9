// shardlin-run on modules in the upstream form (issue 29): the import runs
// first, W comes from the shard.grid, a sharded argument takes the global
// file (each rank reads its chunk) or each rank's shard ({rank}), a result
// is written per rank ({rank}) or once, whole. The chunks are the offsets'
// (Inputs/upstream-linears.mlir: empty shards), which the program text
// carries as `bounds`. npytool's reference is the global y = x w^T + b.

// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 10 --k 16 --batch-shape 10 --world-size 1 --bias --seed 41 --out-dir %t/d

// The program text holds the bounds of every chunk spec of the weight and
// of the result's from_local; the all_gather stacks each rank's rows.
// RUN: shardlin-run %S/Inputs/upstream-linears.mlir --entry=col_uneven --strategy=activations --emit-program=%t/col.prog
// RUN: FileCheck %s --check-prefix=PROG < %t/col.prog
// PROG: world_size 4
// PROG: arg 0 sharded 2 10 16 spec 0 4 0 1 2 3 bounds 0 0 2 5 10
// PROG: arg 1 sharded 2 10 16 spec 0 4 0 1 2 3 bounds 0 4 4 8 10
// PROG: instr all_gather result 5 operands 1 3 chunk 0 4 0 1 2 3 loc
// PROG: instr local_chunk {{.*}} chunk 0 4 0 1 2 3 bounds 0 4 4 8 10 loc
// PROG: instr all_to_all {{.*}} concat 1 4 0 1 2 3 bounds 0 4 4 8 10 loc
// PROG: instr from_local {{.*}} chunk 0 4 0 1 2 3 bounds 0 0 2 5 10 loc
// PROG: result 0 sharded 2 10 10 spec 0 4 0 1 2 3 bounds 0 0 2 5 10
// RUN: shardlin-run %S/Inputs/upstream-linears.mlir --entry=row_uneven --strategy=activations --emit-program=%t/row.prog
// RUN: FileCheck %s --check-prefix=ROWPROG < %t/row.prog
// ROWPROG: instr local_chunk {{.*}} chunk 1 4 0 1 2 3 bounds 0 7 7 12 16 loc
// ROWPROG: instr gemm
// ROWPROG: instr all_reduce
// ROWPROG: instr bias_add

// Col-wise, x from the global file, the result assembled (no {rank}); both
// strategies (auto gathers the weight here).
// RUN: shardlin-run %S/Inputs/upstream-linears.mlir --entry=col_uneven --arg=%t/d/x.0.npy --arg=%t/d/w.npy --arg=%t/d/b.npy --out=%t/col.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/d --out '%t/col.npy' --world-size 1 | FileCheck %s --check-prefix=OK
// OK: ok: 1 ranks
// RUN: shardlin-run %S/Inputs/upstream-linears.mlir --entry=col_uneven --strategy=activations --arg=%t/d/x.0.npy --arg=%t/d/w.npy --arg=%t/d/b.npy --out=%t/col-act.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/d --out '%t/col-act.npy' --world-size 1 | FileCheck %s --check-prefix=OK
// Each rank's rows ({rank}): 0, 2, 3 and 5 of them.
// RUN: shardlin-run %S/Inputs/upstream-linears.mlir --entry=col_uneven --world-size=4 --arg=%t/d/x.0.npy --arg=%t/d/w.npy --arg=%t/d/b.npy --out=%t/col.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py show %t/col.0.npy | FileCheck %s --check-prefix=ROWS0
// ROWS0: <f4 (0, 10)
// RUN: %python %shardlin_src/testing/tools/npytool.py show %t/col.3.npy | FileCheck %s --check-prefix=ROWS3
// ROWS3: <f4 (5, 10)

// The weight as each device holds it: w.{rank}.npy cut at the offsets
// (4, 0, 4 and 2 of its 10 rows), the same result.
// RUN: %python -c "import sys; sys.path.insert(0, '%shardlin_src/testing/tools'); import npytool as n; v = n.read_npy('%t/d/w.npy')[2]; [n.write_npy('%t/d/w.%%d.npy' %% r, '<f4', (e - b, 16), v[b * 16:e * 16]) for r, (b, e) in enumerate([(0, 4), (4, 4), (4, 8), (8, 10)])]"
// RUN: shardlin-run %S/Inputs/upstream-linears.mlir --entry=col_uneven --arg=%t/d/x.0.npy --arg=%t/d/w.{rank}.npy --arg=%t/d/b.npy --out=%t/col-shards.npy
// RUN: cmp %t/col.npy %t/col-shards.npy

// The weight annotated for its users: every rank reads the whole file and
// takes its chunk; each rank's y (gathered from the features) is checked.
// RUN: shardlin-run %S/Inputs/upstream-linears.mlir --entry=col_for_users --strategy=activations --arg=%t/d/x.0.npy --arg=%t/d/w.npy --arg=%t/d/b.npy --out=%t/users.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/d --out '%t/users.0.npy' --world-size 1 | FileCheck %s --check-prefix=OK
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/d --out '%t/users.3.npy' --world-size 1 | FileCheck %s --check-prefix=OK

// Row-wise, replicated x and result (an all_reduce): every rank writes the
// whole y; rank 0's for a path without {rank}.
// RUN: shardlin-run %S/Inputs/upstream-linears.mlir --entry=row_uneven --strategy=activations --arg=%t/d/x.0.npy --arg=%t/d/w.npy --arg=%t/d/b.npy --out=%t/row.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/d --out '%t/row.0.npy' --world-size 1 | FileCheck %s --check-prefix=OK
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/d --out '%t/row.3.npy' --world-size 1 | FileCheck %s --check-prefix=OK
// RUN: shardlin-run %S/Inputs/upstream-linears.mlir --entry=row_uneven --strategy=activations --arg=%t/d/x.0.npy --arg=%t/d/w.npy --arg=%t/d/b.npy --out=%t/row.npy
// RUN: cmp %t/row.npy %t/row.0.npy
// The native path runs both from the whole module (it compiles every public
// function): row_uneven's K chunks by the offsets (an empty one) through
// shardlin_*_bounds calls, the sum through shardlin_all_reduce; col_uneven,
// whose x is split on its rows at uneven offsets (0, 2, 3 and 5 rows),
// after the compiled code exchanged the ranks' row counts
// (shardlin.gather_bounds) to stack the rows and split them back.
// RUN: shardlin-run %S/Inputs/upstream-linears.mlir --entry=row_uneven --jit --strategy=activations --arg=%t/d/x.0.npy --arg=%t/d/w.npy --arg=%t/d/b.npy --out=%t/row-jit.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/d --out '%t/row-jit.0.npy' --world-size 1 | FileCheck %s --check-prefix=OK
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/d --out '%t/row-jit.3.npy' --world-size 1 | FileCheck %s --check-prefix=OK
// RUN: shardlin-run %S/Inputs/upstream-linears.mlir --entry=col_uneven --jit --strategy=activations --arg=%t/d/x.0.npy --arg=%t/d/w.npy --arg=%t/d/b.npy --out=%t/col-jit.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/d --out '%t/col-jit.npy' --world-size 1 | FileCheck %s --check-prefix=OK
// RUN: cmp %t/col-act.npy %t/col-jit.npy

// A --world-size other than the grid's is an error that says so.
// RUN: not shardlin-run %S/Inputs/upstream-linears.mlir --entry=row_uneven --world-size=3 --arg=%t/d/x.0.npy --arg=%t/d/w.npy --arg=%t/d/b.npy --out=%t/bad.npy 2>&1 | FileCheck %s --check-prefix=WS
// WS: shardlin-run: error: --world-size=3 conflicts with the module's shard.grid of 4 devices: an upstream-form module runs on its grid's devices (drop --world-size, or give 4)
// RUN: test ! -e %t/bad.npy

// The same MLP block written by hand in shardlin IR and imported from the
// upstream form (the two modules of ../Dialect/Shardlin/import-equivalence.mlir)
// gives bit-identical outputs on every rank: the imported one reads the
// global x, the hand-written one each rank's rows (3, 3, 3, 1).
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 32 --k 16 --batch-shape 10 --world-size 1 --bias --seed 42 --out-dir %t/m1
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 16 --k 32 --batch-shape 1 --world-size 1 --bias --seed 43 --out-dir %t/m2
// RUN: %python -c "import sys; sys.path.insert(0, '%shardlin_src/testing/tools'); import npytool as n; v = n.read_npy('%t/m1/x.0.npy')[2]; [n.write_npy('%t/m1/xr.%%d.npy' %% r, '<f4', (e - b, 16), v[b * 16:e * 16]) for r, (b, e) in enumerate([(0, 3), (3, 6), (6, 9), (9, 10)])]"
// RUN: shardlin-run %S/../Dialect/Shardlin/import-equivalence.mlir --arg=%t/m1/x.0.npy --arg=%t/m1/w.npy --arg=%t/m1/b.npy --arg=%t/m2/w.npy --arg=%t/m2/b.npy --strategy=activations --out=%t/imported.{rank}.npy
// RUN: shardlin-run %S/../Dialect/Shardlin/Inputs/hand-written-mlp.mlir --world-size=4 --arg=%t/m1/xr.{rank}.npy --arg=%t/m1/w.npy --arg=%t/m1/b.npy --arg=%t/m2/w.npy --arg=%t/m2/b.npy --strategy=activations --out=%t/hand.{rank}.npy
// RUN: cmp %t/imported.0.npy %t/hand.0.npy
// RUN: cmp %t/imported.1.npy %t/hand.1.npy
// RUN: cmp %t/imported.2.npy %t/hand.2.npy
// RUN: cmp %t/imported.3.npy %t/hand.3.npy
