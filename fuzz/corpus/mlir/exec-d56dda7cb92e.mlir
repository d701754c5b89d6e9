// shardlin-exec runs a program compiled by `shardlin-run --emit-program` with
// only the runtime; its argument and output conventions are shardlin-run's.
// Each run is checked against npytool's float64 reference. The programs
// are shardlin-run's test inputs.


// Row-wise, uneven and permuted, W = 4, with a bias. --emit-program writes
// the program and runs nothing (no --arg/--out needed).
// PROGRAM: {{^}}shardlin-program v1{{$}}
// PROGRAM: {{^}}world_size 4{{$}}
// PROGRAM: {{^}}end{{$}}
// OK4: ok: 4 ranks
// The same with the explicit threads backend and options.

// Col-wise, uneven and permuted, W = 3, no bias.
// OK3: ok: 3 ranks

// bf16, and an output without {rank}: rank 0 alone writes it.
// OK1: ok: 1 ranks

// --version names the backends.
// VERSION: shardlin-exec {{[0-9]+\.[0-9]+\.[0-9]+}}
// VERSION: backends: threads

// ---- Errors: one line, non-zero exit, no output written ----------------------

// A missing program file.
// MISSING: shardlin-exec: error: cannot open program '[[T]]/nope.prog': No such file or directory

// A file that is not a program: text, an empty file, a .mlir file.
// GARBAGE: shardlin-exec: error: [[T]]/garbage.prog: not a shardlin program (expected the header 'shardlin-program v1')
// EMPTY: shardlin-exec: error: [[T]]/empty.prog: not a shardlin program (expected the header 'shardlin-program v1')
// MLIR: shardlin-exec: error: {{.*}}row-uneven-bias.mlir: not a shardlin program (expected the header 'shardlin-program v1')

// A truncated program (its first 5 lines).
// TRUNCATED: shardlin-exec: error: [[T]]/truncated.prog: shardlin program is truncated (no 'end' line)

// --world-size that does not match the program's placements; not a
// positive integer.
// W-MISMATCH: shardlin-exec: error: --world-size=3 does not match the 4 placements of the program's sharded values
// W-BAD: shardlin-exec: error: --world-size must be a positive integer, got 'two'

// An unknown option: the error line, then the usage.
// UNKNOWN-OPTION: {{^}}shardlin-exec: error: unknown option '--bogus'{{$}}
// UNKNOWN-OPTION-NEXT: usage: shardlin-exec PROGRAM

// An unknown backend; --timeout=0; no program; two programs.
// BACKEND: shardlin-exec: error: unknown backend 'nccl' (available: threads{{(, mpi)?}})
// TIMEOUT: shardlin-exec: error: --timeout must be a positive number, got '0'
// NO-PROGRAM: {{^}}shardlin-exec: error: no program given{{$}}
// TWO-PROGRAMS: shardlin-exec: error: more than one program given ('[[T]]/row.prog', '[[T]]/col.prog')

// Input errors are shardlin-run's: the wrong number of --arg, a per-rank
// input missing on rank 2 (the message names rank 2 and its file).
// ARG-COUNT: shardlin-exec: error: the entry 'main' takes 3 argument(s) but 1 --arg were given
// MISSING-RANK2: shardlin-exec: error: rank 2: argument 0: '[[T]]/no2/x.2.npy': cannot open: No such file or directory

// None of the failed runs wrote an output.

// --emit-program to a path that cannot be written.
// EMIT-UNWRITABLE: shardlin-run: error: cannot write '[[T]]/no-such-dir/p.prog': No such file or directory
