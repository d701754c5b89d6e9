// The output policy (docs/robustness.md, "Outputs"), from the tools: a run
// that fails, or that a signal interrupts, leaves no new or changed regular
// output and no temporary; the in-place destinations (FIFOs, pipes,
// devices) are written before any staged output is renamed; a reader that
// closes early is an error with a message, not death by SIGPIPE; pipes
// (/dev/stdout, /dev/fd/1, /proc/self/fd/1, >(...)) are outputs like named
// FIFOs. Issue 27, findings 2, 3 and 4: each case below failed before.
// Every run is bounded by `timeout`, so a hang fails the test.

// RUN: rm -rf %t && mkdir -p %t/out
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 10 --k 7 --batch-shape 5 --world-size 3 --seed 47 --out-dir %t
// RUN: shardlin-run %S/Inputs/two-results.mlir --emit-program=%t/two-results.prog
// RUN: shardlin-run %S/Inputs/big-two-results.mlir --emit-program=%t/big-two-results.prog
// RUN: shardlin-run %S/Inputs/col-w3.mlir --emit-program=%t/col-w3.prog

// ---- 2. A failed in-place output: no regular output appears or changes ---

// /dev/full after the per-rank outputs, and before them. The per-rank
// outputs used to be renamed into place before /dev/full was written.
// RUN: not timeout 60 shardlin-run %S/Inputs/two-results.mlir --arg=%t/x.{rank}.npy --arg=%t/w.npy --out=%t/out/y.{rank}.npy --out=/dev/full 2>&1 \
// RUN:   | FileCheck %s --check-prefix=FULL --match-full-lines
// FULL: shardlin-run: error: rank 0: result 1: writing '/dev/full': write failed after 0 of 328 bytes: No space left on device
// RUN: ls -A %t/out | count 0
// RUN: not timeout 60 shardlin-run %S/Inputs/two-results.mlir --arg=%t/x.{rank}.npy --arg=%t/w.npy --out=/dev/full --out=%t/out/y.{rank}.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=FULL0 --match-full-lines
// FULL0: shardlin-run: error: rank 0: result 0: writing '/dev/full': write failed after 0 of 328 bytes: No space left on device
// RUN: ls -A %t/out | count 0

// Outputs of an earlier run stay as they were, byte for byte.
// RUN: shardlin-run %S/Inputs/two-results.mlir --arg=%t/x.{rank}.npy --arg=%t/w.npy --out=%t/out/y.{rank}.npy --out=%t/out/z.{rank}.npy
// RUN: mkdir -p %t/before && cp %t/out/* %t/before/
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 10 --k 7 --batch-shape 5 --world-size 3 --seed 48 --out-dir %t/other
// RUN: not timeout 60 shardlin-exec %t/two-results.prog --arg=%t/other/x.{rank}.npy --arg=%t/other/w.npy --out=%t/out/y.{rank}.npy --out=/dev/full 2>&1 \
// RUN:   | FileCheck %s --check-prefix=FULL-EXEC --match-full-lines
// FULL-EXEC: shardlin-exec: error: rank 0: result 1: writing '/dev/full': write failed after 0 of 328 bytes: No space left on device
// RUN: diff -r %t/before %t/out
// RUN: rm -rf %t/out %t/before && mkdir -p %t/out

// The same under mpirun: every process keeps its outputs back.
// RUN: %if mpi %{ not timeout 120 mpirun --allow-run-as-root --oversubscribe -np 3 shardlin-exec %t/two-results.prog --backend=mpi --arg=%t/x.{rank}.npy --arg=%t/w.npy --out=%t/out/y.{rank}.npy --out=/dev/full 2>&1 | FileCheck %s --check-prefix=FULL-MPI %}
// FULL-MPI: shardlin-exec: error: rank 0: result 1: writing '/dev/full': write failed after 0 of 328 bytes: No space left on device
// RUN: ls -A %t/out | count 0

