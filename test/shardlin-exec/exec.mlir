// shardlin-exec runs a program compiled by `shardlin-run --emit-program` with
// only the runtime; its argument and output conventions are shardlin-run's.
// Each run is checked against npytool's float64 reference. The programs
// are shardlin-run's test inputs.

// RUN: rm -rf %t && mkdir -p %t/out

// Row-wise, uneven and permuted, W = 4, with a bias. --emit-program writes
// the program and runs nothing (no --arg/--out needed).
// RUN: shardlin-run %shardlin_src/test/shardlin-run/Inputs/row-uneven-bias.mlir --emit-program=%t/row.prog
// RUN: FileCheck %s --check-prefix=PROGRAM --input-file=%t/row.prog
// PROGRAM: {{^}}shardlin-program v1{{$}}
// PROGRAM: {{^}}world_size 4{{$}}
// The GEMM carries the lowering's decision (shardlin.lowering's strategy).
// PROGRAM: {{^}}instr gemm result {{.*}} strategy gather-weight loc {{.*}}row-uneven-bias.mlir:{{[0-9]+:[0-9]+$}}
// PROGRAM: {{^}}end{{$}}
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 11 --k 19 --batch-shape 5 --world-size 4 --bias --seed 31 --out-dir %t/row
// RUN: shardlin-exec %t/row.prog --world-size=4 --arg=%t/row/x.{rank}.npy --arg=%t/row/w.npy --arg=%t/row/b.npy --out=%t/row/y.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/row --out '%t/row/y.{rank}.npy' --world-size 4 | FileCheck %s --check-prefix=OK4
// OK4: ok: 4 ranks
// The same with the explicit threads backend and options.
// RUN: shardlin-exec %t/row.prog --world-size=4 --backend=threads --timeout=60 --blas-threads=1 --arg=%t/row/x.{rank}.npy --arg=%t/row/w.npy --arg=%t/row/b.npy --out=%t/row/y2.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/row --out '%t/row/y2.{rank}.npy' --world-size 4 | FileCheck %s --check-prefix=OK4

// Col-wise, uneven and permuted, W = 3, no bias.
// RUN: shardlin-run %shardlin_src/test/shardlin-run/Inputs/col-w3.mlir --emit-program=%t/col.prog
// RUN: FileCheck %s --check-prefix=COLPROG --input-file=%t/col.prog
// COLPROG: {{^}}instr gemm result {{.*}} strategy gather-weight loc {{.*}}col-w3.mlir:{{[0-9]+:[0-9]+$}}
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 10 --k 7 --batch-shape 5 --world-size 3 --seed 32 --out-dir %t/col
// RUN: shardlin-exec %t/col.prog --world-size=3 --arg=%t/col/x.{rank}.npy --arg=%t/col/w.npy --out=%t/col/y.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/col --out '%t/col/y.{rank}.npy' --world-size 3 | FileCheck %s --check-prefix=OK3
// OK3: ok: 3 ranks

// bf16, and an output without {rank}: rank 0 alone writes it.
// RUN: shardlin-run %shardlin_src/test/shardlin-run/Inputs/bf16-row.mlir --emit-program=%t/bf16.prog
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 5 --k 10 --batch-shape 3 --world-size 4 --bias --dtype bf16 --seed 33 --out-dir %t/bf16
// RUN: mkdir %t/bf16/single
// RUN: shardlin-exec %t/bf16.prog --world-size=4 --arg=%t/bf16/x.{rank}.npy --arg=%t/bf16/w.npy --arg=%t/bf16/b.npy --out=%t/bf16/single/y.npy
// RUN: ls -A %t/bf16/single | count 1
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/bf16 --out %t/bf16/single/y.npy --world-size 1 --dtype bf16 | FileCheck %s --check-prefix=OK1
// OK1: ok: 1 ranks

