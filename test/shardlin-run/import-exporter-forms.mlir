// The f32 linears and the GELU MLP of torch-mlir's 3-D export
// (Inputs/exporter-forms.mlir: linalg.batch_matmul of the transposed weight
// broadcast over the batch by a linalg.generic, the bias by a broadcasting
// generic after it), imported and run on W = 4 threads and natively (--jit)
// with random inputs: every rank's output against the float64 reference
// (Inputs/exporter_forms.py) relative to the element's error scale, under
// npytool's f32 bound. x split along its sequence (dim 1: 2, 1, 0 and 2 of
// 5 rows), along its batch (dim 0) or replicated; the weight split along
// N = 38 or K = 40 at explicit offsets (chunks W does not divide, an empty
// one).
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/exporter_forms.py gen --case linear --x-shape 2x5 --k 40 --n 38 --bias --seed 11 --out-dir %t/l
// RUN: %python %S/Inputs/exporter_forms.py gen --case mlp --x-shape 2x5 --k 40 --hidden 38 --n 40 --seed 12 --out-dir %t/m
// RUN: %python %S/Inputs/exporter_forms.py split --dir %t/l --world-size 4 --dim 1 --bounds 0,2,3,3,5 --out-dir %t/l-seq
// RUN: %python %S/Inputs/exporter_forms.py split --dir %t/l --world-size 4 --dim 0 --bounds 0,1,1,2,2 --out-dir %t/l-batch
// RUN: %python %S/Inputs/exporter_forms.py split --dir %t/l --world-size 4 --dim 2 --bounds 0,9,20,20,38 --out-dir %t/l-feat
// RUN: %python %S/Inputs/exporter_forms.py split --dir %t/l --world-size 4 --out-dir %t/l-rep
// RUN: %python %S/Inputs/exporter_forms.py split --dir %t/m --world-size 4 --dim 1 --bounds 0,2,3,3,5 --out-dir %t/m-seq
// RUN: %python %S/Inputs/exporter_forms.py split --dir %t/m --world-size 4 --out-dir %t/m-rep
// RUN: %python %S/Inputs/exporter_forms.py split --dir %t/l --world-size 1 --out-dir %t/l-global
//
// Sequence-split x, weight split along N (col-wise) and along K (row-wise),
// both strategies, threads and --jit; rank 3's chunk holds 2 rows, rank 2's none.
// RUN: shardlin-run %S/Inputs/exporter-forms.mlir --entry=lin3d_seq_col --strategy=activations --arg=%t/l/x.npy --arg=%t/l/w.npy --arg=%t/l/b.npy --out=%t/seq-col.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/l-seq --out '%t/seq-col.{rank}.npy' --world-size 4 --dtype f32 | FileCheck %s --check-prefix=OK
// RUN: shardlin-run %S/Inputs/exporter-forms.mlir --entry=lin3d_seq_col --strategy=gather-weight --arg=%t/l/x.npy --arg=%t/l/w.npy --arg=%t/l/b.npy --out=%t/seq-col-gw.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/l-seq --out '%t/seq-col-gw.{rank}.npy' --world-size 4 --dtype f32 | FileCheck %s --check-prefix=OK
// RUN: shardlin-run %S/Inputs/exporter-forms.mlir --entry=lin3d_seq_col --jit --strategy=activations --arg=%t/l/x.npy --arg=%t/l/w.npy --arg=%t/l/b.npy --out=%t/seq-col-jit.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/l-seq --out '%t/seq-col-jit.{rank}.npy' --world-size 4 --dtype f32 | FileCheck %s --check-prefix=OK
// RUN: shardlin-run %S/Inputs/exporter-forms.mlir --entry=lin3d_seq_row --strategy=activations --arg=%t/l/x.npy --arg=%t/l/w.npy --arg=%t/l/b.npy --out=%t/seq-row.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/l-seq --out '%t/seq-row.{rank}.npy' --world-size 4 --dtype f32 | FileCheck %s --check-prefix=OK
// RUN: shardlin-run %S/Inputs/exporter-forms.mlir --entry=lin3d_seq_row --jit --arg=%t/l/x.npy --arg=%t/l/w.npy --arg=%t/l/b.npy --out=%t/seq-row-jit.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/l-seq --out '%t/seq-row-jit.{rank}.npy' --world-size 4 --dtype f32 | FileCheck %s --check-prefix=OK
// The global result, assembled by rank 0 from the ranks' chunks.
// RUN: shardlin-run %S/Inputs/exporter-forms.mlir --entry=lin3d_seq_row --arg=%t/l/x.npy --arg=%t/l/w.npy --arg=%t/l/b.npy --out=%t/seq-row-global.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/l-global --out '%t/seq-row-global.npy' --world-size 1 --dtype f32 | FileCheck %s --check-prefix=OK
//
// Batch-split x (dim 0), row-wise.
// RUN: shardlin-run %S/Inputs/exporter-forms.mlir --entry=lin3d_batch_row --strategy=activations --arg=%t/l/x.npy --arg=%t/l/w.npy --arg=%t/l/b.npy --out=%t/batch-row.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/l-batch --out '%t/batch-row.{rank}.npy' --world-size 4 --dtype f32 | FileCheck %s --check-prefix=OK
// RUN: shardlin-run %S/Inputs/exporter-forms.mlir --entry=lin3d_batch_row --jit --strategy=activations --arg=%t/l/x.npy --arg=%t/l/w.npy --arg=%t/l/b.npy --out=%t/batch-row-jit.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/l-batch --out '%t/batch-row-jit.{rank}.npy' --world-size 4 --dtype f32 | FileCheck %s --check-prefix=OK
//
// Replicated x: col-wise gives each rank its features (9, 11, 0, 18),
// row-wise the whole result on every rank (all_reduce).
// RUN: shardlin-run %S/Inputs/exporter-forms.mlir --entry=lin3d_rep_col --arg=%t/l/x.npy --arg=%t/l/w.npy --arg=%t/l/b.npy --out=%t/rep-col.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/l-feat --out '%t/rep-col.{rank}.npy' --world-size 4 --dtype f32 | FileCheck %s --check-prefix=OK
// RUN: shardlin-run %S/Inputs/exporter-forms.mlir --entry=lin3d_rep_col --jit --arg=%t/l/x.npy --arg=%t/l/w.npy --arg=%t/l/b.npy --out=%t/rep-col-jit.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/l-feat --out '%t/rep-col-jit.{rank}.npy' --world-size 4 --dtype f32 | FileCheck %s --check-prefix=OK
// RUN: shardlin-run %S/Inputs/exporter-forms.mlir --entry=lin3d_rep_row --arg=%t/l/x.npy --arg=%t/l/w.npy --arg=%t/l/b.npy --out=%t/rep-row.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/l-rep --out '%t/rep-row.{rank}.npy' --world-size 4 --dtype f32 | FileCheck %s --check-prefix=OK
// RUN: shardlin-run %S/Inputs/exporter-forms.mlir --entry=lin3d_rep_row --jit --arg=%t/l/x.npy --arg=%t/l/w.npy --arg=%t/l/b.npy --out=%t/rep-row-jit.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/l-rep --out '%t/rep-row-jit.{rank}.npy' --world-size 4 --dtype f32 | FileCheck %s --check-prefix=OK
//
// The GELU MLP: sequence-split x, one fused block (one all_gather, one
// reduce_scatter per rank in the program), and on a replicated x.
// RUN: shardlin-run %S/Inputs/exporter-forms.mlir --entry=mlp3d_seq --strategy=activations --emit-program=%t/mlp-seq.prog
// RUN: FileCheck %s --check-prefix=BLOCK < %t/mlp-seq.prog
// RUN: shardlin-run %S/Inputs/exporter-forms.mlir --entry=mlp3d_seq --strategy=activations --arg=%t/m/x.npy --arg=%t/m/w1.npy --arg=%t/m/b1.npy --arg=%t/m/w2.npy --arg=%t/m/b2.npy --out=%t/mlp-seq.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/m-seq --out '%t/mlp-seq.{rank}.npy' --world-size 4 --dtype f32 | FileCheck %s --check-prefix=OK
// RUN: shardlin-run %S/Inputs/exporter-forms.mlir --entry=mlp3d_seq --jit --strategy=activations --arg=%t/m/x.npy --arg=%t/m/w1.npy --arg=%t/m/b1.npy --arg=%t/m/w2.npy --arg=%t/m/b2.npy --out=%t/mlp-seq-jit.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/m-seq --out '%t/mlp-seq-jit.{rank}.npy' --world-size 4 --dtype f32 | FileCheck %s --check-prefix=OK
// RUN: shardlin-run %S/Inputs/exporter-forms.mlir --entry=mlp3d_seq --jit --strategy=gather-weight --arg=%t/m/x.npy --arg=%t/m/w1.npy --arg=%t/m/b1.npy --arg=%t/m/w2.npy --arg=%t/m/b2.npy --out=%t/mlp-seq-jit-gw.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/m-seq --out '%t/mlp-seq-jit-gw.{rank}.npy' --world-size 4 --dtype f32 | FileCheck %s --check-prefix=OK
// RUN: shardlin-run %S/Inputs/exporter-forms.mlir --entry=mlp3d_rep --arg=%t/m/x.npy --arg=%t/m/w1.npy --arg=%t/m/b1.npy --arg=%t/m/w2.npy --arg=%t/m/b2.npy --out=%t/mlp-rep.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/m-rep --out '%t/mlp-rep.{rank}.npy' --world-size 4 --dtype f32 | FileCheck %s --check-prefix=OK
// RUN: shardlin-run %S/Inputs/exporter-forms.mlir --entry=mlp3d_rep --jit --arg=%t/m/x.npy --arg=%t/m/w1.npy --arg=%t/m/b1.npy --arg=%t/m/w2.npy --arg=%t/m/b2.npy --out=%t/mlp-rep-jit.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/m-rep --out '%t/mlp-rep-jit.{rank}.npy' --world-size 4 --dtype f32 | FileCheck %s --check-prefix=OK
//
// Without a bias (sequence-split x, col-wise), and the 4-D form split along
// dim 1 (ranks hold 1, 0, 2 and 0 of its 3), row-wise at uneven offsets.
// RUN: %python %S/Inputs/exporter_forms.py gen --case linear --x-shape 2x5 --k 40 --n 38 --seed 21 --out-dir %t/nb
// RUN: %python %S/Inputs/exporter_forms.py split --dir %t/nb --world-size 4 --dim 1 --bounds 0,2,3,3,5 --out-dir %t/nb-seq
// RUN: %python %S/Inputs/exporter_forms.py gen --case linear --x-shape 2x3x5 --k 40 --n 38 --bias --seed 22 --out-dir %t/l4
// RUN: %python %S/Inputs/exporter_forms.py split --dir %t/l4 --world-size 4 --dim 1 --bounds 0,1,1,3,3 --out-dir %t/l4-mid
// RUN: shardlin-run %S/Inputs/exporter-forms.mlir --entry=lin3d_nobias_seq_col --arg=%t/nb/x.npy --arg=%t/nb/w.npy --out=%t/nb.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/nb-seq --out '%t/nb.{rank}.npy' --world-size 4 --dtype f32 | FileCheck %s --check-prefix=OK
// RUN: shardlin-run %S/Inputs/exporter-forms.mlir --entry=lin3d_nobias_seq_col --jit --arg=%t/nb/x.npy --arg=%t/nb/w.npy --out=%t/nb-jit.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/nb-seq --out '%t/nb-jit.{rank}.npy' --world-size 4 --dtype f32 | FileCheck %s --check-prefix=OK
// RUN: shardlin-run %S/Inputs/exporter-forms.mlir --entry=lin4d_mid_row --strategy=activations --arg=%t/l4/x.npy --arg=%t/l4/w.npy --arg=%t/l4/b.npy --out=%t/l4.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/l4-mid --out '%t/l4.{rank}.npy' --world-size 4 --dtype f32 | FileCheck %s --check-prefix=OK
// RUN: shardlin-run %S/Inputs/exporter-forms.mlir --entry=lin4d_mid_row --jit --arg=%t/l4/x.npy --arg=%t/l4/w.npy --arg=%t/l4/b.npy --out=%t/l4-jit.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/l4-mid --out '%t/l4-jit.{rank}.npy' --world-size 4 --dtype f32 | FileCheck %s --check-prefix=OK
//
// The check fails on a wrong result: the linear's output against the
// reference without its bias (the same x and weight: the inputs are drawn
// before the bias).
// RUN: %python %S/Inputs/exporter_forms.py gen --case linear --x-shape 2x5 --k 40 --n 38 --seed 11 --out-dir %t/l-nobias
// RUN: %python %S/Inputs/exporter_forms.py split --dir %t/l-nobias --world-size 4 --dim 1 --bounds 0,2,3,3,5 --out-dir %t/l-nobias-seq
// RUN: not %python %shardlin_src/testing/tools/npytool.py check --dir %t/l-nobias-seq --out '%t/seq-col.{rank}.npy' --world-size 4 --dtype f32 | FileCheck %s --check-prefix=BAD
//
// OK: ok: {{[1-4]}} ranks, max relative error {{.*}} (bound 1e-05)
// BAD: rank 0: element {{[0-9]+}} is {{.*}} (relative error {{.*}} > 1e-05)
// BLOCK-COUNT-1: instr all_gather
// BLOCK-NOT: instr all_gather
// BLOCK-COUNT-2: instr gemm
// BLOCK-COUNT-1: instr reduce_scatter
// BLOCK-NOT: instr all_
// BLOCK-NOT: instr reduce_scatter
