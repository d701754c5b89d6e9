// Contract tests of shardlin-run's errors: each bad invocation prints ONE
// line and exits non-zero (`not` also fails if the tool crashes), and a run
// that fails leaves no output file behind. FileCheck's
// --match-full-lines --implicit-check-not='{{.}}' makes the expected line
// the whole of the output.
//
// Most cases run Inputs/row-uneven-bias.mlir: x 5x19 per rank, w 11x19
// sharded along K over 4 ranks, b 11 (all f32).

// RUN: rm -rf %t && split-file --leading-lines %s %t && mkdir %t/out
// RUN: echo 'this is not a .npy file' > %t/not-npy.txt
// RUN: touch %t/empty.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 11 --k 19 --batch-shape 5 --world-size 4 --bias --out-dir %t/d

// ---- Files that are missing, truncated or not .npy --------------------------

// A missing file, read by every rank: the first rank's error is reported.
// RUN: not shardlin-run %S/Inputs/row-uneven-bias.mlir --world-size=4 --arg=%t/nope.npy --arg=%t/d/w.npy --arg=%t/d/b.npy --out=%t/out/y.{rank}.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=MISSING -DT=%t --match-full-lines --implicit-check-not='{{.}}'
// MISSING: shardlin-run: error: rank 0: argument 0: '[[T]]/nope.npy': cannot open: No such file or directory

// A per-rank file missing on rank 2 only: the message is rank 2's own error
// (the root cause), naming its file, not the "another rank failed" of the
// other ranks.
// RUN: mkdir %t/no2 && cp %t/d/x.0.npy %t/d/x.1.npy %t/d/x.3.npy %t/no2/
// RUN: not shardlin-run %S/Inputs/row-uneven-bias.mlir --world-size=4 --arg=%t/no2/x.{rank}.npy --arg=%t/d/w.npy --arg=%t/d/b.npy --out=%t/out/y.{rank}.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=MISSING-RANK2 -DT=%t --match-full-lines --implicit-check-not='{{.}}'
// MISSING-RANK2: shardlin-run: error: rank 2: argument 0: '[[T]]/no2/x.2.npy': cannot open: No such file or directory

// A truncated per-rank file on rank 1 (its data cut short).
// RUN: mkdir %t/trunc1 && cp %t/d/x.0.npy %t/d/x.2.npy %t/d/x.3.npy %t/trunc1/
// RUN: head -c 300 %t/d/x.1.npy > %t/trunc1/x.1.npy
// RUN: not shardlin-run %S/Inputs/row-uneven-bias.mlir --world-size=4 --arg=%t/trunc1/x.{rank}.npy --arg=%t/d/w.npy --arg=%t/d/b.npy --out=%t/out/y.{rank}.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=TRUNC-DATA -DT=%t --match-full-lines --implicit-check-not='{{.}}'
// TRUNC-DATA: shardlin-run: error: rank 1: argument 0: '[[T]]/trunc1/x.1.npy': truncated data: the header describes 380 bytes but only 172 follow it

// Truncated inside the header, and inside the preamble.
// RUN: head -c 100 %t/d/w.npy > %t/w-cut-header.npy
// RUN: not shardlin-run %S/Inputs/row-uneven-bias.mlir --world-size=4 --arg=%t/d/x.{rank}.npy --arg=%t/w-cut-header.npy --arg=%t/d/b.npy --out=%t/out/y.{rank}.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=TRUNC-HEADER -DT=%t --match-full-lines --implicit-check-not='{{.}}'
// TRUNC-HEADER: shardlin-run: error: rank 0: argument 1: '[[T]]/w-cut-header.npy': header length 118 extends beyond the end of the file (100 bytes, header starts at 10)
// RUN: head -c 5 %t/d/b.npy > %t/b-cut-preamble.npy
// RUN: not shardlin-run %S/Inputs/row-uneven-bias.mlir --world-size=4 --arg=%t/d/x.{rank}.npy --arg=%t/d/w.npy --arg=%t/b-cut-preamble.npy --out=%t/out/y.{rank}.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=TRUNC-PREAMBLE -DT=%t --match-full-lines --implicit-check-not='{{.}}'
// TRUNC-PREAMBLE: shardlin-run: error: rank 0: argument 2: '[[T]]/b-cut-preamble.npy': file is too short for a .npy preamble (5 bytes)

