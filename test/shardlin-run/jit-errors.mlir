// shardlin-run --jit's errors: what the pipeline cannot lower gets its
// located diagnostic, the file runner's errors are the plan executor's
// (the same message, one line), and a failure inside the compiled code
// fails its rank with the runtime's message. Every case exits non-zero
// (`not` also fails on a crash) and leaves no output behind.

// RUN: rm -rf %t && split-file --leading-lines %s %t && mkdir %t/out
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 11 --k 19 --batch-shape 5 --world-size 4 --bias --out-dir %t/d
// RUN: %python -c "import sys; sys.path.insert(0, '%shardlin_src/testing/tools'); import npytool; npytool.write_npy('%t/x44.npy', '<f4', (4, 4), [0.5 + i for i in range(16)]); npytool.write_npy('%t/x24.npy', '<f4', (2, 4), [0.5 + i for i in range(8)])"

// ---- What the pipeline cannot lower -----------------------------------------

// A collective that splits rows known only at run time that no collective
// of the function stacked (here: an argument's) has no chunk bounds for
// them: the native path does not split a run-time size by the chunk rule,
// and says so at the op.
// RUN: not shardlin-run %t/split-dynamic.mlir --jit --world-size=2 --arg=%t/x24.npy --out=%t/out/y.{rank}.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=SPLIT

// The native path's exchange written by hand: --jit runs it (rank 1's 3
// rows and rank 0's 2 rows, stacked in placement order [1,
// 0]); the plan executor, which exchanges sizes itself, refuses it by name.
// RUN: %python -c "import sys; sys.path.insert(0, '%shardlin_src/testing/tools'); import npytool; npytool.write_npy('%t/rows.0.npy', '<f4', (2, 4), [1.0] * 8); npytool.write_npy('%t/rows.1.npy', '<f4', (3, 4), [2.0] * 12)"
// RUN: shardlin-run %t/gather-bounds.mlir --jit --world-size=2 --arg=%t/rows.{rank}.npy --out=%t/g.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py show %t/g.0.npy | FileCheck %s --check-prefix=GATHERED
// GATHERED: <f4 (5, 4)
// GATHERED-NEXT: 2.0000 2.0000 2.0000 2.0000
// GATHERED-NEXT: 2.0000 2.0000 2.0000 2.0000
// GATHERED-NEXT: 2.0000 2.0000 2.0000 2.0000
// GATHERED-NEXT: 1.0000 1.0000 1.0000 1.0000
// GATHERED-NEXT: 1.0000 1.0000 1.0000 1.0000
// RUN: not shardlin-run %t/gather-bounds.mlir --world-size=2 --arg=%t/rows.{rank}.npy --out=%t/out/p.{rank}.npy 2>&1 | FileCheck %s --check-prefix=PLAN-BOUNDS
// RUN: test ! -e %t/out/p.0.npy

// An argument that is not a tensor; a private entry.
// RUN: not shardlin-run %t/index-arg.mlir --jit --arg=%t/d/b.npy --arg=%t/d/b.npy --out=%t/out/y.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=INDEX-ARG --match-full-lines --implicit-check-not='{{.}}'
// RUN: not shardlin-run %t/private.mlir --jit --entry=hidden --arg=%t/d/b.npy --out=%t/out/y.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=PRIVATE --match-full-lines --implicit-check-not='{{.}}'

// A parse error is the parser's, as without --jit.
// RUN: not shardlin-run %t/parse-error.mlir --jit --arg=%t/d/b.npy --out=%t/out/y.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=PARSE-ERROR --match-full-lines --implicit-check-not='{{.}}'

// ---- The file runner's errors: the plan executor's -------------------------

