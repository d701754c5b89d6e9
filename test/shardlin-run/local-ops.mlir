// The rank-local ops the frontends emit run on the plan executor (threads)
// and on --jit (issue 40), every rank's output against a float64 reference
// (Inputs/local_ops.py, Inputs/local-ops.mlir):
// - math.fpowi with constant integer exponents (torch-mlir's GELU-tanh:
//   x^3 of a captured i64), expanded into LLVM's products for llvm.powi,
//   so the executor's result is bit for bit the --jit's (f64 powers: cmp);
//   fused in a block, unfused, and differentiated (n x^(n-1));
// - the import's index math (arith.divui sizing an expanded chunk of
//   features that the grid does not divide);
// - bf16 chains: torch-mlir's MLP truncates each matmul's f32 result in a
//   chain (a convert first), a GELU computed in f32 between extf and truncf.

// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/local_ops.py gen --entry gelu_mlp --out-dir %t/g --world-size 3 --seed 61

// The expansion: x^3 = x * (x * x), then GELU's steps (the host's fused
// GELU-tanh loop recognizes it).
// RUN: shardlin-run %S/Inputs/local-ops.mlir --entry=gelu_block --world-size=3 --strategy=activations --emit-program=%t/block.prog
// RUN: FileCheck %s --check-prefix=BLOCK < %t/block.prog
// BLOCK: instr gemm {{.*}} strategy fused
// BLOCK-NEXT: instr elementwise {{.*}} expr 14 input 0 mul 0 0 mul 0 1 const 0x1.6e4e26p-5 mul 2 3 add 0 4
// BLOCK-NOT: all_to_all

// RUN: shardlin-run %S/Inputs/local-ops.mlir --entry=gelu_mlp --world-size=3 --arg='%t/g/x.{rank}.npy' --arg=%t/g/w1.npy --arg=%t/g/b1.npy --arg=%t/g/w2.npy --arg=%t/g/b2.npy --out='%t/g/mlp.{rank}.npy'
// RUN: %python %S/Inputs/local_ops.py check --entry gelu_mlp --dir %t/g --world-size 3 --out '%t/g/mlp.{rank}.npy' | FileCheck %s
// RUN: shardlin-run %S/Inputs/local-ops.mlir --entry=gelu_block --world-size=3 --strategy=activations --arg='%t/g/x.{rank}.npy' --arg=%t/g/w1.npy --arg=%t/g/b1.npy --arg=%t/g/w2.npy --arg=%t/g/b2.npy --out='%t/g/block.{rank}.npy'
// RUN: %python %S/Inputs/local_ops.py check --entry gelu_block --dir %t/g --world-size 3 --out '%t/g/block.{rank}.npy' | FileCheck %s
// RUN: shardlin-run %S/Inputs/local-ops.mlir --entry=gelu_block --world-size=3 --fuse-blocks=false --arg='%t/g/x.{rank}.npy' --arg=%t/g/w1.npy --arg=%t/g/b1.npy --arg=%t/g/w2.npy --arg=%t/g/b2.npy --out='%t/g/sep.{rank}.npy'
// RUN: %python %S/Inputs/local_ops.py check --entry gelu_block --dir %t/g --world-size 3 --out '%t/g/sep.{rank}.npy' | FileCheck %s
// RUN: shardlin-run --jit %S/Inputs/local-ops.mlir --entry=gelu_block --world-size=3 --strategy=activations --arg='%t/g/x.{rank}.npy' --arg=%t/g/w1.npy --arg=%t/g/b1.npy --arg=%t/g/w2.npy --arg=%t/g/b2.npy --out='%t/g/jit.{rank}.npy'
// RUN: %python %S/Inputs/local_ops.py check --entry gelu_block --dir %t/g --world-size 3 --out '%t/g/jit.{rank}.npy' | FileCheck %s
// CHECK: ok: {{[0-9]+}} ranks

