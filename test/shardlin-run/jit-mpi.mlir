// REQUIRES: mpi
// shardlin-run --jit under mpirun (--backend=mpi): every process compiles
// the module and runs its own rank, its collectives on MPI. Every mpirun is
// bounded by `timeout`, so a hang fails the test.

// RUN: rm -rf %t && mkdir -p %t/out

// Row-wise, uneven and permuted, both strategies; the global weight read as
// each rank's chunk.
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 11 --k 19 --batch-shape 5 --world-size 4 --bias --seed 21 --out-dir %t/row
// RUN: timeout 120 mpirun --allow-run-as-root --oversubscribe -np 4 shardlin-run %S/Inputs/row-uneven-bias.mlir --jit --backend=mpi --strategy=activations --arg=%t/row/x.{rank}.npy --arg=%t/row/w.npy --arg=%t/row/b.npy --out=%t/row/act.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/row --out '%t/row/act.{rank}.npy' --world-size 4 | FileCheck %s --check-prefix=OK4
// RUN: timeout 120 mpirun --allow-run-as-root --oversubscribe -np 4 shardlin-run %S/Inputs/row-uneven-bias.mlir --jit --backend=mpi --strategy=gather-weight --arg=%t/row/x.{rank}.npy --arg=%t/row/w.npy --arg=%t/row/b.npy --out=%t/row/gw.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/row --out '%t/row/gw.{rank}.npy' --world-size 4 | FileCheck %s --check-prefix=OK4
// OK4: ok: 4 ranks

// A 3-D input, col-wise; an output without {rank} is written by rank 0.
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 7 --k 8 --batch-shape 2x3 --world-size 4 --bias --seed 22 --out-dir %t/3d
// RUN: timeout 120 mpirun --allow-run-as-root --oversubscribe -np 4 shardlin-run %S/Inputs/col-3d.mlir --jit --backend=mpi --arg=%t/3d/x.{rank}.npy --arg=%t/3d/w.npy --arg=%t/3d/b.npy --out=%t/3d/y.{rank}.npy
// RUN: timeout 120 mpirun --allow-run-as-root --oversubscribe -np 4 shardlin-run %S/Inputs/col-3d.mlir --jit --backend=mpi --arg=%t/3d/x.{rank}.npy --arg=%t/3d/w.npy --arg=%t/3d/b.npy --out=%t/3d/y0.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/3d --out '%t/3d/y.{rank}.npy' --world-size 4 | FileCheck %s --check-prefix=OK4
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/3d --out %t/3d/y0.npy --world-size 1 | FileCheck %s --check-prefix=OK1
// OK1: ok: 1 ranks

// A 1-D input with an empty chunk, f16 col-wise, f64 row-wise over 3.
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 6 --k 9 --batch-shape '' --world-size 4 --bias --seed 23 --out-dir %t/vec
// RUN: timeout 120 mpirun --allow-run-as-root --oversubscribe -np 4 shardlin-run %S/Inputs/row-1d.mlir --jit --backend=mpi --arg=%t/vec/x.{rank}.npy --arg=%t/vec/w.npy --arg=%t/vec/b.npy --out=%t/vec/y.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/vec --out '%t/vec/y.{rank}.npy' --world-size 4 | FileCheck %s --check-prefix=OK4
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 9 --k 6 --batch-shape 3 --world-size 4 --bias --dtype f16 --seed 24 --out-dir %t/f16
// RUN: timeout 120 mpirun --allow-run-as-root --oversubscribe -np 4 shardlin-run %S/Inputs/f16-col.mlir --jit --backend=mpi --arg=%t/f16/x.{rank}.npy --arg=%t/f16/w.npy --arg=%t/f16/b.npy --out=%t/f16/y.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/f16 --out '%t/f16/y.{rank}.npy' --world-size 4 --dtype f16 | FileCheck %s --check-prefix=OK4
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 5 --k 8 --batch-shape 4 --world-size 3 --bias --dtype f64 --seed 25 --out-dir %t/f64
// RUN: timeout 120 mpirun --allow-run-as-root --oversubscribe -np 3 shardlin-run %S/Inputs/f64-row.mlir --jit --backend=mpi --arg=%t/f64/x.{rank}.npy --arg=%t/f64/w.npy --arg=%t/f64/b.npy --out=%t/f64/y.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/f64 --out '%t/f64/y.{rank}.npy' --world-size 3 --dtype f64 | FileCheck %s --check-prefix=OK3
// OK3: ok: 3 ranks

