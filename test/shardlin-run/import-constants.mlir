// Exporter-style modules (torch-mlir's FX importer: weights and biases as
// dense_resource constants in the module) run on every backend, each rank
// holding only its chunk of a split weight: Inputs/exported-lin2d.mlir
// (nn.Linear(40, 38), the weight split on N at offsets with an empty chunk,
// on K, and on N as stated on its transpose) and Inputs/exported-mlp.mlir
// (fc2(gelu(fc1(x))), Megatron's block and the sequence-parallel one; the
// biases replicated constants). exported_module.py writes the blobs with
// random values and compares every rank's output with the float64
// reference. The only argument is x.

// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/exported_module.py fill %S/Inputs/exported-lin2d.mlir --out-dir %t/lin --seed 7 --x-shape 6,40
// RUN: %python %S/Inputs/exported_module.py fill %S/Inputs/exported-mlp.mlir --out-dir %t/mlp --seed 8 --x-shape 6,40

// The program text carries the constants: a split weight with its chunk
// spec (and bounds), the bias whole; the weight is no argument.
// RUN: shardlin-run %t/lin/module.mlir --entry=col --emit-program=%t/col.prog
// RUN: FileCheck %s --check-prefix=PROG < %t/col.prog
// PROG: arg 0 plain replicated
// PROG-NOT: arg 1
// PROG: constant 0 f32 2 38 40 sharded spec 0 4 0 1 2 3 bounds 0 12 12 30 38 data 6080 {{[0-9a-f]+}} loc
// PROG: constant 1 f32 1 38 data 152 {{[0-9a-f]+}} loc
// PROG: instr constant result {{[0-9]+}} operands 0 index 1 0 loc

// Threads, W = 4: every rank's replicated y.
// RUN: shardlin-run %t/lin/module.mlir --entry=col --arg=%t/lin/x.npy --out=%t/lin/col.{rank}.npy
// RUN: %python %S/Inputs/exported_module.py check --model lin --dir %t/lin --out %t/lin/col.{rank}.npy --world-size 4 | FileCheck %s
// RUN: shardlin-run %t/lin/module.mlir --entry=row --world-size 4 --arg=%t/lin/x.npy --out=%t/lin/row.{rank}.npy
// RUN: %python %S/Inputs/exported_module.py check --model lin --dir %t/lin --out %t/lin/row.{rank}.npy --world-size 4 | FileCheck %s
// RUN: shardlin-run %t/lin/module.mlir --entry=col_transposed --arg=%t/lin/x.npy --out=%t/lin/colt.{rank}.npy
// RUN: %python %S/Inputs/exported_module.py check --model lin --dir %t/lin --out %t/lin/colt.{rank}.npy --world-size 4 | FileCheck %s
// RUN: shardlin-run %t/mlp/module.mlir --entry=mlp --arg=%t/mlp/x.npy --out=%t/mlp/mlp.{rank}.npy
// RUN: %python %S/Inputs/exported_module.py check --model mlp --dir %t/mlp --out %t/mlp/mlp.{rank}.npy --world-size 4 | FileCheck %s
// RUN: shardlin-run %t/mlp/module.mlir --entry=mlp_seq --arg=%t/mlp/x.npy --out=%t/mlp/seq.{rank}.npy
// RUN: %python %S/Inputs/exported_module.py check --model mlp --dir %t/mlp --out %t/mlp/seq.{rank}.npy --world-size 4 | FileCheck %s
// CHECK: ok: 4 ranks

// A check that can fail: another seed's weights are not these.
// RUN: %python %S/Inputs/exported_module.py fill %S/Inputs/exported-lin2d.mlir --out-dir %t/other --seed 9 --x-shape 6,40
// RUN: cp %t/lin/x.npy %t/other/x.npy
// RUN: not %python %S/Inputs/exported_module.py check --model lin --dir %t/other --out %t/lin/col.{rank}.npy --world-size 4 2>&1 | FileCheck %s --check-prefix=WRONG
// WRONG: rank 0: element 0 is

