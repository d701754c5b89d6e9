// Inputs and outputs that are not plain files. An input FIFO that nobody
// writes is refused at once (it used to block its rank forever, past
// --timeout); an output symlink is written through (the link stays a link,
// its target gets the result); an output FIFO is written in place, and one
// that nobody reads fails instead of blocking. Character devices are in
// special-devices.mlir.

// RUN: rm -rf %t && mkdir -p %t/out
// RUN: %python %shardlin_src/scripts/npytool.py gen-linear --n 10 --k 7 --batch-shape 5 --world-size 3 --seed 44 --out-dir %t
// RUN: cp %t/x.0.npy %t/in.0.npy && cp %t/x.2.npy %t/in.2.npy && mkfifo %t/in.1.npy

// RUN: not timeout 60 shardlin-run %S/Inputs/col-w3.mlir --timeout=30 --arg=%t/in.{rank}.npy --arg=%t/w.npy --out=%t/out/y.{rank}.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=FIFO-IN --match-full-lines
// FIFO-IN: shardlin-run: error: rank 1: argument 0: '{{.*}}/in.1.npy': not a regular file
// RUN: ls -A %t/out | count 0

// An output through a symlink: the link stays, the target holds the result.
// Absolute and relative links, one to an existing file, the others dangling.
// RUN: ln -s %t/out/real.0.npy %t/out/link.0.npy
// RUN: ln -s real.1.npy %t/out/link.1.npy
// RUN: cp %t/w.npy %t/out/real.2.npy && ln -s real.2.npy %t/out/link.2.npy
// RUN: shardlin-run %S/Inputs/col-w3.mlir --arg=%t/x.{rank}.npy --arg=%t/w.npy --out=%t/out/link.{rank}.npy
// RUN: test -L %t/out/link.0.npy && test -L %t/out/link.1.npy && test -L %t/out/link.2.npy
// RUN: %python %shardlin_src/scripts/npytool.py check --dir %t --out '%t/out/real.{rank}.npy' --world-size 3 | FileCheck %s --check-prefix=OK
// OK: ok: 3 ranks

// An output FIFO that nobody reads.
// RUN: mkfifo %t/out/fifo.npy
// RUN: not timeout 60 shardlin-run %S/Inputs/col-w3.mlir --arg=%t/x.{rank}.npy --arg=%t/w.npy --out=%t/out/fifo.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=FIFO-OUT --match-full-lines
// FIFO-OUT: shardlin-run: error: rank 0: writing '{{.*}}/out/fifo.npy': cannot open '{{.*}}/out/fifo.npy': no process reads this FIFO
// RUN: test -p %t/out/fifo.npy