// bf16 partial sums of a K split, in f32 through the reduce_scatter.
// RUN: %python %S/Inputs/partial_sums.py gen --dtype bf16 --out-dir %t/psb16
// RUN: timeout 120 mpirun --allow-run-as-root --oversubscribe -np 2 shardlin-run %S/Inputs/partial-sums-bf16.mlir --jit --backend=mpi --strategy=activations --arg=%t/psb16/x.{rank}.npy --arg=%t/psb16/w.npy --arg=%t/psb16/b.npy --out=%t/psb16/y.{rank}.npy
// RUN: %python %S/Inputs/partial_sums.py check --dtype bf16 --dir %t/psb16 --out '%t/psb16/y.{rank}.npy' | FileCheck %s --check-prefix=PS
// PS: ok: 2 ranks

// Batch sizes known only at run time, one per rank: gathering the weight,
// and moving activations (the compiled code exchanges the row counts over
// MPI first).
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 11 --k 19 --batch-shape 2x3,0x3,5x3,1x3 --world-size 4 --bias --seed 26 --out-dir %t/dyn
// RUN: timeout 120 mpirun --allow-run-as-root --oversubscribe -np 4 shardlin-run %S/Inputs/row-dynamic.mlir --jit --backend=mpi --strategy=gather-weight --arg=%t/dyn/x.{rank}.npy --arg=%t/dyn/w.npy --arg=%t/dyn/b.npy --out=%t/dyn/y.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/dyn --out '%t/dyn/y.{rank}.npy' --world-size 4 | FileCheck %s --check-prefix=OK4
// RUN: timeout 120 mpirun --allow-run-as-root --oversubscribe -np 4 shardlin-run %S/Inputs/row-dynamic.mlir --jit --backend=mpi --strategy=activations --arg=%t/dyn/x.{rank}.npy --arg=%t/dyn/w.npy --arg=%t/dyn/b.npy --out=%t/dyn/act.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/dyn --out '%t/dyn/act.{rank}.npy' --world-size 4 | FileCheck %s --check-prefix=OK4

// A failure inside the compiled code's collective fails its rank with the
// runtime's message, every process exits non-zero, and nothing is written.
// RUN: %python -c "import sys; sys.path.insert(0, '%shardlin_src/testing/tools'); import npytool; npytool.write_npy('%t/x44.npy', '<f4', (4, 4), [0.5 + i for i in range(16)])"
// RUN: sh -c 'timeout 120 mpirun --allow-run-as-root --oversubscribe -np 2 shardlin-run %S/Inputs/jit-rank-mismatch.mlir --jit --backend=mpi --timeout=5 --arg=%t/x44.npy --out=%t/out/g.{rank}.npy 2>&1; echo "exit $?"' \
// RUN:   | FileCheck %s --check-prefix=RANK-FAIL
// RANK-FAIL-DAG: shardlin-run: error: rank 0: shardlin_all_gather (rank 0 of 2): in [1, 4] has 1 along dim 0 but rank 0's chunk of 3 (chunk 0 of 2, split 2) has 2 (out is [3, 4])
// RANK-FAIL-DAG: shardlin-run: error: rank 1: shardlin_all_gather (rank 1 of 2): in [2, 4] has 2 along dim 0 but rank 1's chunk of 3 (chunk 1 of 2, split 2) has 1 (out is [3, 4])
// RANK-FAIL: {{^}}exit 1{{$}}
// RUN: ls -A %t/out | count 0