// Not a .npy file: text, an empty file, a directory.
// RUN: not shardlin-run %S/Inputs/row-uneven-bias.mlir --world-size=4 --arg=%t/d/x.{rank}.npy --arg=%t/d/w.npy --arg=%t/not-npy.txt --out=%t/out/y.{rank}.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NOT-NPY -DT=%t --match-full-lines --implicit-check-not='{{.}}'
// NOT-NPY: shardlin-run: error: rank 0: argument 2: '[[T]]/not-npy.txt': bad magic: not a .npy file
// RUN: not shardlin-run %S/Inputs/row-uneven-bias.mlir --world-size=4 --arg=%t/d/x.{rank}.npy --arg=%t/d/w.npy --arg=%t/empty.npy --out=%t/out/y.{rank}.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=EMPTY-NPY -DT=%t --match-full-lines --implicit-check-not='{{.}}'
// EMPTY-NPY: shardlin-run: error: rank 0: argument 2: '[[T]]/empty.npy': file is empty
// RUN: not shardlin-run %S/Inputs/row-uneven-bias.mlir --world-size=4 --arg=%t/d/x.{rank}.npy --arg=%t/d/w.npy --arg=%t/d --out=%t/out/y.{rank}.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=DIR-NPY -DT=%t --match-full-lines --implicit-check-not='{{.}}'
// DIR-NPY: shardlin-run: error: rank 0: argument 2: '[[T]]/d': is a directory

// None of the failed runs above wrote an output.
// --emit-program checks --world-size as a run does, and writes nothing when
// they disagree (row-uneven-bias.mlir has 4 placements).
// RUN: not shardlin-run %S/Inputs/row-uneven-bias.mlir --world-size=3 --emit-program=%t/out/w3.prog 2>&1 \
// RUN:   | FileCheck %s --check-prefix=EMIT-W --match-full-lines --implicit-check-not='{{.}}'
// EMIT-W: shardlin-run: error: --world-size=3: the requested world size 3 does not match the 4 placements of the program's sharded values
// RUN: shardlin-run %S/Inputs/row-uneven-bias.mlir --world-size=4 --emit-program=%t/w4.prog
// RUN: FileCheck %s --check-prefix=EMIT-W4 < %t/w4.prog
// EMIT-W4: world_size 4

// RUN: ls -A %t/out | count 0

// ---- dtype or shape that does not match the signature -----------------------

// '<f8' data for an f32 argument.
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 11 --k 19 --batch-shape 5 --world-size 4 --bias --dtype f64 --out-dir %t/d64
// RUN: not shardlin-run %S/Inputs/row-uneven-bias.mlir --world-size=4 --arg=%t/d64/x.{rank}.npy --arg=%t/d/w.npy --arg=%t/d/b.npy --out=%t/out/y.{rank}.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=DTYPE -DT=%t --match-full-lines --implicit-check-not='{{.}}'
// DTYPE: shardlin-run: error: rank 0: argument 0 ([[T]]/d64/x.0.npy): element type '<f8' does not match the entry signature's f32 (expected '<f4')

