// REQUIRES: mpi
// f16 and bf16 partial sums of a K split (issue 12, finding 2): each rank's
// partial product is kept in f32 through the reduce_scatter and rounded once,
// after the bias, to the result's dtype. Inputs/partial_sums.py makes
// inputs whose partial products overflow f16 (+65536 and -65567.96875; the
// result is -31.46875) or lose the answer in bf16 (289 and -288; the result
// is 1.25), and checks every rank's output against the float64 reference with the
// bound of one rounding (it printed NaN and 0.25 with the partial products
// stored in the result's dtype). Under mpirun here (--backend=mpi, one
// process per rank); threads in partial-sums.mlir.

// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/partial_sums.py gen --dtype f16 --out-dir %t/f16
// RUN: %python %S/Inputs/partial_sums.py gen --dtype bf16 --out-dir %t/bf16

// RUN: timeout 120 mpirun --allow-run-as-root --oversubscribe -np 2 shardlin-run --backend=mpi %S/Inputs/partial-sums-f16.mlir --strategy=activations --arg=%t/f16/x.{rank}.npy --arg=%t/f16/w.npy --arg=%t/f16/b.npy --out=%t/f16/act.{rank}.npy
// RUN: %python %S/Inputs/partial_sums.py check --dtype f16 --dir %t/f16 --out '%t/f16/act.{rank}.npy' | FileCheck %s --check-prefix=F16
// RUN: timeout 120 mpirun --allow-run-as-root --oversubscribe -np 2 shardlin-run --backend=mpi %S/Inputs/partial-sums-f16.mlir --arg=%t/f16/x.{rank}.npy --arg=%t/f16/w.npy --arg=%t/f16/b.npy --out=%t/f16/auto.{rank}.npy
// RUN: %python %S/Inputs/partial_sums.py check --dtype f16 --dir %t/f16 --out '%t/f16/auto.{rank}.npy' | FileCheck %s --check-prefix=F16
// RUN: timeout 120 mpirun --allow-run-as-root --oversubscribe -np 2 shardlin-run --backend=mpi %S/Inputs/partial-sums-f16.mlir --strategy=gather-weight --arg=%t/f16/x.{rank}.npy --arg=%t/f16/w.npy --arg=%t/f16/b.npy --out=%t/f16/gw.{rank}.npy
// RUN: %python %S/Inputs/partial_sums.py check --dtype f16 --dir %t/f16 --out '%t/f16/gw.{rank}.npy' | FileCheck %s --check-prefix=F16
// F16: rank 0: crafted element -31.46875
// F16: rank 1: crafted element -31.46875
// F16: ok: 2 ranks

// RUN: timeout 120 mpirun --allow-run-as-root --oversubscribe -np 2 shardlin-run --backend=mpi %S/Inputs/partial-sums-bf16.mlir --strategy=activations --arg=%t/bf16/x.{rank}.npy --arg=%t/bf16/w.npy --arg=%t/bf16/b.npy --out=%t/bf16/act.{rank}.npy
// RUN: %python %S/Inputs/partial_sums.py check --dtype bf16 --dir %t/bf16 --out '%t/bf16/act.{rank}.npy' | FileCheck %s --check-prefix=BF16
// RUN: timeout 120 mpirun --allow-run-as-root --oversubscribe -np 2 shardlin-run --backend=mpi %S/Inputs/partial-sums-bf16.mlir --arg=%t/bf16/x.{rank}.npy --arg=%t/bf16/w.npy --arg=%t/bf16/b.npy --out=%t/bf16/auto.{rank}.npy
// RUN: %python %S/Inputs/partial_sums.py check --dtype bf16 --dir %t/bf16 --out '%t/bf16/auto.{rank}.npy' | FileCheck %s --check-prefix=BF16
// RUN: timeout 120 mpirun --allow-run-as-root --oversubscribe -np 2 shardlin-run --backend=mpi %S/Inputs/partial-sums-bf16.mlir --strategy=gather-weight --arg=%t/bf16/x.{rank}.npy --arg=%t/bf16/w.npy --arg=%t/bf16/b.npy --out=%t/bf16/gw.{rank}.npy
// RUN: %python %S/Inputs/partial_sums.py check --dtype bf16 --dir %t/bf16 --out '%t/bf16/gw.{rank}.npy' | FileCheck %s --check-prefix=BF16
// BF16: rank 0: crafted element 1.25
// BF16: rank 1: crafted element 1.25
// BF16: ok: 2 ranks