// The program text, saved and run by shardlin-exec: the same outputs, bit
// for bit.
// RUN: shardlin-run %t/mlp/module.mlir --entry=mlp_seq --emit-program=%t/seq.prog
// RUN: shardlin-exec %t/seq.prog --world-size=4 --arg=%t/mlp/x.npy --out=%t/mlp/seq-exec.{rank}.npy
// RUN: cmp %t/mlp/seq.0.npy %t/mlp/seq-exec.0.npy
// RUN: cmp %t/mlp/seq.1.npy %t/mlp/seq-exec.1.npy
// RUN: cmp %t/mlp/seq.2.npy %t/mlp/seq-exec.2.npy
// RUN: cmp %t/mlp/seq.3.npy %t/mlp/seq-exec.3.npy
// RUN: shardlin-exec %t/col.prog --world-size=4 --arg=%t/lin/x.npy --out=%t/lin/col-exec.{rank}.npy
// RUN: cmp %t/lin/col.1.npy %t/lin/col-exec.1.npy
// RUN: cmp %t/lin/col.3.npy %t/lin/col-exec.3.npy

// The native path (--jit): the constant's chunk is the rank's slice of it.
// RUN: shardlin-run %t/lin/module.mlir --jit --entry=col --arg=%t/lin/x.npy --out=%t/lin/col-jit.{rank}.npy
// RUN: %python %S/Inputs/exported_module.py check --model lin --dir %t/lin --out %t/lin/col-jit.{rank}.npy --world-size 4 | FileCheck %s
// RUN: shardlin-run %t/lin/module.mlir --jit --entry=row --arg=%t/lin/x.npy --out=%t/lin/row-jit.{rank}.npy
// RUN: %python %S/Inputs/exported_module.py check --model lin --dir %t/lin --out %t/lin/row-jit.{rank}.npy --world-size 4 | FileCheck %s
// RUN: shardlin-run %t/mlp/module.mlir --jit --entry=mlp --arg=%t/mlp/x.npy --out=%t/mlp/mlp-jit.{rank}.npy
// RUN: %python %S/Inputs/exported_module.py check --model mlp --dir %t/mlp --out %t/mlp/mlp-jit.{rank}.npy --world-size 4 | FileCheck %s
// RUN: shardlin-run %t/mlp/module.mlir --jit --entry=mlp_seq --arg=%t/mlp/x.npy --out=%t/mlp/seq-jit.{rank}.npy
// RUN: %python %S/Inputs/exported_module.py check --model mlp --dir %t/mlp --out %t/mlp/seq-jit.{rank}.npy --world-size 4 | FileCheck %s

// Constants that are not splats in a rank-local chain (a norm's weight and
// bias, whole on every rank; a positional table, split like x's rows, so
// that each rank holds only its rows of it), x split on its rows with an
// empty chunk: threads, --jit, shardlin-exec.
// RUN: %python %S/Inputs/exported_module.py fill %S/Inputs/exported-affine.mlir --out-dir %t/aff --seed 13 --x-shape 6,40
// RUN: shardlin-run %t/aff/module.mlir --arg=%t/aff/x.npy --out=%t/aff/y.{rank}.npy
// RUN: shardlin-run %t/aff/module.mlir --emit-program=%t/aff.prog
// RUN: %python %S/Inputs/exported_module.py check --model affine --dir %t/aff --out %t/aff/y.{rank}.npy --world-size 4 | FileCheck %s
// RUN: FileCheck %s --check-prefix=AFFPROG < %t/aff.prog
// AFFPROG: constant 0 f32 1 40 data 160
// AFFPROG: constant 1 f32 1 40 data 160
// AFFPROG: constant 2 f32 2 6 40 sharded spec 0 4 0 1 2 3 bounds 0 2 2 5 6 data 960
// AFFPROG-NOT: local_chunk
// RUN: shardlin-run %t/aff/module.mlir --jit --arg=%t/aff/x.npy --out=%t/aff/y-jit.{rank}.npy
// RUN: %python %S/Inputs/exported_module.py check --model affine --dir %t/aff --out %t/aff/y-jit.{rank}.npy --world-size 4 | FileCheck %s
// RUN: shardlin-exec %t/aff.prog --world-size=4 --arg=%t/aff/x.npy --out=%t/aff/y-exec.{rank}.npy
// RUN: cmp %t/aff/y.2.npy %t/aff/y-exec.2.npy

