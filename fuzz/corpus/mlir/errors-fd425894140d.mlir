// Contract tests of shardlin-run's errors: each bad invocation prints ONE
// line and exits non-zero (`not` also fails if the tool crashes), and a run
// that fails leaves no output file behind. FileCheck's
// --match-full-lines --implicit-check-not='{{.}}' makes the expected line
// the whole of the output.
//
// Most cases run Inputs/row-uneven-bias.mlir: x 5x19 per rank, w 11x19
// sharded along K over 4 ranks, b 11 (all f32).


// ---- Files that are missing, truncated or not .npy --------------------------

// A missing file, read by every rank: the first rank's error is reported.
// MISSING: shardlin-run: error: rank 0: argument 0: '[[T]]/nope.npy': cannot open: No such file or directory

// A per-rank file missing on rank 2 only: the message is rank 2's own error
// (the root cause), naming its file, not the "another rank failed" of the
// other ranks.
// MISSING-RANK2: shardlin-run: error: rank 2: argument 0: '[[T]]/no2/x.2.npy': cannot open: No such file or directory

// A truncated per-rank file on rank 1 (its data cut short).
// TRUNC-DATA: shardlin-run: error: rank 1: argument 0: '[[T]]/trunc1/x.1.npy': truncated data: the header describes 380 bytes but only 172 follow it

// Truncated inside the header, and inside the preamble.
// TRUNC-HEADER: shardlin-run: error: rank 0: argument 1: '[[T]]/w-cut-header.npy': header length 118 extends beyond the end of the file (100 bytes, header starts at 10)
// TRUNC-PREAMBLE: shardlin-run: error: rank 0: argument 2: '[[T]]/b-cut-preamble.npy': file is too short for a .npy preamble (5 bytes)

// Not a .npy file: text, an empty file, a directory.
// NOT-NPY: shardlin-run: error: rank 0: argument 2: '[[T]]/not-npy.txt': bad magic: not a .npy file
// EMPTY-NPY: shardlin-run: error: rank 0: argument 2: '[[T]]/empty.npy': file is empty
// DIR-NPY: shardlin-run: error: rank 0: argument 2: '[[T]]/d': is a directory

// None of the failed runs above wrote an output.

// ---- dtype or shape that does not match the signature -----------------------

// '<f8' data for an f32 argument.
// DTYPE: shardlin-run: error: rank 0: argument 0 ([[T]]/d64/x.0.npy): element type '<f8' does not match the entry signature's f32 (expected '<f4')

// f16 data ('<f2') for a bf16 argument ('<u2').
// DTYPE-BF16: shardlin-run: error: rank 0: argument 0 ([[T]]/h16/x.0.npy): element type '<f2' does not match the entry signature's bf16 (expected '<u2')

// A plain argument of the wrong shape (K = 18 instead of 19).
// SHAPE: shardlin-run: error: rank 0: argument 0 ([[T]]/k18/x.0.npy): shape [5, 18] does not match the entry signature's [5, 19]

// A sharded argument takes the GLOBAL tensor: a wrong global shape, and a
// file holding a rank's local chunk (here 11 x 5) instead, are both rejected.
// SHAPE-SHARDED: shardlin-run: error: rank 0: argument 1 ([[T]]/k18/w.npy): shape [11, 18] does not match the entry signature's [11, 19] (the global shape of a sharded argument)
// SHAPE-LOCAL: shardlin-run: error: rank 0: argument 1 ([[T]]/local/w.npy): shape [11, 5] does not match the entry signature's [11, 19] (the global shape of a sharded argument)


// ---- World size, backend, entry ---------------------------------------------

// W-MISMATCH: shardlin-run: error: --world-size=3 does not match the 4 placements of the program's sharded values
// W-MISMATCH5: shardlin-run: error: --world-size=5 does not match the 4 placements of the program's sharded values
// W-NEGATIVE: shardlin-run: error: --world-size must be positive (or 0: take it from the program or from MPI), got -1

// BACKEND: shardlin-run: error: unknown backend 'nccl' (available: threads{{(, mpi)?}})

// An unknown entry; no entry given when there are several public functions
// and none is `main`.
// ENTRY: {{.*}}row-uneven-bias.mlir:{{[0-9]+}}:{{[0-9]+}}: error: no function named 'nope' (public functions: main)
// ENTRY-AMBIGUOUS: {{.*}}two-public.mlir:{{[0-9]+}}:{{[0-9]+}}: error: cannot choose an entry function: several public functions (row_wise, col_wise) and none is named 'main'; pass --entry=NAME
// ENTRY-NONE: {{.*}}no-public.mlir:{{[0-9]+}}:{{[0-9]+}}: error: cannot choose an entry function: there is no public function; pass --entry=NAME


// ---- Wrong number of --arg / --out ------------------------------------------

// TOO-FEW-ARGS: shardlin-run: error: the entry 'main' takes 3 argument(s) but 2 --arg were given
// TOO-MANY-ARGS: shardlin-run: error: the entry 'main' takes 3 argument(s) but 4 --arg were given
// NO-OUT: shardlin-run: error: the entry 'main' returns 1 result(s) but 0 --out were given
// TOO-MANY-OUTS: shardlin-run: error: the entry 'main' returns 1 result(s) but 2 --out were given


// ---- Options ----------------------------------------------------------------

// TIMEOUT: shardlin-run: error: --timeout must be a positive number of seconds

// An unknown option is rejected by the command-line parser (whose message
// may add a "Did you mean" line).
// UNKNOWN-OPTION: shardlin-run: Unknown command line argument '--bogus'.

// No input file at all; an input file that does not exist.
// NO-INPUT: shardlin-run: Not enough positional command line arguments specified!
// NO-FILE: shardlin-run: error: cannot open input file '[[T]]/nope.mlir': No such file or directory

// ---- Programs that do not parse or cannot run -------------------------------

// A parse error is located at its line and column, and the exit status is 1.

// An op the runtime cannot execute (arith.addf on tensors), located.

// An element type the runtime does not have.


// ---- An output that cannot be written ----------------------------------------

// The error names the rank and the result.
// OUT-DIR: shardlin-run: error: rank {{[0-3]}}: result 0: writing '[[T]]/no-such-dir/y.{{[0-3]}}.npy': cannot create the temporary file '[[T]]/no-such-dir/y.{{[0-3]}}.npy.tmp.{{.*}}': No such file or directory

// Only rank 2's output directory is missing: no rank's output appears (the
// ranks stage their files and rename only once all of them have written).
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
  // UNSUPPORTED-OP: {{.*}}unsupported-op.mlir:[[@LINE+2]]:8: error: the shardlin runtime cannot execute 'arith.addf'
  // UNSUPPORTED-OP-NEXT: exit 1
  %0 = arith.addf %x, %y : tensor<11xf32>
  return %0 : tensor<11xf32>
}

//--- i32.mlir
// I32: {{.*}}i32.mlir:[[@LINE+1]]:1: error: cannot execute element type 'i32' (expected f16, bf16, f32 or f64)
func.func @main(%x: tensor<11xi32>) -> tensor<11xi32> {
  return %x : tensor<11xi32>
}