// A FIFO that nobody reads, as the second output.
// RUN: mkfifo %t/unread.fifo
// RUN: not timeout 60 shardlin-run %S/Inputs/two-results.mlir --arg=%t/x.{rank}.npy --arg=%t/w.npy --out=%t/out/y.{rank}.npy --out=%t/unread.fifo 2>&1 \
// RUN:   | FileCheck %s --check-prefix=UNREAD --match-full-lines
// UNREAD: shardlin-run: error: rank 0: result 1: writing '{{.*}}/unread.fifo': cannot open '{{.*}}/unread.fifo': no process reads this FIFO
// RUN: ls -A %t/out | count 0

// ---- 3. A reader that stops, and signals while an output is blocked ------

// The outputs here are 256 KiB, more than a pipe holds.
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 512 --k 64 --batch-shape 128 --world-size 2 --seed 49 --out-dir %t/big
// RUN: mkfifo %t/big.fifo

// A FIFO whose reader takes 10 bytes and closes it: an error naming EPIPE
// (it was death by SIGPIPE, exit 141, with no message), and no output, in
// either order.
// RUN: not bash -c '(timeout 60 head -c 10 < %t/big.fifo > /dev/null 2>&1 &); timeout 60 shardlin-run %S/Inputs/big-two-results.mlir --timeout=30 --arg=%t/big/x.{rank}.npy --arg=%t/big/w.npy --out=%t/out/y.{rank}.npy --out=%t/big.fifo' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=EPIPE --match-full-lines
// EPIPE: shardlin-run: error: rank 0: result 1: writing '{{.*}}/big.fifo': the reader closed the FIFO after {{[0-9]+}} of 262272 bytes (EPIPE)
// RUN: ls -A %t/out | count 0
// RUN: not bash -c '(timeout 60 head -c 10 < %t/big.fifo > /dev/null 2>&1 &); timeout 60 shardlin-exec %t/big-two-results.prog --timeout=30 --arg=%t/big/x.{rank}.npy --arg=%t/big/w.npy --out=%t/big.fifo --out=%t/out/y.{rank}.npy' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=EPIPE0 --match-full-lines
// EPIPE0: shardlin-exec: error: rank 0: result 0: writing '{{.*}}/big.fifo': the reader closed the FIFO after {{[0-9]+}} of 262272 bytes (EPIPE)
// RUN: ls -A %t/out | count 0

// A FIFO whose reader never takes the data: the write fails when --timeout
// passes, saying how much went, and nothing else appears.
// RUN: not bash -c '(timeout 60 sleep 20 < %t/big.fifo > /dev/null 2>&1 &); timeout 60 shardlin-exec %t/big-two-results.prog --timeout=2 --arg=%t/big/x.{rank}.npy --arg=%t/big/w.npy --out=%t/out/y.{rank}.npy --out=%t/big.fifo' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=STALLED
// STALLED: shardlin-exec: error: rank 0: result 1: writing '{{.*}}/big.fifo': the reader of this FIFO did not take the whole output within 2 s (the timeout): {{[0-9]+}} of 262272 bytes taken
// RUN: ls -A %t/out | count 0

// SIGTERM, SIGINT, SIGHUP or SIGPIPE while rank 0 is blocked on that FIFO
// (the other outputs staged): the temporaries go and no output is renamed
// (the finished outputs used to be in place already). Both tools end by the
// signal (shardlin-run through LLVM's handlers, which re-raise it).
// RUN: bash -c 'for s in TERM INT HUP PIPE; do \
// RUN:   (timeout 60 sleep 30 < %t/big.fifo > /dev/null 2>&1 &); \
// RUN:   %S/Inputs/signal-when-staged.sh $s %t/out shardlin-exec %t/big-two-results.prog --timeout=50 --arg=%t/big/x.{rank}.npy --arg=%t/big/w.npy --out=%t/out/y.{rank}.npy --out=%t/big.fifo; \
// RUN: done' 2>&1 | FileCheck %s --check-prefix=SIGNAL-EXEC --implicit-check-not=npy
// SIGNAL-EXEC: signal TERM
// SIGNAL-EXEC: signal INT
// SIGNAL-EXEC: signal HUP
// SIGNAL-EXEC: signal PIPE
// RUN: bash -c 'for s in TERM INT HUP PIPE; do \
// RUN:   (timeout 60 sleep 30 < %t/big.fifo > /dev/null 2>&1 &); \
// RUN:   %S/Inputs/signal-when-staged.sh $s %t/out shardlin-run %S/Inputs/big-two-results.mlir --timeout=50 --arg=%t/big/x.{rank}.npy --arg=%t/big/w.npy --out=%t/big.fifo --out=%t/out/y.{rank}.npy; \
// RUN: done' 2>&1 | FileCheck %s --check-prefix=SIGNAL-TOOL --implicit-check-not=npy
// SIGNAL-TOOL: signal TERM
// SIGNAL-TOOL: signal INT
// SIGNAL-TOOL: signal HUP
// SIGNAL-TOOL: signal PIPE
// RUN: ls -A %t/out | count 0