// f16 data ('<f2') for a bf16 argument ('<V2', '|V2' or '<u2').
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 5 --k 10 --batch-shape 3 --world-size 4 --bias --dtype f16 --out-dir %t/h16
// RUN: not shardlin-run %S/Inputs/bf16-row.mlir --world-size=4 --arg=%t/h16/x.{rank}.npy --arg=%t/h16/w.npy --arg=%t/h16/b.npy --out=%t/out/y.{rank}.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=DTYPE-BF16 -DT=%t --match-full-lines --implicit-check-not='{{.}}'
// DTYPE-BF16: shardlin-run: error: rank 0: argument 0 ([[T]]/h16/x.0.npy): element type '<f2' does not match the entry signature's bf16 (expected '<V2', '|V2' or '<u2')

// A plain argument of the wrong shape (K = 18 instead of 19).
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 11 --k 18 --batch-shape 5 --world-size 4 --bias --out-dir %t/k18
// RUN: not shardlin-run %S/Inputs/row-uneven-bias.mlir --world-size=4 --arg=%t/k18/x.{rank}.npy --arg=%t/d/w.npy --arg=%t/d/b.npy --out=%t/out/y.{rank}.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=SHAPE -DT=%t --match-full-lines --implicit-check-not='{{.}}'
// SHAPE: shardlin-run: error: rank 0: argument 0 ([[T]]/k18/x.0.npy): shape [5, 18] does not match the entry signature's [5, 19]

// A sharded argument without {rank} in its path takes the GLOBAL tensor: a
// wrong global shape, and a file holding a rank's local chunk (here 11 x 5)
// instead, are both rejected (shard-files.mlir has the {rank} shards).
// RUN: not shardlin-run %S/Inputs/row-uneven-bias.mlir --world-size=4 --arg=%t/d/x.{rank}.npy --arg=%t/k18/w.npy --arg=%t/d/b.npy --out=%t/out/y.{rank}.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=SHAPE-SHARDED -DT=%t --match-full-lines --implicit-check-not='{{.}}'
// SHAPE-SHARDED: shardlin-run: error: rank 0: argument 1 ([[T]]/k18/w.npy): shape [11, 18] does not match the entry signature's [11, 19] (the global shape of a sharded argument; a path with {rank} may name each rank's chunk instead)
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 11 --k 5 --batch-shape 5 --world-size 1 --out-dir %t/local
// RUN: not shardlin-run %S/Inputs/row-uneven-bias.mlir --world-size=4 --arg=%t/d/x.{rank}.npy --arg=%t/local/w.npy --arg=%t/d/b.npy --out=%t/out/y.{rank}.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=SHAPE-LOCAL -DT=%t --match-full-lines --implicit-check-not='{{.}}'
// SHAPE-LOCAL: shardlin-run: error: rank 0: argument 1 ([[T]]/local/w.npy): shape [11, 5] does not match the entry signature's [11, 19] (the global shape of a sharded argument; a path with {rank} may name each rank's chunk instead)

// RUN: ls -A %t/out | count 0

// ---- World size, backend, entry ---------------------------------------------

// RUN: not shardlin-run %S/Inputs/row-uneven-bias.mlir --world-size=3 --arg=%t/d/x.{rank}.npy --arg=%t/d/w.npy --arg=%t/d/b.npy --out=%t/out/y.{rank}.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=W-MISMATCH --match-full-lines --implicit-check-not='{{.}}'
// W-MISMATCH: shardlin-run: error: --world-size=3: the requested world size 3 does not match the 4 placements of the program's sharded values
// RUN: not shardlin-run %S/Inputs/row-uneven-bias.mlir --world-size=5 --arg=%t/d/x.{rank}.npy --arg=%t/d/w.npy --arg=%t/d/b.npy --out=%t/out/y.{rank}.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=W-MISMATCH5 --match-full-lines --implicit-check-not='{{.}}'
// W-MISMATCH5: shardlin-run: error: --world-size=5: the requested world size 5 does not match the 4 placements of the program's sharded values
// RUN: not shardlin-run %S/Inputs/row-uneven-bias.mlir --world-size=-1 --arg=%t/d/x.{rank}.npy --arg=%t/d/w.npy --arg=%t/d/b.npy --out=%t/out/y.{rank}.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=W-NEGATIVE --match-full-lines --implicit-check-not='{{.}}'
// W-NEGATIVE: shardlin-run: error: --world-size=-1: the requested world size must be in [1, 4096] (or 0: from the program), got -1