// torch-mlir's own GELU-tanh MLP text, imported (fc1 split on its 38
// features over 2 ranks, fc2 on its inputs, x replicated): threads, --jit,
// and under mpirun.
// RUN: %python %S/Inputs/local_ops.py gen --entry torch_tanh --out-dir %t/t --world-size 1 --seed 66
// RUN: shardlin-run %S/Inputs/local-ops-torch.mlir --arg=%t/t/x.0.npy --arg=%t/t/w1.npy --arg=%t/t/b1.npy --arg=%t/t/w2.npy --arg=%t/t/b2.npy --out=%t/t/y.npy
// RUN: %python %S/Inputs/local_ops.py check --entry torch_tanh --dir %t/t --world-size 1 --out %t/t/y.npy | FileCheck %s
// RUN: shardlin-run --jit %S/Inputs/local-ops-torch.mlir --arg=%t/t/x.0.npy --arg=%t/t/w1.npy --arg=%t/t/b1.npy --arg=%t/t/w2.npy --arg=%t/t/b2.npy --out=%t/t/jit.npy
// RUN: %python %S/Inputs/local_ops.py check --entry torch_tanh --dir %t/t --world-size 1 --out %t/t/jit.npy | FileCheck %s
// RUN: %if mpi %{ timeout 120 mpirun --allow-run-as-root --oversubscribe -np 2 shardlin-run %S/Inputs/local-ops-torch.mlir --backend=mpi --arg=%t/t/x.0.npy --arg=%t/t/w1.npy --arg=%t/t/b1.npy --arg=%t/t/w2.npy --arg=%t/t/b2.npy --out=%t/t/mpi.npy %}
// RUN: %if mpi %{ %python %S/Inputs/local_ops.py check --entry torch_tanh --dir %t/t --world-size 1 --out %t/t/mpi.npy | FileCheck %s %}

// Every form of exponent (splat i32 tensor, captured i8, scalar i64 input,
// i16 in the body; 0, negative), f64, threads and --jit: the same bits.
// RUN: %python %S/Inputs/local_ops.py gen --entry powers --out-dir %t/p --world-size 2 --seed 62
// RUN: shardlin-run %S/Inputs/local-ops.mlir --entry=powers --world-size=2 --emit-program=%t/powers.prog
// RUN: FileCheck %s --check-prefix=POWERS < %t/powers.prog
// x^-3 = 1 / (x * (x * x)); x^5 = x * ((x * x) * (x * x)); x^2; x^0 = 1; x^-1.
// POWERS: expr 16 input 0 mul 0 0 mul 0 1 const 0x1p+0 div 3 2 mul 0 0 mul 5 5 mul 0 6 mul 0 0 const 0x1p+0 const 0x1p+0 div 10 0 add 4 7
// RUN: shardlin-run %S/Inputs/local-ops.mlir --entry=powers --world-size=2 --arg='%t/p/x.{rank}.npy' --out='%t/p/y.{rank}.npy'
// RUN: %python %S/Inputs/local_ops.py check --entry powers --dir %t/p --world-size 2 --out '%t/p/y.{rank}.npy' | FileCheck %s
// RUN: shardlin-run --jit %S/Inputs/local-ops.mlir --entry=powers --world-size=2 --arg='%t/p/x.{rank}.npy' --out='%t/p/jit.{rank}.npy'
// RUN: cmp %t/p/y.0.npy %t/p/jit.0.npy
// RUN: cmp %t/p/y.1.npy %t/p/jit.1.npy