// RUN: not shardlin-run %S/Inputs/row-uneven-bias.mlir --jit --arg=%t/nope.npy --arg=%t/d/w.npy --arg=%t/d/b.npy --out=%t/out/y.{rank}.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=MISSING -DT=%t --match-full-lines --implicit-check-not='{{.}}'
// MISSING: shardlin-run: error: rank 0: argument 0: '[[T]]/nope.npy': cannot open: No such file or directory
// RUN: not shardlin-run %S/Inputs/row-uneven-bias.mlir --jit --arg=%t/d/x.{rank}.npy --arg=%t/d/w.npy --out=%t/out/y.{rank}.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=ARG-COUNT --match-full-lines --implicit-check-not='{{.}}'
// ARG-COUNT: shardlin-run: error: the entry 'main' takes 3 argument(s) but 2 --arg were given
// RUN: not shardlin-run %S/Inputs/row-uneven-bias.mlir --jit --arg=%t/d/w.npy --arg=%t/d/w.npy --arg=%t/d/b.npy --out=%t/out/y.{rank}.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=SHAPE -DT=%t --match-full-lines --implicit-check-not='{{.}}'
// SHAPE: shardlin-run: error: rank 0: argument 0 ([[T]]/d/w.npy): shape [11, 19] does not match the entry signature's [5, 19]
// RUN: not shardlin-run %S/Inputs/row-uneven-bias.mlir --jit --world-size=3 --arg=%t/d/x.{rank}.npy --arg=%t/d/w.npy --arg=%t/d/b.npy --out=%t/out/y.{rank}.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=WORLD --match-full-lines --implicit-check-not='{{.}}'
// WORLD: shardlin-run: error: --world-size=3: the requested world size 3 does not match the 4 placements of the program's sharded values
// A shardlin.rank alone fixes the world size too (the compiled code asserts it).
// RUN: not shardlin-run %S/Inputs/jit-rank-mismatch.mlir --jit --world-size=3 --arg=%t/x44.npy --out=%t/out/g.{rank}.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=RANK-WORLD --match-full-lines --implicit-check-not='{{.}}'
// RANK-WORLD: shardlin-run: error: --world-size=3: the requested world size 3 does not match the 2 placements of the program's sharded values

// ---- Options that do not go with --jit --------------------------------------

// RUN: not shardlin-run %S/Inputs/row-uneven-bias.mlir --jit --emit-program=%t/out/p.prog 2>&1 \
// RUN:   | FileCheck %s --check-prefix=EMIT --match-full-lines --implicit-check-not='{{.}}'
// EMIT: shardlin-run: error: --emit-program writes the plan executor's program; compiled code (--jit) runs where it was compiled
// RUN: not shardlin-run %S/Inputs/row-uneven-bias.mlir --jit --backend=cuda-local --arg=%t/d/x.{rank}.npy --arg=%t/d/w.npy --arg=%t/d/b.npy --out=%t/out/y.{rank}.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=GPU --match-full-lines --implicit-check-not='{{.}}'
// GPU: shardlin-run: error: --jit runs on the CPU backends (threads, mpi): compiled code calls the runtime's C ABI, which has no GPU backends; run 'cuda-local' programs without --jit

// ---- Failures inside the compiled code --------------------------------------

// A collective whose view has the wrong size on each rank: each rank fails
// with the runtime's message (the root cause, rank 0's, is printed).
// RUN: not shardlin-run %S/Inputs/jit-rank-mismatch.mlir --jit --arg=%t/x44.npy --out=%t/out/g.{rank}.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=RANK-FAIL --match-full-lines --implicit-check-not='{{.}}'
// RANK-FAIL: shardlin-run: error: rank 0: shardlin_all_gather (rank 0 of 2): in [1, 4] has 1 along dim 0 but rank 0's chunk of 3 (chunk 0 of 2, split 2) has 2 (out is [3, 4])

// Ranks that make different collectives: the threads group names both.
// RUN: not shardlin-run %S/Inputs/jit-extra-collective.mlir --jit --timeout=5 --arg=%t/x24.npy --out=%t/out/g.{rank}.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=MISMATCH --match-full-lines --implicit-check-not='{{.}}'
// MISMATCH: shardlin-run: error: rank 0: shardlin_all_gather (rank 0 of 2): threads allGatherV (rank 0 of 2): collective mismatch: rank 0 called allGatherV but rank 1 called allReduce