// RUN: not shardlin-run %S/Inputs/row-uneven-bias.mlir --world-size=4 --backend=gloo --arg=%t/d/x.{rank}.npy --arg=%t/d/w.npy --arg=%t/d/b.npy --out=%t/out/y.{rank}.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BACKEND --match-full-lines --implicit-check-not='{{.}}'
// BACKEND: shardlin-run: error: --backend=gloo: unknown backend 'gloo' (available: threads{{(, mpi)?(, cuda-local)?(, nccl)?}})

// An unknown entry; no entry given when there are several public functions
// and none is `main`.
// RUN: not shardlin-run %S/Inputs/row-uneven-bias.mlir --world-size=4 --entry=nope --arg=%t/d/x.{rank}.npy --arg=%t/d/w.npy --arg=%t/d/b.npy --out=%t/out/y.{rank}.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=ENTRY --match-full-lines --implicit-check-not='{{.}}'
// ENTRY: {{.*}}row-uneven-bias.mlir: error: no function named 'nope' (public functions: main)
// RUN: not shardlin-run %S/Inputs/two-public.mlir --world-size=2 --arg=%t/d/x.{rank}.npy --arg=%t/d/w.npy --arg=%t/d/b.npy --out=%t/out/y.{rank}.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=ENTRY-AMBIGUOUS --match-full-lines --implicit-check-not='{{.}}'
// ENTRY-AMBIGUOUS: {{.*}}two-public.mlir: error: cannot choose an entry function: several public functions (row_wise, col_wise) and none is named 'main'; pass --entry=NAME
// RUN: not shardlin-run %t/no-public.mlir --arg=%t/d/b.npy --out=%t/out/y.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=ENTRY-NONE --match-full-lines --implicit-check-not='{{.}}'
// ENTRY-NONE: {{.*}}no-public.mlir: error: cannot choose an entry function: there is no public function; pass --entry=NAME
// RUN: not shardlin-run %t/no-public.mlir --entry=decl --arg=%t/d/b.npy --out=%t/out/y.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=ENTRY-DECL --match-full-lines --implicit-check-not='{{.}}'

// RUN: ls -A %t/out | count 0

// ---- Wrong number of --arg / --out ------------------------------------------

// RUN: not shardlin-run %S/Inputs/row-uneven-bias.mlir --world-size=4 --arg=%t/d/x.{rank}.npy --arg=%t/d/w.npy --out=%t/out/y.{rank}.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=TOO-FEW-ARGS --match-full-lines --implicit-check-not='{{.}}'
// TOO-FEW-ARGS: shardlin-run: error: the entry 'main' takes 3 argument(s) but 2 --arg were given
// RUN: not shardlin-run %S/Inputs/row-uneven-bias.mlir --world-size=4 --arg=%t/d/x.{rank}.npy --arg=%t/d/w.npy --arg=%t/d/b.npy --arg=%t/d/b.npy --out=%t/out/y.{rank}.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=TOO-MANY-ARGS --match-full-lines --implicit-check-not='{{.}}'
// TOO-MANY-ARGS: shardlin-run: error: the entry 'main' takes 3 argument(s) but 4 --arg were given
// RUN: not shardlin-run %S/Inputs/row-uneven-bias.mlir --world-size=4 --arg=%t/d/x.{rank}.npy --arg=%t/d/w.npy --arg=%t/d/b.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NO-OUT --match-full-lines --implicit-check-not='{{.}}'
// NO-OUT: shardlin-run: error: the entry 'main' returns 1 result(s) but 0 --out were given
// RUN: not shardlin-run %S/Inputs/row-uneven-bias.mlir --world-size=4 --arg=%t/d/x.{rank}.npy --arg=%t/d/w.npy --arg=%t/d/b.npy --out=%t/out/y.{rank}.npy --out=%t/out/z.{rank}.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=TOO-MANY-OUTS --match-full-lines --implicit-check-not='{{.}}'
// TOO-MANY-OUTS: shardlin-run: error: the entry 'main' returns 1 result(s) but 2 --out were given