// --version names the backends.
// RUN: shardlin-exec --version | FileCheck %s --check-prefix=VERSION
// VERSION: shardlin-exec {{[0-9]+\.[0-9]+\.[0-9]+}}
// VERSION: backends: threads

// ---- Errors: one line, non-zero exit, no output written ----------------------

// A missing program file.
// RUN: not shardlin-exec %t/nope.prog --world-size=4 --arg=%t/row/x.{rank}.npy --arg=%t/row/w.npy --arg=%t/row/b.npy --out=%t/out/y.{rank}.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=MISSING -DT=%t --match-full-lines --implicit-check-not='{{.}}'
// MISSING: shardlin-exec: error: cannot open program '[[T]]/nope.prog': No such file or directory

// A file that is not a program: text, an empty file, a .mlir file.
// RUN: echo 'this is not a program' > %t/garbage.prog
// RUN: not shardlin-exec %t/garbage.prog --world-size=4 --arg=%t/row/x.{rank}.npy --arg=%t/row/w.npy --arg=%t/row/b.npy --out=%t/out/y.{rank}.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=GARBAGE -DT=%t --match-full-lines --implicit-check-not='{{.}}'
// GARBAGE: shardlin-exec: error: [[T]]/garbage.prog: not a shardlin program (expected the header 'shardlin-program v1')
// RUN: touch %t/empty.prog
// RUN: not shardlin-exec %t/empty.prog --world-size=4 --arg=%t/row/x.{rank}.npy --arg=%t/row/w.npy --arg=%t/row/b.npy --out=%t/out/y.{rank}.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=EMPTY -DT=%t --match-full-lines --implicit-check-not='{{.}}'
// EMPTY: shardlin-exec: error: [[T]]/empty.prog: not a shardlin program (expected the header 'shardlin-program v1')
// RUN: not shardlin-exec %shardlin_src/test/shardlin-run/Inputs/row-uneven-bias.mlir --world-size=4 --arg=%t/row/x.{rank}.npy --arg=%t/row/w.npy --arg=%t/row/b.npy --out=%t/out/y.{rank}.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=MLIR --match-full-lines --implicit-check-not='{{.}}'
// MLIR: shardlin-exec: error: {{.*}}row-uneven-bias.mlir: not a shardlin program (expected the header 'shardlin-program v1')

// A truncated program (its first 5 lines).
// RUN: head -n 5 %t/row.prog > %t/truncated.prog
// RUN: not shardlin-exec %t/truncated.prog --world-size=4 --arg=%t/row/x.{rank}.npy --arg=%t/row/w.npy --arg=%t/row/b.npy --out=%t/out/y.{rank}.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=TRUNCATED -DT=%t --match-full-lines --implicit-check-not='{{.}}'
// TRUNCATED: shardlin-exec: error: [[T]]/truncated.prog: shardlin program is truncated (no 'end' line)

// --world-size that does not match the program's placements; not a
// positive integer.
// RUN: not shardlin-exec %t/row.prog --world-size=3 --arg=%t/row/x.{rank}.npy --arg=%t/row/w.npy --arg=%t/row/b.npy --out=%t/out/y.{rank}.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=W-MISMATCH --match-full-lines --implicit-check-not='{{.}}'
// W-MISMATCH: shardlin-exec: error: --world-size=3: the requested world size 3 does not match the 4 placements of the program's sharded values
// RUN: not shardlin-exec %t/row.prog --world-size=two --arg=%t/row/x.{rank}.npy --arg=%t/row/w.npy --arg=%t/row/b.npy --out=%t/out/y.{rank}.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=W-BAD --match-full-lines --implicit-check-not='{{.}}'
// W-BAD: shardlin-exec: error: --world-size must be a positive integer, got 'two'

// An unknown option: the error line, then the usage.
// RUN: not shardlin-exec %t/row.prog --world-size=4 --bogus --arg=%t/row/x.{rank}.npy --arg=%t/row/w.npy --arg=%t/row/b.npy --out=%t/out/y.{rank}.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=UNKNOWN-OPTION
// UNKNOWN-OPTION: {{^}}shardlin-exec: error: unknown option '--bogus'{{$}}
// UNKNOWN-OPTION-NEXT: usage: shardlin-exec PROGRAM