// Code that copies a strided result needs MLIR's C runner utilities; a
// missing library is named, before anything runs.
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 6 --k 9 --batch-shape 4 --world-size 3 --bias --seed 31 --out-dir %t/u
// RUN: env SHARDLIN_MLIR_C_RUNNER_UTILS=%t/no-such-lib.so not shardlin-run %S/Inputs/jit-upstream.mlir --jit --entry=with_chunk --arg=%t/u/x.{rank}.npy --arg=%t/u/w.npy --arg=%t/u/b.npy --out=%t/out/y.{rank}.npy --out=%t/out/c.{rank}.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=RUNNER-UTILS -DT=%t --match-full-lines --implicit-check-not='{{.}}'
// RUNNER-UTILS: {{.*}}jit-upstream.mlir: error: the compiled code copies a strided memref with memrefCopy, from MLIR's C runner utilities, which cannot be loaded: [[T]]/no-such-lib.so: cannot open shared object file: No such file or directory (install libmlir-22, or name the library with SHARDLIN_MLIR_C_RUNNER_UTILS)

// ---- Linking the compiled code --------------------------------------------

// Functions the module calls that nothing in the process defines: the
// message names them and, for each kind, the likely cause. ShardlinRuntimeC
// (the C ABI's library) is named only for a shardlin_* function; a
// compiler-runtime helper (a "__" name, such as __truncsfbf2, which GCC 12's
// libgcc lacks) points at --jit-cpu.
// RUN: %python -c "import sys; sys.path.insert(0, '%shardlin_src/testing/tools'); import npytool; npytool.write_npy('%t/x4.npy', '<f4', (4,), [1.0, 2.0, 3.0, 4.0])"
// RUN: not shardlin-run %t/unresolved.mlir --jit --arg=%t/x4.npy --out=%t/out/u.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=LINK --implicit-check-not=ShardlinRuntimeC
// LINK: {{.*}}unresolved.mlir: error: cannot link the compiled code of @main: nothing in this process defines mystery_scale; mystery_scale is declared by the module and defined nowhere: define it in the module, or load a library that defines it before compiling
// RUN: not shardlin-run %t/unresolved-kinds.mlir --jit --arg=%t/x4.npy --out=%t/out/u.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=LINK-KINDS
// LINK-KINDS: {{.*}}unresolved-kinds.mlir: error: cannot link the compiled code of @main: nothing in this process defines {{[^;]*}}
// LINK-KINDS-SAME: ; __truncsfzz2 is a function of the compiler runtime (libgcc, compiler-rt), which LLVM calls for operations the target CPU ('host') has no instructions for, and this platform's libgcc does not define it: compile for another CPU (JitOptions::targetCpu, shardlin-run --jit-cpu=NAME), or load a library that defines it before compiling
// LINK-KINDS-SAME: ; shardlin_no_such_call is named as the runtime's C ABI, which the program itself provides: it must link ShardlinRuntimeC (Shardlin::RuntimeC), which exports the shardlin_* functions (if it does, the module calls a function this runtime does not have)
// LINK-KINDS-SAME: ; mystery_scale is declared by the module and defined nowhere

// --jit-cpu: a name LLVM does not know (LLVM itself would only warn and
// compile for a generic CPU), and the option without --jit.
// RUN: not shardlin-run %S/Inputs/row-uneven-bias.mlir --jit --jit-cpu=pentium9 --arg=%t/d/x.{rank}.npy --arg=%t/d/w.npy --arg=%t/d/b.npy --out=%t/out/y.{rank}.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=JIT-CPU --match-full-lines --implicit-check-not='{{.}}'
// JIT-CPU: shardlin-run: error: --jit-cpu=pentium9: the target CPU 'pentium9' is not one LLVM knows for {{.*}}: give 'host' (this machine's CPU and features) or a CPU name such as {{.*}} ('llc-22 -mcpu=help' lists them)
// RUN: not shardlin-run %S/Inputs/row-uneven-bias.mlir --jit-cpu=x86-64-v2 --arg=%t/d/x.{rank}.npy --arg=%t/d/w.npy --arg=%t/d/b.npy --out=%t/out/y.{rank}.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=JIT-CPU-ALONE --match-full-lines --implicit-check-not='{{.}}'
// JIT-CPU-ALONE: shardlin-run: error: --jit-cpu=x86-64-v2 names the CPU --jit compiles for; without --jit nothing is compiled to native code