// ---- 4. Pipes as outputs ----------------------------------------------------

// Rank 0's result written to a file, to compare the piped ones with.
// RUN: shardlin-run %S/Inputs/col-w3.mlir --arg=%t/x.{rank}.npy --arg=%t/w.npy --out=%t/y0.npy
// Every name a pipe goes by (they used to fail: "cannot create the
// temporary file '/proc/self/fd/pipe:[...].tmp...'").
// RUN: timeout 60 shardlin-run %S/Inputs/col-w3.mlir --arg=%t/x.{rank}.npy --arg=%t/w.npy --out=/dev/stdout | cat > %t/stdout.npy
// RUN: cmp %t/y0.npy %t/stdout.npy
// RUN: timeout 60 shardlin-run %S/Inputs/col-w3.mlir --arg=%t/x.{rank}.npy --arg=%t/w.npy --out=/dev/fd/1 | cat > %t/fd1.npy
// RUN: cmp %t/y0.npy %t/fd1.npy
// RUN: timeout 60 shardlin-exec %t/col-w3.prog --arg=%t/x.{rank}.npy --arg=%t/w.npy --out=/proc/self/fd/1 | cat > %t/proc1.npy
// RUN: cmp %t/y0.npy %t/proc1.npy
// RUN: timeout 60 bash -c 'shardlin-run %S/Inputs/col-w3.mlir --arg=%t/x.{rank}.npy --arg=%t/w.npy --out=>(cat > %t/subst.npy); wait'
// RUN: sleep 1 && cmp %t/y0.npy %t/subst.npy
// A pipe whose reader is gone before the write: an error, not SIGPIPE.
// RUN: timeout 60 bash -c 'shardlin-run %S/Inputs/big-two-results.mlir --arg=%t/big/x.{rank}.npy --arg=%t/big/w.npy --out=/dev/stdout --out=%t/out/y.{rank}.npy 2>%t/closed.err | head -c 1 > /dev/null; echo "exit ${PIPESTATUS[0]}"' \
// RUN:   | FileCheck %s --check-prefix=CLOSED-EXIT
// CLOSED-EXIT: exit 1
// RUN: FileCheck %s --check-prefix=CLOSED < %t/closed.err
// CLOSED: shardlin-run: error: rank 0: result 0: writing '/dev/stdout': {{the reader closed the pipe after [0-9]+ of 262272 bytes \(EPIPE\)|cannot open '/dev/stdout': no process reads this pipe}}
// RUN: ls -A %t/out | count 0
// A regular file that the shell opened for stdout is replaced like any
// file: complete, under its own name.
// RUN: timeout 60 shardlin-run %S/Inputs/col-w3.mlir --arg=%t/x.{rank}.npy --arg=%t/w.npy --out=/dev/stdout > %t/redirected.npy
// RUN: cmp %t/y0.npy %t/redirected.npy
// RUN: ls %t | FileCheck %s --check-prefix=NO-TMP --implicit-check-not=.tmp. --implicit-check-not=.bak.
// NO-TMP: y0.npy
