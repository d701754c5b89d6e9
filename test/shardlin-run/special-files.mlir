// Inputs and outputs that are not plain files. An input FIFO (or a shell's
// <(...) pipe) is read whole, and must deliver a complete .npy within
// --timeout: one that nobody writes fails its rank when the timeout passes
// (it used to block its rank forever, past --timeout), and the run ends
// with that rank's own error, not the other ranks' timeouts waiting for it
// (issue 12.3); an output symlink is written through (the link stays a
// link, its target gets the result); an output FIFO is written in place,
// and one that nobody reads fails instead of blocking. Character devices
// are in special-devices.mlir.

// RUN: rm -rf %t && mkdir -p %t/out
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 10 --k 7 --batch-shape 5 --world-size 3 --seed 44 --out-dir %t
// RUN: cp %t/x.0.npy %t/in.0.npy && cp %t/x.2.npy %t/in.2.npy && mkfifo %t/in.1.npy

// `timeout 20` turns a hang into a failure of this test (the timeout is 2).
// RUN: not timeout 20 shardlin-run %S/Inputs/col-w3.mlir --timeout=2 --arg=%t/in.{rank}.npy --arg=%t/w.npy --out=%t/out/y.{rank}.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=FIFO-IN --match-full-lines
// FIFO-IN: shardlin-run: error: rank 1: argument 0: '{{.*}}/in.1.npy': no complete .npy arrived on this FIFO within 2 s (the timeout): 0 bytes came, no writer opened it
// RUN: ls -A %t/out | count 0

// The same FIFO with a writer, started before or after the run opens it:
// the run reads it and is right.
// RUN: bash -c 'cat %t/x.1.npy > %t/in.1.npy & shardlin-run %S/Inputs/col-w3.mlir --timeout=20 --arg=%t/in.{rank}.npy --arg=%t/w.npy --out=%t/out/y.{rank}.npy; s=$?; wait; exit $s'
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t --out '%t/out/y.{rank}.npy' --world-size 3 | FileCheck %s --check-prefix=OK
// RUN: bash -c '(sleep 1; cat %t/x.1.npy > %t/in.1.npy) & shardlin-run %S/Inputs/col-w3.mlir --timeout=20 --arg=%t/in.{rank}.npy --arg=%t/w.npy --out=%t/out/z.{rank}.npy; s=$?; wait; exit $s'
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t --out '%t/out/z.{rank}.npy' --world-size 3 | FileCheck %s --check-prefix=OK
// A writer that sends a truncated array and closes: refused, naming it.
// RUN: head -c 100 %t/x.1.npy > %t/short.npy
// RUN: not bash -c 'cat %t/short.npy > %t/in.1.npy & shardlin-run %S/Inputs/col-w3.mlir --timeout=20 --arg=%t/in.{rank}.npy --arg=%t/w.npy --out=%t/out/t.{rank}.npy; s=$?; wait; exit $s' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=FIFO-SHORT
// FIFO-SHORT: error: rank 1: argument 0: '{{.*}}/in.1.npy': the stream ended inside the header (100 of 128 bytes)
// RUN: rm -f %t/out/y.* %t/out/z.*
// RUN: ls -A %t/out | count 0

// An output through a symlink: the link stays, the target holds the result.
// Absolute and relative links, one to an existing file, the others dangling.
// RUN: ln -s %t/out/real.0.npy %t/out/link.0.npy
// RUN: ln -s real.1.npy %t/out/link.1.npy
// RUN: cp %t/w.npy %t/out/real.2.npy && ln -s real.2.npy %t/out/link.2.npy
// RUN: shardlin-run %S/Inputs/col-w3.mlir --arg=%t/x.{rank}.npy --arg=%t/w.npy --out=%t/out/link.{rank}.npy
// RUN: test -L %t/out/link.0.npy && test -L %t/out/link.1.npy && test -L %t/out/link.2.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t --out '%t/out/real.{rank}.npy' --world-size 3 | FileCheck %s --check-prefix=OK
// OK: ok: 3 ranks

// An output FIFO that nobody reads.
// RUN: mkfifo %t/out/fifo.npy
// RUN: not timeout 60 shardlin-run %S/Inputs/col-w3.mlir --arg=%t/x.{rank}.npy --arg=%t/w.npy --out=%t/out/fifo.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=FIFO-OUT --match-full-lines
// FIFO-OUT: shardlin-run: error: rank 0: result 0: writing '{{.*}}/out/fifo.npy': cannot open '{{.*}}/out/fifo.npy': no process reads this FIFO
// RUN: test -p %t/out/fifo.npy