// A blob the module does not hold: a located error, on threads and --jit.
// RUN: not shardlin-run %S/Inputs/constant-missing-blob.mlir --world-size 1 --arg=%t/aff/norm.bias.npy --out=%t/missing.npy 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not shardlin-run %S/Inputs/constant-missing-blob.mlir --jit --world-size 1 --arg=%t/aff/norm.bias.npy --out=%t/missing.npy 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: constant-missing-blob.mlir:4:8: error: 'shardlin.constant' op dense_resource<missing> has no data: the module's dialect_resources do not define it

// Every element type: the linear's module in f16, bf16 and f64 (weights,
// bias and x of that type), threads and --jit.
// RUN: %python %S/Inputs/exported_module.py fill %S/Inputs/exported-lin2d.mlir --dtype f16 --out-dir %t/f16 --seed 10 --x-shape 6,40
// RUN: shardlin-run %t/f16/module.mlir --entry=col --arg=%t/f16/x.npy --out=%t/f16/col.{rank}.npy
// RUN: %python %S/Inputs/exported_module.py check --model lin --dtype f16 --dir %t/f16 --out %t/f16/col.{rank}.npy --world-size 4 | FileCheck %s
// RUN: shardlin-run %t/f16/module.mlir --entry=row --jit --arg=%t/f16/x.npy --out=%t/f16/row-jit.{rank}.npy
// RUN: %python %S/Inputs/exported_module.py check --model lin --dtype f16 --dir %t/f16 --out %t/f16/row-jit.{rank}.npy --world-size 4 | FileCheck %s
// RUN: %python %S/Inputs/exported_module.py fill %S/Inputs/exported-lin2d.mlir --dtype bf16 --out-dir %t/bf16 --seed 11 --x-shape 6,40
// RUN: shardlin-run %t/bf16/module.mlir --entry=row --arg=%t/bf16/x.npy --out=%t/bf16/row.{rank}.npy
// RUN: %python %S/Inputs/exported_module.py check --model lin --dtype bf16 --dir %t/bf16 --out %t/bf16/row.{rank}.npy --world-size 4 | FileCheck %s
// RUN: shardlin-run %t/bf16/module.mlir --entry=col_transposed --jit --arg=%t/bf16/x.npy --out=%t/bf16/colt-jit.{rank}.npy
// RUN: %python %S/Inputs/exported_module.py check --model lin --dtype bf16 --dir %t/bf16 --out %t/bf16/colt-jit.{rank}.npy --world-size 4 | FileCheck %s
// RUN: %python %S/Inputs/exported_module.py fill %S/Inputs/exported-lin2d.mlir --dtype f64 --out-dir %t/f64 --seed 12 --x-shape 6,40
// RUN: shardlin-run %t/f64/module.mlir --entry=col --arg=%t/f64/x.npy --out=%t/f64/col.{rank}.npy
// RUN: %python %S/Inputs/exported_module.py check --model lin --dtype f64 --dir %t/f64 --out %t/f64/col.{rank}.npy --world-size 4 | FileCheck %s
// RUN: shardlin-run %t/f64/module.mlir --entry=row --jit --arg=%t/f64/x.npy --out=%t/f64/row-jit.{rank}.npy
// RUN: %python %S/Inputs/exported_module.py check --model lin --dtype f64 --dir %t/f64 --out %t/f64/row-jit.{rank}.npy --world-size 4 | FileCheck %s
