// Where an annotation sits does not change the program's values either
// (issue 40, item 6): the sequence-parallel MLP and the residual stack of
// ../Dialect/Shardlin/import-placement.mlir, imported from the upstream form
// with the hidden sharding stated in different places, run on 4 threads
// (uneven rows 3, 3, 3, 1 and hidden chunks 10, 10, 9, 9). Every rank's rows
// of the assembled result are compared with a float64 reference within the
// f32 bound relative to the error scale (npytool.py check).

// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-mlp --k 40 --hidden 38 --n 40 --rows 10 --world-size 1 --dtype f32 --seed 61 --out-dir %t/m
// RUN: %python %S/Inputs/residual_stack.py --rows 10 --dim 40 --hidden 38 --seed 62 --out-dir %t/r

// The MLP: stated nowhere (the lowering fuses the block), and at the
// row-wise linear's input only (the import propagates the features back to
// the col-wise linear's output): one all_gather and one reduce_scatter each.
// RUN: shardlin-run %S/../Dialect/Shardlin/Inputs/placement/mlp-none.mlir --world-size 4 --strategy=activations --arg=%t/m/x.0.npy --arg=%t/m/w1.npy --arg=%t/m/w2.npy --out=%t/mlp-none.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/m --out %t/mlp-none.npy --world-size 1 | FileCheck %s --check-prefix=OK
// RUN: shardlin-run %S/../Dialect/Shardlin/Inputs/placement/mlp-in.mlir --world-size 4 --strategy=activations --arg=%t/m/x.0.npy --arg=%t/m/w1.npy --arg=%t/m/w2.npy --out=%t/mlp-in.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/m --out %t/mlp-in.npy --world-size 1 | FileCheck %s --check-prefix=OK
// RUN: shardlin-run %S/../Dialect/Shardlin/Inputs/placement/mlp-out.mlir --world-size 4 --arg=%t/m/x.0.npy --arg=%t/m/w1.npy --arg=%t/m/w2.npy --out=%t/mlp-out.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/m --out %t/mlp-out.npy --world-size 1 | FileCheck %s --check-prefix=OK
// The same program, so the same bits.
// RUN: cmp %t/mlp-none.npy %t/mlp-in.npy

// The residual stack: its row-wise outputs stated replicated (each
// all_reduce and the residual add's local_chunk become a reduce_scatter)
// with the hidden sharding stated at the row-wise input only, and nothing
// stated between the blocks.
// RUN: shardlin-run %S/../Dialect/Shardlin/Inputs/placement/residual-repl-in.mlir --world-size 4 --strategy=activations --arg=%t/r/x.npy --arg=%t/r/w1.npy --arg=%t/r/w2.npy --arg=%t/r/w3.npy --arg=%t/r/w4.npy --out=%t/res-repl-in.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/r --out %t/res-repl-in.npy --world-size 1 | FileCheck %s --check-prefix=OK
// RUN: shardlin-run %S/../Dialect/Shardlin/Inputs/placement/residual-none.mlir --world-size 4 --strategy=activations --arg=%t/r/x.npy --arg=%t/r/w1.npy --arg=%t/r/w2.npy --arg=%t/r/w3.npy --arg=%t/r/w4.npy --out=%t/res-none.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/r --out %t/res-none.npy --world-size 1 | FileCheck %s --check-prefix=OK
// RUN: shardlin-run %S/../Dialect/Shardlin/Inputs/placement/residual-out.mlir --world-size 4 --arg=%t/r/x.npy --arg=%t/r/w1.npy --arg=%t/r/w2.npy --arg=%t/r/w3.npy --arg=%t/r/w4.npy --out=%t/res-out.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/r --out %t/res-out.npy --world-size 1 | FileCheck %s --check-prefix=OK
// RUN: cmp %t/res-none.npy %t/res-repl-in.npy

// Each rank's own rows, written per rank: 3, 3, 3 and 1 of them.
// RUN: shardlin-run %S/../Dialect/Shardlin/Inputs/placement/residual-repl-in.mlir --world-size 4 --strategy=activations --arg=%t/r/x.npy --arg=%t/r/w1.npy --arg=%t/r/w2.npy --arg=%t/r/w3.npy --arg=%t/r/w4.npy --out=%t/res.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py show %t/res.3.npy | FileCheck %s --check-prefix=ROWS3
// ROWS3: <f4 (1, 40)

// The MLP with a col-wise bias: replicated (its chunk taken by a
// local_chunk), and stated split (the rank's chunk as passed: the gather
// and the local_chunk after it are gone), the same bits.
// RUN: %python %S/Inputs/residual_stack.py --biased-mlp --rows 10 --dim 40 --hidden 38 --seed 63 --out-dir %t/b
// RUN: shardlin-run %S/../Dialect/Shardlin/Inputs/placement/bias-none.mlir --world-size 4 --strategy=activations --arg=%t/b/x.npy --arg=%t/b/w1.npy --arg=%t/b/b1.npy --arg=%t/b/w2.npy --out=%t/bias-none.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/b --out %t/bias-none.npy --world-size 1 | FileCheck %s --check-prefix=OK
// RUN: shardlin-run %S/../Dialect/Shardlin/Inputs/placement/bias-arg.mlir --world-size 4 --strategy=activations --arg=%t/b/x.npy --arg=%t/b/w1.npy --arg=%t/b/b1.npy --arg=%t/b/w2.npy --out=%t/bias-arg.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/b --out %t/bias-arg.npy --world-size 1 | FileCheck %s --check-prefix=OK
// RUN: cmp %t/bias-none.npy %t/bias-arg.npy

// OK: ok: 1 ranks