// RUN: ls -A %t/out | count 0

//--- unresolved.mlir
func.func private @mystery_scale(f32) -> f32
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %v = tensor.extract %x[%c0] : tensor<4xf32>
  %s = func.call @mystery_scale(%v) : (f32) -> f32
  %y = tensor.insert %s into %x[%c0] : tensor<4xf32>
  return %y : tensor<4xf32>
}

//--- unresolved-kinds.mlir
func.func private @mystery_scale(f32) -> f32
func.func private @__truncsfzz2(f32) -> f32
func.func private @shardlin_no_such_call(f32) -> f32
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %v = tensor.extract %x[%c0] : tensor<4xf32>
  %s = func.call @mystery_scale(%v) : (f32) -> f32
  %t = func.call @__truncsfzz2(%s) : (f32) -> f32
  %u = func.call @shardlin_no_such_call(%t) : (f32) -> f32
  %y = tensor.insert %u into %x[%c0] : tensor<4xf32>
  return %y : tensor<4xf32>
}

//--- index-arg.mlir
// INDEX-ARG: {{.*}}index-arg.mlir:[[@LINE+1]]:1: error: cannot execute a value of type 'index' (expected a ranked tensor)
func.func @main(%x: tensor<11xf32>, %n: index) -> tensor<11xf32> {
  return %x : tensor<11xf32>
}

//--- private.mlir
// PRIVATE: {{.*}}private.mlir:[[@LINE+1]]:1: error: the native path compiles public functions only (each becomes an entry with a C interface); make @hidden public to run it with --jit
func.func private @hidden(%x: tensor<11xf32>) -> tensor<11xf32> {
  return %x : tensor<11xf32>
}
func.func @main(%x: tensor<11xf32>) -> tensor<11xf32> {
  return %x : tensor<11xf32>
}

//--- parse-error.mlir
func.func @main(%x: tensor<11xf32>) -> tensor<11xf32> {
  // PARSE-ERROR: {{.*}}parse-error.mlir:[[@LINE+1]]:8: error: custom op 'shardlin.bogus' is unknown
  %0 = shardlin.bogus %x : tensor<11xf32>
  return %0 : tensor<11xf32>
}

//--- split-dynamic.mlir
func.func @main(%p: tensor<?x4xf32>) -> tensor<?x4xf32> {
  // SPLIT: {{.*}}split-dynamic.mlir:[[@LINE+1]]:8: error: splits dim 0 of its input 'tensor<?x4xf32>', whose size is known only at run time, into the ranks' chunks, but those rows were not stacked by a collective of this function
  %y = shardlin.reduce_scatter %p along <dim = 0, placements = [1, 0]> : tensor<?x4xf32> -> tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}

//--- gather-bounds.mlir
func.func @main(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  // PLAN-BOUNDS: {{.*}}gather-bounds.mlir:[[@LINE+1]]:8: error: 'shardlin.gather_bounds' is the native path's (shardlin-prepare-native emits it, --jit runs it); the plan executor exchanges the ranks' sizes itself
  %b = shardlin.gather_bounds %x along <dim = 0, placements = [1, 0]> : tensor<?x4xf32> -> tensor<3xi64>
  %g = shardlin.all_gather %x along <dim = 0, placements = [1, 0]> bounds(%b : tensor<3xi64>) : tensor<?x4xf32> -> tensor<?x4xf32>
  return %g : tensor<?x4xf32>
}