// --help says that --world-size is optional and what it defaults to
// (issue 27, finding 10).
// RUN: shardlin-exec --help | FileCheck %s --check-prefix=HELP
// HELP: usage: shardlin-exec PROGRAM [--world-size=W]
// HELP: --world-size=<W> {{ *}}- Number of ranks; optional (default: the placements' W, under mpirun the MPI world size, else 1); must match the placements

// An unknown backend; --timeout=0; no program; two programs.
// RUN: not shardlin-exec %t/row.prog --world-size=4 --backend=gloo --arg=%t/row/x.{rank}.npy --arg=%t/row/w.npy --arg=%t/row/b.npy --out=%t/out/y.{rank}.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BACKEND --match-full-lines --implicit-check-not='{{.}}'
// BACKEND: shardlin-exec: error: --backend=gloo: unknown backend 'gloo' (available: threads{{(, mpi)?(, cuda-local)?(, nccl)?}})
// RUN: not shardlin-exec %t/row.prog --world-size=4 --timeout=0 --arg=%t/row/x.{rank}.npy --arg=%t/row/w.npy --arg=%t/row/b.npy --out=%t/out/y.{rank}.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=TIMEOUT --match-full-lines --implicit-check-not='{{.}}'
// TIMEOUT: shardlin-exec: error: --timeout=0: the timeout must be a positive number of seconds, got 0
// RUN: not shardlin-exec --world-size=4 2>&1 | FileCheck %s --check-prefix=NO-PROGRAM
// NO-PROGRAM: {{^}}shardlin-exec: error: no program given{{$}}
// RUN: not shardlin-exec %t/row.prog %t/col.prog --world-size=4 2>&1 \
// RUN:   | FileCheck %s --check-prefix=TWO-PROGRAMS -DT=%t --match-full-lines --implicit-check-not='{{.}}'
// TWO-PROGRAMS: shardlin-exec: error: more than one program given ('[[T]]/row.prog', '[[T]]/col.prog')

// Input errors are shardlin-run's: the wrong number of --arg, a per-rank
// input missing on rank 2 (the message names rank 2 and its file).
// RUN: not shardlin-exec %t/row.prog --world-size=4 --arg=%t/row/x.{rank}.npy --out=%t/out/y.{rank}.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=ARG-COUNT --match-full-lines --implicit-check-not='{{.}}'
// ARG-COUNT: shardlin-exec: error: the entry 'main' takes 3 argument(s) but 1 --arg were given
// RUN: mkdir %t/no2 && cp %t/row/x.0.npy %t/row/x.1.npy %t/row/x.3.npy %t/no2/
// RUN: not shardlin-exec %t/row.prog --world-size=4 --arg=%t/no2/x.{rank}.npy --arg=%t/row/w.npy --arg=%t/row/b.npy --out=%t/out/y.{rank}.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=MISSING-RANK2 -DT=%t --match-full-lines --implicit-check-not='{{.}}'
// MISSING-RANK2: shardlin-exec: error: rank 2: argument 0: '[[T]]/no2/x.2.npy': cannot open: No such file or directory

// None of the failed runs wrote an output.
// RUN: ls -A %t/out | count 0

// --emit-program to a path that cannot be written.
// RUN: not shardlin-run %shardlin_src/test/shardlin-run/Inputs/row-uneven-bias.mlir --emit-program=%t/no-such-dir/p.prog 2>&1 \
// RUN:   | FileCheck %s --check-prefix=EMIT-UNWRITABLE -DT=%t --match-full-lines --implicit-check-not='{{.}}'
// EMIT-UNWRITABLE: shardlin-run: error: cannot write '[[T]]/no-such-dir/p.prog': No such file or directory