// RUN: ls -A %t/out | count 0

// ---- Options ----------------------------------------------------------------

// RUN: not shardlin-run %S/Inputs/row-uneven-bias.mlir --world-size=4 --timeout=0 --arg=%t/d/x.{rank}.npy --arg=%t/d/w.npy --arg=%t/d/b.npy --out=%t/out/y.{rank}.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=TIMEOUT --match-full-lines --implicit-check-not='{{.}}'
// TIMEOUT: shardlin-run: error: --timeout=0: the timeout must be a positive number of seconds, got 0
// RUN: not shardlin-run %S/Inputs/row-uneven-bias.mlir --world-size=4 --blas-threads=-3 --arg=%t/d/x.{rank}.npy --arg=%t/d/w.npy --arg=%t/d/b.npy --out=%t/out/y.{rank}.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BLAS --match-full-lines --implicit-check-not='{{.}}'
// BLAS: shardlin-run: error: --blas-threads=-3: the BLAS thread count must be >= 0 (0: cores / ranks per host), got -3
// The defaults are in --help.
// RUN: shardlin-run --help | FileCheck %s --check-prefix=DEFAULTS
// DEFAULTS: --blas-threads{{.*}}(default 0: cores / ranks per host)
// DEFAULTS: --timeout{{.*}}(default: 300)
// DEFAULTS: --world-size{{.*}}Number of ranks; optional (default: the placements' W, under mpirun the MPI world size, else 1); must match the placements
// DEFAULTS: Lowering options
// DEFAULTS: --latency-us=<value>{{.*}}(default 2)
// DEFAULTS: --bandwidth-gbps=<value>{{.*}}(default 10)
// DEFAULTS: --gemm-gflops=<value>{{.*}}(default 100)
// DEFAULTS: --memory-cap-mib=<value>{{.*}}(default 0: none)

// An unknown option is rejected by the command-line parser (whose message
// may add a "Did you mean" line).
// RUN: not shardlin-run %S/Inputs/row-uneven-bias.mlir --world-size=4 --bogus --arg=%t/d/x.{rank}.npy --arg=%t/d/w.npy --arg=%t/d/b.npy --out=%t/out/y.{rank}.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=UNKNOWN-OPTION
// UNKNOWN-OPTION: shardlin-run: Unknown command line argument '--bogus'.

// No input file at all; an input file that does not exist.
// RUN: not shardlin-run --world-size=4 2>&1 | FileCheck %s --check-prefix=NO-INPUT
// NO-INPUT: shardlin-run: Not enough positional command line arguments specified!
// RUN: not shardlin-run %t/nope.mlir --world-size=4 --arg=%t/d/x.{rank}.npy --arg=%t/d/w.npy --arg=%t/d/b.npy --out=%t/out/y.{rank}.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NO-FILE -DT=%t --match-full-lines --implicit-check-not='{{.}}'
// NO-FILE: shardlin-run: error: cannot open input file '[[T]]/nope.mlir': No such file or directory

// ---- Programs that do not parse or cannot run -------------------------------

// A parse error is located at its line and column, and the exit status is 1.
// RUN: sh -c 'shardlin-run %t/parse-error.mlir --world-size=1 --arg=%t/d/b.npy --out=%t/out/y.npy 2>&1; echo "exit $?"' \
// RUN:   | FileCheck %s --check-prefix=PARSE-ERROR --match-full-lines --implicit-check-not='{{.}}'

