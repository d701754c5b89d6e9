// REQUIRES: mpi
// Under mpirun, a rank stalled on an input FIFO that nobody writes is named
// by every rank, as on threads (issue 27, finding 10): its read fails when
// --timeout passes, and the others, whose agreement waits a grace longer,
// see it fail instead of all timing out in the same collective ("a rank
// did not join this collective") and ending the job with MPI_Abort.

// RUN: rm -rf %t && mkdir -p %t/out
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 10 --k 7 --batch-shape 5 --world-size 3 --seed 46 --out-dir %t
// RUN: cp %t/x.0.npy %t/in.0.npy && cp %t/x.2.npy %t/in.2.npy && mkfifo %t/in.1.npy
// RUN: not timeout 120 mpirun --allow-run-as-root --oversubscribe -np 3 shardlin-run %S/Inputs/col-w3.mlir --backend=mpi --timeout=2 --arg=%t/in.{rank}.npy --arg=%t/w.npy --out=%t/out/y.{rank}.npy > %t/log 2>&1
// RUN: FileCheck %s --input-file=%t/log
// RUN: FileCheck %s --input-file=%t/log --check-prefix=RANK0
// RUN: FileCheck %s --input-file=%t/log --check-prefix=RANK2
// CHECK-NOT: MPI_Abort
// CHECK-NOT: timed out
// CHECK: shardlin-run: error: rank 1: argument 0: '{{.*}}/in.1.npy': no complete .npy arrived on this FIFO within 2 s (the timeout): 0 bytes came, no writer opened it
// CHECK-NOT: MPI_Abort
// CHECK-NOT: timed out
// RANK0: shardlin-run: error: rank 0: stopped because another rank failed to prepare its inputs (rank 1; its own error says why)
// RANK2: shardlin-run: error: rank 2: stopped because another rank failed to prepare its inputs (rank 1; its own error says why)
// No output was written.
// RUN: ls %t/out | count 0
