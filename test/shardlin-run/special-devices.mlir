// An output that is a character device is written in place: the device
// node stays a device (it used to be replaced by a regular file, which as
// root turned the system's null device into a file). The device here is a
// copy of the null device made in the test's own directory, never the
// system's.
// REQUIRES: mknod

// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 10 --k 7 --batch-shape 5 --world-size 3 --seed 45 --out-dir %t
// RUN: %python -c "import os, stat, sys; os.mknod(sys.argv[1], 0o666 | stat.S_IFCHR, os.makedev(1, 3))" %t/fakenull
// RUN: shardlin-run %S/Inputs/col-w3.mlir --arg=%t/x.{rank}.npy --arg=%t/w.npy --out=%t/fakenull
// RUN: test -c %t/fakenull
// A symlink to it, too.
// RUN: ln -s fakenull %t/null-link
// RUN: shardlin-run %S/Inputs/col-w3.mlir --arg=%t/x.{rank}.npy --arg=%t/w.npy --out=%t/null-link
// RUN: test -c %t/fakenull && test -L %t/null-link
// RUN: ls -A %t | FileCheck %s --implicit-check-not=tmp
// CHECK: fakenull