// The backward: dx = dy * sum of n x^(n-1) (fpowi again), threads and --jit;
// and the block's backward runs (its gradients: the Gradient suites).
// RUN: shardlin-opt %S/Inputs/local-ops.mlir '--shardlin-generate-backward=functions=powers,gelu_block strategy=activations' -o %t/backward.mlir
// RUN: FileCheck %s --check-prefix=BACKWARD < %t/backward.mlir
// BACKWARD-LABEL: func.func @powers_backward
// BACKWARD-DAG: math.fpowi %{{.*}}, %c4_i64 : f64, i64
// BACKWARD-DAG: math.fpowi %{{.*}}, %c-4_i64 : f64, i64
// BACKWARD-DAG: math.fpowi %{{.*}}, %c-2_i64 : f64, i64
// RUN: shardlin-run %t/backward.mlir --entry=powers_backward --world-size=2 --arg='%t/p/x.{rank}.npy' --arg='%t/p/dy.{rank}.npy' --out='%t/p/dx.{rank}.npy'
// RUN: %python %S/Inputs/local_ops.py check --entry powers --dir %t/p --world-size 2 --dy '%t/p/dy.{rank}.npy' --out '%t/p/dx.{rank}.npy' | FileCheck %s
// RUN: shardlin-run --jit %t/backward.mlir --entry=powers_backward --world-size=2 --arg='%t/p/x.{rank}.npy' --arg='%t/p/dy.{rank}.npy' --out='%t/p/jdx.{rank}.npy'
// RUN: %python %S/Inputs/local_ops.py check --entry powers --dir %t/p --world-size 2 --dy '%t/p/dy.{rank}.npy' --out '%t/p/jdx.{rank}.npy' | FileCheck %s

// Index math: the rank's chunk of 15 features at [0, 6, 9, 15, 15] (an
// empty one) expanded to 5 x 3 after an N-D linear; each rank's shard and
// the assembled result against the dense reference.
// RUN: shardlin-opt %S/Inputs/local-ops-upstream.mlir --shardlin-import-shard | FileCheck %s --check-prefix=IMPORT
// IMPORT: %[[DIM:.*]] = tensor.dim %{{.*}}, %c2 : tensor<2x3x?xf32>
// IMPORT: %[[ROWS:.*]] = arith.divui %[[DIM]], %c3 : index
// IMPORT: tensor.expand_shape %{{.*}} {{\[\[}}0], [1], [2, 3]] output_shape [2, 3, %[[ROWS]], 3]
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 15 --k 8 --batch-shape 2x3 --world-size 1 --bias --seed 72 --out-dir %t/e
// RUN: shardlin-run %S/Inputs/local-ops-upstream.mlir --arg=%t/e/x.0.npy --arg=%t/e/w.npy --arg=%t/e/b.npy --out=%t/e/y.npy
// RUN: %python %S/Inputs/local_ops.py check --entry expand_features --dir %t/e --world-size 1 --out %t/e/y.npy | FileCheck %s
// RUN: shardlin-run %S/Inputs/local-ops-upstream.mlir --arg=%t/e/x.0.npy --arg=%t/e/w.npy --arg=%t/e/b.npy --out='%t/e/y.{rank}.npy'
// RUN: %python %shardlin_src/testing/tools/npytool.py show %t/e/y.1.npy | FileCheck %s --check-prefix=SHARD1
// SHARD1: <f4 (2, 3, 1, 3)
// RUN: %python %shardlin_src/testing/tools/npytool.py show %t/e/y.3.npy | FileCheck %s --check-prefix=SHARD3
// SHARD3: <f4 (2, 3, 0, 3)
// RUN: shardlin-run --jit %S/Inputs/local-ops-upstream.mlir --arg=%t/e/x.0.npy --arg=%t/e/w.npy --arg=%t/e/b.npy --out=%t/e/jit.npy
// RUN: %python %S/Inputs/local_ops.py check --entry expand_features --dir %t/e --world-size 1 --out %t/e/jit.npy | FileCheck %s

