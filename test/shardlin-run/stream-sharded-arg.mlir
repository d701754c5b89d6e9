// A sharded argument given as a stream (a shell's <(...), a named FIFO) is
// read once, and each rank gets its chunk of it (issue 27.5: on threads each
// rank tried to read its own chunk from the one stream, and rank 1 got
// "file is empty"). On the threads backend the ranks are one process: the
// first rank to ask reads the stream whole, the others take their chunks
// from that copy. Under mpirun each process opens the path itself and reads
// its own stream, so each needs one: a {rank} path of per-rank FIFOs, each
// holding the global tensor (or that rank's chunk).

// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 10 --k 7 --batch-shape 5 --world-size 3 --seed 50 --out-dir %t

// The weight (sharded over 3 ranks) from a process substitution.
// RUN: timeout 60 bash -c 'shardlin-run %S/Inputs/col-w3.mlir --timeout=20 --arg=%t/x.{rank}.npy --arg=<(cat %t/w.npy) --out=%t/y.{rank}.npy'
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t --out '%t/y.{rank}.npy' --world-size 3 | FileCheck %s --check-prefix=OK
// OK: ok: 3 ranks

// From a named FIFO, through shardlin-exec, the writer started after the run.
// RUN: shardlin-run %S/Inputs/col-w3.mlir --emit-program=%t/col.prog
// RUN: mkfifo %t/w.fifo
// RUN: timeout 60 bash -c '(sleep 1; cat %t/w.npy > %t/w.fifo) & shardlin-exec %t/col.prog --timeout=20 --arg=%t/x.{rank}.npy --arg=%t/w.fifo --out=%t/z.{rank}.npy; s=$?; wait; exit $s'
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t --out '%t/z.{rank}.npy' --world-size 3 | FileCheck %s --check-prefix=OK

// A stream that holds the wrong shape is refused as a file would be.
// RUN: not timeout 60 bash -c 'shardlin-run %S/Inputs/col-w3.mlir --timeout=20 --arg=%t/x.{rank}.npy --arg=<(cat %t/x.0.npy) --out=%t/bad.{rank}.npy' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=SHAPE
// SHAPE: error: rank {{[0-2]}}: argument 1 (/dev/fd/{{[0-9]+}}): shape [5, 7] does not match the entry signature's [10, 7] (the global shape of a sharded argument; a path with {rank} may name each rank's chunk instead)

// Under mpirun: one FIFO per process, each fed the global weight.
// RUN: %if mpi %{ mkfifo %t/w.0.fifo %t/w.1.fifo %t/w.2.fifo %}
// RUN: %if mpi %{ timeout 120 bash -c 'for r in 0 1 2; do (cat %t/w.npy > %t/w.$r.fifo &); done; mpirun --allow-run-as-root --oversubscribe -np 3 shardlin-exec %t/col.prog --backend=mpi --timeout=20 --arg=%t/x.{rank}.npy --arg=%t/w.{rank}.fifo --out=%t/m.{rank}.npy' %}
// RUN: %if mpi %{ %python %shardlin_src/testing/tools/npytool.py check --dir %t --out '%t/m.{rank}.npy' --world-size 3 | FileCheck %s --check-prefix=OK %}
