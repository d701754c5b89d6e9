// A checkpoint written by PyTorch and the Python `safetensors` package
// (Inputs/torch-bf16-linear.safetensors, made by Inputs/torch_checkpoint.py
// with safetensors 0.8.0 and torch 2.15.0: the package's own header layout,
// tensors sorted by name so the bias comes first, the {"format": "pt"}
// metadata) drives a bf16 row-wise linear on 4 threads. Its weight and bias
// are the ones npytool.py gen-linear makes with seed 29, so every rank's
// output is checked against the float64 reference computed from them; a
// checkpoint read wrongly (an offset, the byte order, a dtype) fails the
// check. Run by shardlin-run (the plan executor on threads) and, from the
// emitted program, by shardlin-exec.

// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 5 --k 10 --batch-shape 3 --world-size 4 --dtype bf16 --bias --seed 29 --out-dir %t
// RUN: shardlin-run %S/Inputs/bf16-row.mlir --arg=%t/x.{rank}.npy --arg=%S/Inputs/torch-bf16-linear.safetensors:linear.weight --arg=%S/Inputs/torch-bf16-linear.safetensors:linear.bias --out=%t/y.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t --out '%t/y.{rank}.npy' --world-size 4 --dtype bf16 | FileCheck %s
// RUN: shardlin-run %S/Inputs/bf16-row.mlir --emit-program=%t/row.prog
// RUN: shardlin-exec %t/row.prog --arg=%t/x.{rank}.npy --arg=%S/Inputs/torch-bf16-linear.safetensors:linear.weight --arg=%S/Inputs/torch-bf16-linear.safetensors:linear.bias --out=%t/e.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t --out '%t/e.{rank}.npy' --world-size 4 --dtype bf16 | FileCheck %s
// CHECK: ok: 4 ranks

// npytool reads the package's file as it wrote it.
// RUN: %python %shardlin_src/testing/tools/npytool.py show %S/Inputs/torch-bf16-linear.safetensors:linear.weight | FileCheck %s --check-prefix=SHOW
// SHOW: <V2 (5, 10)
