// The bf16 and f16 linears and GELU MLPs as torch-mlir exports them
// (Inputs/exporter-forms.mlir: linalg.matmul of bf16 / f16 operands into a
// zero f32 init, an arith.truncf generic, then the bias added in bf16 / f16
// by a generic of its own; the MLP's GELU in bf16 / f16), imported as one
// linear of that type (f32 accumulation, one rounding) followed by the
// rank-local bias add, and run on W = 4 threads and natively (--jit): every
// rank's output against the float64 reference (Inputs/exporter_forms.py)
// relative to the element's error scale. Bounds, u the unit roundoff (2^-8
// bf16, 2^-11 f16): a linear rounds its product and the bias add once each,
// 2u of its scale, so 2^-6 (bf16) and 2^-9 (f16) leave a factor 2; the MLP
// (the hidden rounding, about six roundings in the GELU, the second linear's
// two) stays under 11u of its scale, so 2^-4 and 2^-7. A wrong weight chunk,
// bias or activation is an error of the order of the scale itself.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/exporter_forms.py gen --case linear --x-shape 6 --k 40 --n 38 --bias --dtype bf16 --seed 13 --out-dir %t/lb
// RUN: %python %S/Inputs/exporter_forms.py gen --case linear --x-shape 6 --k 40 --n 38 --bias --dtype f16 --seed 14 --out-dir %t/lh
// RUN: %python %S/Inputs/exporter_forms.py gen --case mlp --x-shape 6 --k 40 --hidden 38 --n 40 --dtype bf16 --seed 15 --out-dir %t/mb
// RUN: %python %S/Inputs/exporter_forms.py gen --case mlp --x-shape 6 --k 40 --hidden 38 --n 40 --dtype f16 --seed 16 --out-dir %t/mh
// RUN: %python %S/Inputs/exporter_forms.py split --dir %t/lb --world-size 4 --dim 0 --bounds 0,2,3,3,6 --out-dir %t/lb-rows
// RUN: %python %S/Inputs/exporter_forms.py split --dir %t/lb --world-size 4 --out-dir %t/lb-rep
// RUN: %python %S/Inputs/exporter_forms.py split --dir %t/lh --world-size 4 --dim 0 --bounds 0,2,3,3,6 --out-dir %t/lh-rows
// RUN: %python %S/Inputs/exporter_forms.py split --dir %t/lh --world-size 4 --dim 1 --bounds 0,9,20,20,38 --out-dir %t/lh-feat
// RUN: %python %S/Inputs/exporter_forms.py split --dir %t/mb --world-size 4 --dim 0 --bounds 0,2,3,3,6 --out-dir %t/mb-rows
// RUN: %python %S/Inputs/exporter_forms.py split --dir %t/mh --world-size 4 --out-dir %t/mh-rep
//
// bf16: split rows (2, 1, 0, 3) and the weight along N; replicated x and
// the weight along K (the partial sums reduced in f32).
// RUN: shardlin-run %S/Inputs/exporter-forms.mlir --entry=lin2d_bf16_rows_col --strategy=activations --arg=%t/lb/x.npy --arg=%t/lb/w.npy --arg=%t/lb/b.npy --out=%t/b-rows.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/lb-rows --out '%t/b-rows.{rank}.npy' --world-size 4 --dtype bf16 --bound 0.015625 | FileCheck %s --check-prefix=BF16
// RUN: shardlin-run %S/Inputs/exporter-forms.mlir --entry=lin2d_bf16_rows_col --jit --arg=%t/lb/x.npy --arg=%t/lb/w.npy --arg=%t/lb/b.npy --out=%t/b-rows-jit.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/lb-rows --out '%t/b-rows-jit.{rank}.npy' --world-size 4 --dtype bf16 --bound 0.015625 | FileCheck %s --check-prefix=BF16
// RUN: shardlin-run %S/Inputs/exporter-forms.mlir --entry=lin2d_bf16_rep_row --arg=%t/lb/x.npy --arg=%t/lb/w.npy --arg=%t/lb/b.npy --out=%t/b-rep.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/lb-rep --out '%t/b-rep.{rank}.npy' --world-size 4 --dtype bf16 --bound 0.015625 | FileCheck %s --check-prefix=BF16
// RUN: shardlin-run %S/Inputs/exporter-forms.mlir --entry=lin2d_bf16_rep_row --jit --arg=%t/lb/x.npy --arg=%t/lb/w.npy --arg=%t/lb/b.npy --out=%t/b-rep-jit.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/lb-rep --out '%t/b-rep-jit.{rank}.npy' --world-size 4 --dtype bf16 --bound 0.015625 | FileCheck %s --check-prefix=BF16
//
// f16: split rows and the weight along K at uneven offsets; replicated x and
// the weight along N (each rank its 9, 11, 0 and 18 features).
// RUN: shardlin-run %S/Inputs/exporter-forms.mlir --entry=lin2d_f16_rows_row --strategy=activations --arg=%t/lh/x.npy --arg=%t/lh/w.npy --arg=%t/lh/b.npy --out=%t/h-rows.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/lh-rows --out '%t/h-rows.{rank}.npy' --world-size 4 --dtype f16 --bound 0.001953125 | FileCheck %s --check-prefix=F16
// RUN: shardlin-run %S/Inputs/exporter-forms.mlir --entry=lin2d_f16_rows_row --jit --strategy=activations --arg=%t/lh/x.npy --arg=%t/lh/w.npy --arg=%t/lh/b.npy --out=%t/h-rows-jit.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/lh-rows --out '%t/h-rows-jit.{rank}.npy' --world-size 4 --dtype f16 --bound 0.001953125 | FileCheck %s --check-prefix=F16
// RUN: shardlin-run %S/Inputs/exporter-forms.mlir --entry=lin2d_f16_rep_col --arg=%t/lh/x.npy --arg=%t/lh/w.npy --arg=%t/lh/b.npy --out=%t/h-feat.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/lh-feat --out '%t/h-feat.{rank}.npy' --world-size 4 --dtype f16 --bound 0.001953125 | FileCheck %s --check-prefix=F16
// RUN: shardlin-run %S/Inputs/exporter-forms.mlir --entry=lin2d_f16_rep_col --jit --arg=%t/lh/x.npy --arg=%t/lh/w.npy --arg=%t/lh/b.npy --out=%t/h-feat-jit.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/lh-feat --out '%t/h-feat-jit.{rank}.npy' --world-size 4 --dtype f16 --bound 0.001953125 | FileCheck %s --check-prefix=F16
//
// The MLPs: bf16 on split rows (the fused block), f16 on a replicated x.
// RUN: shardlin-run %S/Inputs/exporter-forms.mlir --entry=mlp_bf16_rows --strategy=activations --arg=%t/mb/x.npy --arg=%t/mb/w1.npy --arg=%t/mb/b1.npy --arg=%t/mb/w2.npy --arg=%t/mb/b2.npy --out=%t/mb.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/mb-rows --out '%t/mb.{rank}.npy' --world-size 4 --dtype bf16 --bound 0.0625 | FileCheck %s --check-prefix=MBF16
// RUN: shardlin-run %S/Inputs/exporter-forms.mlir --entry=mlp_bf16_rows --jit --strategy=activations --arg=%t/mb/x.npy --arg=%t/mb/w1.npy --arg=%t/mb/b1.npy --arg=%t/mb/w2.npy --arg=%t/mb/b2.npy --out=%t/mb-jit.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/mb-rows --out '%t/mb-jit.{rank}.npy' --world-size 4 --dtype bf16 --bound 0.0625 | FileCheck %s --check-prefix=MBF16
// RUN: shardlin-run %S/Inputs/exporter-forms.mlir --entry=mlp_f16_rep --arg=%t/mh/x.npy --arg=%t/mh/w1.npy --arg=%t/mh/b1.npy --arg=%t/mh/w2.npy --arg=%t/mh/b2.npy --out=%t/mh.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/mh-rep --out '%t/mh.{rank}.npy' --world-size 4 --dtype f16 --bound 0.0078125 | FileCheck %s --check-prefix=MF16
// RUN: shardlin-run %S/Inputs/exporter-forms.mlir --entry=mlp_f16_rep --jit --arg=%t/mh/x.npy --arg=%t/mh/w1.npy --arg=%t/mh/b1.npy --arg=%t/mh/w2.npy --arg=%t/mh/b2.npy --out=%t/mh-jit.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/mh-rep --out '%t/mh-jit.{rank}.npy' --world-size 4 --dtype f16 --bound 0.0078125 | FileCheck %s --check-prefix=MF16
//
// The bf16 MLP in its 3-D form (batch_matmul into f32, truncf, the bias and
// the GELU in bf16) on a sequence-split x.
// RUN: %python %S/Inputs/exporter_forms.py gen --case mlp --x-shape 2x5 --k 40 --hidden 38 --n 40 --dtype bf16 --seed 23 --out-dir %t/mb3
// RUN: %python %S/Inputs/exporter_forms.py split --dir %t/mb3 --world-size 4 --dim 1 --bounds 0,2,3,3,5 --out-dir %t/mb3-seq
// RUN: shardlin-run %S/Inputs/exporter-forms.mlir --entry=mlp3d_bf16_seq --strategy=activations --arg=%t/mb3/x.npy --arg=%t/mb3/w1.npy --arg=%t/mb3/b1.npy --arg=%t/mb3/w2.npy --arg=%t/mb3/b2.npy --out=%t/mb3.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/mb3-seq --out '%t/mb3.{rank}.npy' --world-size 4 --dtype bf16 --bound 0.0625 | FileCheck %s --check-prefix=MBF16
// RUN: shardlin-run %S/Inputs/exporter-forms.mlir --entry=mlp3d_bf16_seq --jit --arg=%t/mb3/x.npy --arg=%t/mb3/w1.npy --arg=%t/mb3/b1.npy --arg=%t/mb3/w2.npy --arg=%t/mb3/b2.npy --out=%t/mb3-jit.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/mb3-seq --out '%t/mb3-jit.{rank}.npy' --world-size 4 --dtype bf16 --bound 0.0625 | FileCheck %s --check-prefix=MBF16
//
// The bf16 check fails without the bias (the same x and weight).
// RUN: %python %S/Inputs/exporter_forms.py gen --case linear --x-shape 6 --k 40 --n 38 --dtype bf16 --seed 13 --out-dir %t/lb-nobias
// RUN: %python %S/Inputs/exporter_forms.py split --dir %t/lb-nobias --world-size 4 --dim 0 --bounds 0,2,3,3,6 --out-dir %t/lb-nobias-rows
// RUN: not %python %shardlin_src/testing/tools/npytool.py check --dir %t/lb-nobias-rows --out '%t/b-rows.{rank}.npy' --world-size 4 --dtype bf16 --bound 0.015625 | FileCheck %s --check-prefix=BAD
//
// BF16: ok: 4 ranks, max relative error {{.*}} (bound 0.0156)
// F16: ok: 4 ranks, max relative error {{.*}} (bound 0.00195)
// MBF16: ok: 4 ranks, max relative error {{.*}} (bound 0.0625)
// MF16: ok: 4 ranks, max relative error {{.*}} (bound 0.00781)
// BAD: rank 0: element {{[0-9]+}} is {{.*}} (relative error {{.*}} > 0.0156)