// bf16: the chains that read a matmul's f32 result through a truncf read a
// convert of it; a GELU between extf and truncf.
// RUN: shardlin-run %S/Inputs/local-ops.mlir --entry=mlp_bf16 --world-size=2 --emit-program=%t/bf16.prog
// RUN: FileCheck %s --check-prefix=BF16 < %t/bf16.prog
// BF16: instr gemm result [[P:[0-9]+]] operands 2 0 {{[0-9]+}}
// BF16-NEXT: instr convert result [[C:[0-9]+]] operands 1 [[P]]
// BF16-NEXT: instr elementwise {{.*}} operands 2 [[C]] {{[0-9]+}} expr 12 input 0 input 1 add 0 1 {{.*}} erf
// RUN: %python %S/Inputs/local_ops.py gen --entry mlp_bf16 --out-dir %t/m --world-size 2 --seed 64
// RUN: shardlin-run %S/Inputs/local-ops.mlir --entry=mlp_bf16 --world-size=2 --arg='%t/m/x.{rank}.npy' --arg=%t/m/w1.npy --arg=%t/m/b1.npy --arg=%t/m/w2.npy --arg=%t/m/b2.npy --out='%t/m/y.{rank}.npy'
// RUN: %python %S/Inputs/local_ops.py check --entry mlp_bf16 --dir %t/m --world-size 2 --out '%t/m/y.{rank}.npy' | FileCheck %s
// RUN: shardlin-run --jit %S/Inputs/local-ops.mlir --entry=mlp_bf16 --world-size=2 --arg='%t/m/x.{rank}.npy' --arg=%t/m/w1.npy --arg=%t/m/b1.npy --arg=%t/m/w2.npy --arg=%t/m/b2.npy --out='%t/m/jit.{rank}.npy'
// RUN: %python %S/Inputs/local_ops.py check --entry mlp_bf16 --dir %t/m --world-size 2 --out '%t/m/jit.{rank}.npy' | FileCheck %s
// RUN: %python %S/Inputs/local_ops.py gen --entry gelu_bf16 --out-dir %t/b --world-size 2 --seed 63
// RUN: shardlin-run %S/Inputs/local-ops.mlir --entry=gelu_bf16 --world-size=2 --strategy=activations --arg='%t/b/x.{rank}.npy' --arg=%t/b/w1.npy --arg=%t/b/b1.npy --arg=%t/b/w2.npy --arg=%t/b/b2.npy --out='%t/b/y.{rank}.npy'
// RUN: %python %S/Inputs/local_ops.py check --entry gelu_bf16 --dir %t/b --world-size 2 --out '%t/b/y.{rank}.npy' | FileCheck %s
// RUN: shardlin-run %S/Inputs/local-ops.mlir --entry=gelu_bf16 --world-size=2 --strategy=gather-weight --arg='%t/b/x.{rank}.npy' --arg=%t/b/w1.npy --arg=%t/b/b1.npy --arg=%t/b/w2.npy --arg=%t/b/b2.npy --out='%t/b/g.{rank}.npy'
// RUN: %python %S/Inputs/local_ops.py check --entry gelu_bf16 --dir %t/b --world-size 2 --out '%t/b/g.{rank}.npy' | FileCheck %s
// RUN: shardlin-run --jit %S/Inputs/local-ops.mlir --entry=gelu_bf16 --world-size=2 --strategy=activations --arg='%t/b/x.{rank}.npy' --arg=%t/b/w1.npy --arg=%t/b/b1.npy --arg=%t/b/w2.npy --arg=%t/b/b2.npy --out='%t/b/jit.{rank}.npy'
// RUN: %python %S/Inputs/local_ops.py check --entry gelu_bf16 --dir %t/b --world-size 2 --out '%t/b/jit.{rank}.npy' | FileCheck %s
// An f16 input read only through its widening: a convert, exactly x * x.
// RUN: %python %S/Inputs/local_ops.py gen --entry widen --out-dir %t/w --world-size 2 --seed 65
// RUN: shardlin-run %S/Inputs/local-ops.mlir --entry=widen --world-size=2 --arg='%t/w/x.{rank}.npy' --out='%t/w/y.{rank}.npy'
// RUN: %python %S/Inputs/local_ops.py check --entry widen --dir %t/w --world-size 2 --out '%t/w/y.{rank}.npy' | FileCheck %s
