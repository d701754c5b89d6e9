// REQUIRES: mpi
// The exporter forms of import-exporter-forms.mlir and -half.mlir under
// mpirun, one process per rank: the sequence-split 3-D linear and GELU MLP
// and the bf16 MLP on split rows, every rank's output against the float64
// reference (Inputs/exporter_forms.py).
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/exporter_forms.py gen --case linear --x-shape 2x5 --k 40 --n 38 --bias --seed 31 --out-dir %t/l
// RUN: %python %S/Inputs/exporter_forms.py gen --case mlp --x-shape 2x5 --k 40 --hidden 38 --n 40 --seed 32 --out-dir %t/m
// RUN: %python %S/Inputs/exporter_forms.py gen --case mlp --x-shape 6 --k 40 --hidden 38 --n 40 --dtype bf16 --seed 33 --out-dir %t/mb
// RUN: %python %S/Inputs/exporter_forms.py split --dir %t/l --world-size 4 --dim 1 --bounds 0,2,3,3,5 --out-dir %t/l-seq
// RUN: %python %S/Inputs/exporter_forms.py split --dir %t/m --world-size 4 --dim 1 --bounds 0,2,3,3,5 --out-dir %t/m-seq
// RUN: %python %S/Inputs/exporter_forms.py split --dir %t/mb --world-size 4 --dim 0 --bounds 0,2,3,3,6 --out-dir %t/mb-rows
// RUN: timeout 120 mpirun --allow-run-as-root --oversubscribe -np 4 shardlin-run %S/Inputs/exporter-forms.mlir --backend=mpi --entry=lin3d_seq_col --strategy=activations --arg=%t/l/x.npy --arg=%t/l/w.npy --arg=%t/l/b.npy --out=%t/l.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/l-seq --out '%t/l.{rank}.npy' --world-size 4 --dtype f32 | FileCheck %s --check-prefix=OK
// RUN: timeout 120 mpirun --allow-run-as-root --oversubscribe -np 4 shardlin-run %S/Inputs/exporter-forms.mlir --backend=mpi --entry=mlp3d_seq --strategy=activations --arg=%t/m/x.npy --arg=%t/m/w1.npy --arg=%t/m/b1.npy --arg=%t/m/w2.npy --arg=%t/m/b2.npy --out=%t/m.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/m-seq --out '%t/m.{rank}.npy' --world-size 4 --dtype f32 | FileCheck %s --check-prefix=OK
// RUN: timeout 120 mpirun --allow-run-as-root --oversubscribe -np 4 shardlin-run %S/Inputs/exporter-forms.mlir --backend=mpi --entry=mlp_bf16_rows --strategy=activations --arg=%t/mb/x.npy --arg=%t/mb/w1.npy --arg=%t/mb/b1.npy --arg=%t/mb/w2.npy --arg=%t/mb/b2.npy --out=%t/mb.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/mb-rows --out '%t/mb.{rank}.npy' --world-size 4 --dtype bf16 --bound 0.0625 | FileCheck %s --check-prefix=MBF16
//
// OK: ok: 4 ranks, max relative error {{.*}} (bound 1e-05)
// MBF16: ok: 4 ranks, max relative error {{.*}} (bound 0.0625)