// An op the runtime cannot execute (math.sin), located.
// RUN: sh -c 'shardlin-run %t/unsupported-op.mlir --world-size=1 --arg=%t/d/b.npy --arg=%t/d/b.npy --out=%t/out/y.npy 2>&1; echo "exit $?"' \
// RUN:   | FileCheck %s --check-prefix=UNSUPPORTED-OP --match-full-lines --implicit-check-not='{{.}}'

// An element type the runtime does not have.
// RUN: not shardlin-run %t/i32.mlir --world-size=1 --arg=%t/d/b.npy --out=%t/out/y.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=I32 --match-full-lines --implicit-check-not='{{.}}'

// RUN: ls -A %t/out | count 0

// ---- An output that cannot be written ----------------------------------------

// The error names the rank and the result.
// RUN: not shardlin-run %S/Inputs/row-uneven-bias.mlir --world-size=4 --arg=%t/d/x.{rank}.npy --arg=%t/d/w.npy --arg=%t/d/b.npy --out=%t/no-such-dir/y.{rank}.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=OUT-DIR -DT=%t --match-full-lines --implicit-check-not='{{.}}'
// OUT-DIR: shardlin-run: error: rank {{[0-3]}}: result 0: writing '[[T]]/no-such-dir/y.{{[0-3]}}.npy': cannot create the temporary file '[[T]]/no-such-dir/y.{{[0-3]}}.npy.tmp.{{.*}}': No such file or directory

// Only rank 2's output directory is missing: no rank's output appears (the
// ranks stage their files and rename only once all of them have written).
// RUN: mkdir -p %t/po/o0 %t/po/o1 %t/po/o3
// RUN: not shardlin-run %S/Inputs/row-uneven-bias.mlir --world-size=4 --arg=%t/d/x.{rank}.npy --arg=%t/d/w.npy --arg=%t/d/b.npy --out=%t/po/o{rank}/y.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=OUT-ONE-RANK -DT=%t --match-full-lines --implicit-check-not='{{.}}'
// RUN: find %t/po -type f | count 0
// OUT-ONE-RANK: shardlin-run: error: rank 2: result 0: writing '[[T]]/po/o2/y.npy': cannot create the temporary file '[[T]]/po/o2/y.npy.tmp.{{.*}}': No such file or directory

//--- no-public.mlir
func.func private @helper(%x: tensor<11xf32>) -> tensor<11xf32> {
  return %x : tensor<11xf32>
}
// ENTRY-DECL: {{.*}}no-public.mlir:[[@LINE+1]]:1: error: entry 'decl' has no body
func.func private @decl(%x: tensor<11xf32>) -> tensor<11xf32>

//--- parse-error.mlir
func.func @main(%x: tensor<11xf32>) -> tensor<11xf32> {
  // PARSE-ERROR: {{.*}}parse-error.mlir:[[@LINE+2]]:8: error: custom op 'shardlin.bogus' is unknown
  // PARSE-ERROR-NEXT: exit 1
  %0 = shardlin.bogus %x : tensor<11xf32>
  return %0 : tensor<11xf32>
}

//--- unsupported-op.mlir
func.func @main(%x: tensor<11xf32>, %y: tensor<11xf32>) -> tensor<11xf32> {
  // UNSUPPORTED-OP: {{.*}}unsupported-op.mlir:[[@LINE+2]]:8: error: the shardlin runtime cannot execute 'math.sin' (elementwise ops it executes: {{.*}})
  // UNSUPPORTED-OP-NEXT: exit 1
  %0 = math.sin %x : tensor<11xf32>
  return %0 : tensor<11xf32>
}

//--- i32.mlir
// I32: {{.*}}i32.mlir:[[@LINE+1]]:1: error: cannot execute element type 'i32' (expected f16, bf16, f32 or f64)
func.func @main(%x: tensor<11xi32>) -> tensor<11xi32> {
  return %x : tensor<11xi32>
}
