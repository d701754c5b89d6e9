// The GPU backends end to end through the tools: the inputs are read on the
// host, copied to the GPU once, the program runs there (cuBLAS, device
// collectives), and the results come back and are written as usual. Every
// run is checked against npytool's float64 reference. The programs are
// shardlin-run's test inputs.
//
// REQUIRES: gpu

// RUN: rm -rf %t && mkdir -p %t

// cuda-local: W = 4 ranks sharing cuda:0, row-wise (uneven, permuted, bias),
// both strategies; then the same program through shardlin-exec.
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 11 --k 19 --batch-shape 5 --world-size 4 --bias --seed 51 --out-dir %t/row
// RUN: shardlin-run %S/Inputs/row-uneven-bias.mlir --backend=cuda-local --strategy=activations --arg=%t/row/x.{rank}.npy --arg=%t/row/w.npy --arg=%t/row/b.npy --out=%t/row/y.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/row --out '%t/row/y.{rank}.npy' --world-size 4 | FileCheck %s --check-prefix=OK4
// RUN: shardlin-run %S/Inputs/row-uneven-bias.mlir --backend=cuda-local --device=0 --strategy=gather-weight --arg=%t/row/x.{rank}.npy --arg=%t/row/w.npy --arg=%t/row/b.npy --out=%t/row/g.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/row --out '%t/row/g.{rank}.npy' --world-size 4 | FileCheck %s --check-prefix=OK4
// RUN: shardlin-run %S/Inputs/row-uneven-bias.mlir --strategy=activations --emit-program=%t/row.prog
// RUN: shardlin-exec %t/row.prog --world-size=4 --backend=cuda-local --timeout=60 --arg=%t/row/x.{rank}.npy --arg=%t/row/w.npy --arg=%t/row/b.npy --out=%t/row/e.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/row --out '%t/row/e.{rank}.npy' --world-size 4 | FileCheck %s --check-prefix=OK4

// Col-wise W = 3 without bias; a 3-D input; a 1-D input with an empty chunk.
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 10 --k 7 --batch-shape 5 --world-size 3 --seed 52 --out-dir %t/col
// RUN: shardlin-run %S/Inputs/col-w3.mlir --backend=cuda-local --arg=%t/col/x.{rank}.npy --arg=%t/col/w.npy --out=%t/col/y.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/col --out '%t/col/y.{rank}.npy' --world-size 3 | FileCheck %s --check-prefix=OK3
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 7 --k 8 --batch-shape 2x3 --world-size 4 --bias --seed 53 --out-dir %t/3d
// RUN: shardlin-run %S/Inputs/col-3d.mlir --backend=cuda-local --arg=%t/3d/x.{rank}.npy --arg=%t/3d/w.npy --arg=%t/3d/b.npy --out=%t/3d/y.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/3d --out '%t/3d/y.{rank}.npy' --world-size 4 | FileCheck %s --check-prefix=OK4
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 6 --k 9 --batch-shape '' --world-size 4 --bias --seed 54 --out-dir %t/vec
// RUN: shardlin-run %S/Inputs/row-1d.mlir --backend=cuda-local --arg=%t/vec/x.{rank}.npy --arg=%t/vec/w.npy --arg=%t/vec/b.npy --out=%t/vec/y.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/vec --out '%t/vec/y.{rank}.npy' --world-size 4 | FileCheck %s --check-prefix=OK4

// Every dtype: f64, f16, bf16 (the f32 cases above run without TF32).
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 5 --k 8 --batch-shape 4 --world-size 3 --bias --dtype f64 --seed 55 --out-dir %t/f64
// RUN: shardlin-run %S/Inputs/f64-row.mlir --backend=cuda-local --arg=%t/f64/x.{rank}.npy --arg=%t/f64/w.npy --arg=%t/f64/b.npy --out=%t/f64/y.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/f64 --out '%t/f64/y.{rank}.npy' --world-size 3 --dtype f64 | FileCheck %s --check-prefix=OK3
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 9 --k 6 --batch-shape 3 --world-size 4 --bias --dtype f16 --seed 56 --out-dir %t/f16
// RUN: shardlin-run %S/Inputs/f16-col.mlir --backend=cuda-local --arg=%t/f16/x.{rank}.npy --arg=%t/f16/w.npy --arg=%t/f16/b.npy --out=%t/f16/y.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/f16 --out '%t/f16/y.{rank}.npy' --world-size 4 --dtype f16 | FileCheck %s --check-prefix=OK4
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 5 --k 10 --batch-shape 3 --world-size 4 --bias --dtype bf16 --seed 57 --out-dir %t/bf16
// RUN: shardlin-run %S/Inputs/bf16-row.mlir --backend=cuda-local --arg=%t/bf16/x.{rank}.npy --arg=%t/bf16/w.npy --arg=%t/bf16/b.npy --out=%t/bf16/y.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/bf16 --out '%t/bf16/y.{rank}.npy' --world-size 4 --dtype bf16 | FileCheck %s --check-prefix=OK4

// nccl on one GPU (W = 1), and on four when there are four.
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 6 --k 7 --batch-shape 5 --world-size 1 --bias --seed 58 --out-dir %t/w1
// RUN: %if nccl %{ shardlin-run %S/Inputs/w1.mlir --backend=nccl --arg=%t/w1/x.{rank}.npy --arg=%t/w1/w.npy --arg=%t/w1/b.npy --out=%t/w1/y.{rank}.npy %}
// RUN: %if nccl %{ %python %shardlin_src/testing/tools/npytool.py check --dir %t/w1 --out '%t/w1/y.{rank}.npy' --world-size 1 | FileCheck %s --check-prefix=OK1 %}
// RUN: %if nccl && gpus-4 %{ shardlin-exec %t/row.prog --world-size=4 --backend=nccl --arg=%t/row/x.{rank}.npy --arg=%t/row/w.npy --arg=%t/row/b.npy --out=%t/row/n.{rank}.npy %}
// RUN: %if nccl && gpus-4 %{ %python %shardlin_src/testing/tools/npytool.py check --dir %t/row --out '%t/row/n.{rank}.npy' --world-size 4 | FileCheck %s --check-prefix=OK4 %}

// OK1: ok: 1 ranks
// OK3: ok: 3 ranks
// OK4: ok: 4 ranks
