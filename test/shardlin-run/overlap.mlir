// Fused blocks pipelined in row chunks from the compiler to the runtime:
// --overlap-chunks (the lowering's option) puts `overlap N` on the fused
// all_gather of the emitted program, and the runtime runs the block in N
// row chunks, each chunk's all_gather and reduce_scatter on the rank's lane
// beside the GEMMs of the chunk before (docs/runtime.md, "Overlapping
// communication with the GEMMs"). A bf16 ReLU MLP, 7 uneven rows per rank
// over W = 4 with permuted placements: every rank's output against the
// float64 reference (npytool.py gen-mlp), on threads and, under mpirun, on
// mpi, and the sequential run's too. The pipelined and the sequential
// outputs are compared within twice the reference check's bound (each is
// within it), not bit for bit: a chunk's GEMMs have fewer rows, for which
// OpenBLAS may pick kernels that add in another order, and a hidden value
// rounded to bf16 can then round the other way (docs/runtime.md,
// "Overlapping communication with the GEMMs"). At these sizes the f32 sums
// of bf16 products are mostly exact and the outputs agree, but nothing
// promises it.

// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-mlp --k 16 --hidden 40 --n 12 --rows 7 --world-size 4 --dtype bf16 --seed 5 --out-dir %t/d
// RUN: shardlin-run %s --strategy=activations --overlap-chunks=3 --emit-program=%t/mlp.prog
// RUN: FileCheck %s --check-prefix=PROG < %t/mlp.prog
// PROG: instr all_gather result {{[0-9]+}} operands 1 0 chunk 0 4 0 1 2 3 strategy fused overlap 3 loc

// RUN: shardlin-run %s --strategy=activations --overlap-chunks=3 --verbose --arg=%t/d/x.{rank}.npy --arg=%t/d/w1.npy --arg=%t/d/w2.npy --out=%t/y3.{rank}.npy 2>&1 | FileCheck %s --check-prefix=VERBOSE
// VERBOSE: block from instruction 0 to {{[0-9]+}} pipelined in 3 row chunks
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/d --out '%t/y3.{rank}.npy' --world-size 4 --dtype bf16 | FileCheck %s --check-prefix=OK
// OK: ok: 4 ranks
// RUN: shardlin-run %s --strategy=activations --overlap-chunks=0 --arg=%t/d/x.{rank}.npy --arg=%t/d/w1.npy --arg=%t/d/w2.npy --out=%t/y0.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/d --out '%t/y0.{rank}.npy' --world-size 4 --dtype bf16 | FileCheck %s --check-prefix=OK
// RUN: %python -c "import sys; sys.path.insert(0, sys.argv[1]); import npytool as t; lim = 2 * t.bound('bf16', 4); d = max(abs(p - q) / max(s, 1e-30) for r in range(4) for p, q, s in zip(t.read_npy(sys.argv[2] %% r)[2], t.read_npy(sys.argv[3] %% r)[2], t.read_npy(sys.argv[4] %% r)[2])); print('apart ok' if d <= lim else 'apart %%.3g > %%.3g' %% (d, lim))" %shardlin_src/testing/tools %t/y0.%%d.npy %t/y3.%%d.npy %t/d/scale.%%d.npy | FileCheck %s --check-prefix=APART
// APART: apart ok

// RUN: %if mpi %{ timeout 120 mpirun --allow-run-as-root --oversubscribe -np 4 shardlin-run %s --backend=mpi --timeout=60 --strategy=activations --overlap-chunks=7 --arg=%t/d/x.{rank}.npy --arg=%t/d/w1.npy --arg=%t/d/w2.npy --out=%t/ym.{rank}.npy %}
// RUN: %if mpi %{ %python %shardlin_src/testing/tools/npytool.py check --dir %t/d --out '%t/ym.{rank}.npy' --world-size 4 --dtype bf16 | FileCheck %s --check-prefix=OK %}

!w1 = !shardlin.sharded<tensor<40x16xbf16>, #shardlin.chunk<dim = 0, placements = [3, 1, 0, 2]>>
!w2 = !shardlin.sharded<tensor<12x40xbf16>, #shardlin.chunk<dim = 1, placements = [3, 1, 0, 2]>>
func.func @main(%x: tensor<7x16xbf16>, %w1: !w1, %w2: !w2) -> tensor<7x12xbf16> {
  %h = shardlin.linear %x, %w1 : (tensor<7x16xbf16>, !w1) -> tensor<7x40xbf16>
  %zero = arith.constant dense<0.0> : tensor<7x40xbf16>
  %a = arith.maximumf %h, %zero : tensor<7x40xbf16>
  %y = shardlin.linear %a, %w2 : (tensor<7x40xbf16>, !w2) -> tensor<7x12xbf16>
  return %y : tensor<7x12xbf16>
}
