// Started by an MPI launcher without --backend=mpi, the threads backend
// would run all W ranks in each of the launched processes: it refuses,
// naming the backend to use, and writes nothing. One process (W = 1
// launched) is no conflict. The launch is simulated through the variables
// Open MPI (OMPI_COMM_WORLD_SIZE) and MPICH/Hydra (PMI_SIZE) set.

// RUN: rm -rf %t && mkdir -p %t/out
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 10 --k 7 --batch-shape 5 --world-size 3 --seed 42 --out-dir %t
// RUN: env OMPI_COMM_WORLD_SIZE=2 not shardlin-run %S/Inputs/col-w3.mlir --arg=%t/x.{rank}.npy --arg=%t/w.npy --out=%t/out/y.{rank}.npy 2>&1 \
// RUN:   | FileCheck %s --match-full-lines --implicit-check-not='{{.}}'
// RUN: env PMI_SIZE=4 not shardlin-run %S/Inputs/col-w3.mlir --backend=threads --arg=%t/x.{rank}.npy --arg=%t/w.npy --out=%t/out/y.{rank}.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=PMI --match-full-lines
// CHECK: shardlin-run: error: the threads backend runs all ranks as threads of one process, but the launcher started 2 processes; under mpirun use a backend with one process per rank (mpi, or nccl for GPUs)
// PMI: shardlin-run: error: the threads backend runs all ranks as threads of one process, but the launcher started 4 processes; under mpirun use a backend with one process per rank (mpi, or nccl for GPUs)
// RUN: shardlin-run %S/Inputs/col-w3.mlir --emit-program=%t/col.prog
// RUN: env OMPI_COMM_WORLD_SIZE=2 not shardlin-exec %t/col.prog --arg=%t/x.{rank}.npy --arg=%t/w.npy --out=%t/out/y.{rank}.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=EXEC --match-full-lines
// EXEC: shardlin-exec: error: the threads backend runs all ranks as threads of one process, but the launcher started 2 processes; under mpirun use a backend with one process per rank (mpi, or nccl for GPUs)
// RUN: ls -A %t/out | count 0

// RUN: env OMPI_COMM_WORLD_SIZE=1 shardlin-run %S/Inputs/col-w3.mlir --arg=%t/x.{rank}.npy --arg=%t/w.npy --out=%t/out/y.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t --out '%t/out/y.{rank}.npy' --world-size 3 | FileCheck %s --check-prefix=OK
// OK: ok: 3 ranks
