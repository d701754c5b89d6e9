// The GPU backends' contract at the command line, on any machine with a
// CUDA build: the version lines, option errors, and on a machine without a
// usable GPU one clear line ("no usable CUDA device: <why>") and exit 1,
// never a crash or a hang, and no output written. With a GPU (feature
// "gpu") the device-selection errors are checked instead; the runs
// themselves are in gpu-run.mlir.
//
// REQUIRES: cuda

// RUN: rm -rf %t && mkdir -p %t/out
// RUN: shardlin-run %S/Inputs/row-uneven-bias.mlir --emit-program=%t/row.prog
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 11 --k 19 --batch-shape 5 --world-size 4 --bias --seed 41 --out-dir %t/d

// ---- --version names the GPU backends, cuBLAS and the devices -----------------

// RUN: shardlin-exec --version | FileCheck %s --check-prefix=VERSION -DTOOL=exec
// RUN: shardlin-run --version | FileCheck %s --check-prefix=VERSION -DTOOL=run
// VERSION: shardlin-[[TOOL]] {{[0-9]+\.[0-9]+\.[0-9]+}}
// VERSION-NEXT: backends: threads{{(, mpi)?}}, cuda-local{{(, nccl)?}}
// VERSION-NEXT: gemm: openblas, cublas
// VERSION-NEXT: gpu: module {{.+}}libshardlin-runtime-cuda.so (not loaded; shardlin-exec --gpus lists the devices)
// RUN: shardlin-exec --gpus | FileCheck %s --check-prefix=GPUS
// GPUS: gpu: {{none \(.+\)|[1-9][0-9]* devices?: cuda:0 .+}}
// RUN: %if nccl %{ shardlin-exec --version | FileCheck %s --check-prefix=NCCL-VERSION %}
// NCCL-VERSION: backends: threads{{(, mpi)?}}, cuda-local, nccl

// ---- Option errors (any machine) ----------------------------------------------

// RUN: not shardlin-exec %t/row.prog --world-size=4 --backend=nccl --device=-3 --arg=%t/d/x.{rank}.npy --arg=%t/d/w.npy --arg=%t/d/b.npy --out=%t/out/y.{rank}.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=EXEC-DEVICE-BAD --match-full-lines --implicit-check-not='{{.}}'
// EXEC-DEVICE-BAD: shardlin-exec: error: --device=-3: the device must be a device number (>= 0) or -1 (any), got -3
// RUN: not shardlin-exec %t/row.prog --world-size=4 --backend=cuda-local --device=one --arg=%t/d/x.{rank}.npy --arg=%t/d/w.npy --arg=%t/d/b.npy --out=%t/out/y.{rank}.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=EXEC-DEVICE-WORD --match-full-lines --implicit-check-not='{{.}}'
// EXEC-DEVICE-WORD: shardlin-exec: error: --device must be a device number (>= 0), got 'one'
// RUN: not shardlin-run %S/Inputs/row-uneven-bias.mlir --backend=cuda-local --device=-3 --arg=%t/d/x.{rank}.npy --arg=%t/d/w.npy --arg=%t/d/b.npy --out=%t/out/y.{rank}.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=RUN-DEVICE-BAD --match-full-lines --implicit-check-not='{{.}}'
// RUN-DEVICE-BAD: shardlin-run: error: --device=-3: the device must be a device number (>= 0) or -1 (any), got -3

// --device with a CPU backend is a mistake, not ignored.
// RUN: not shardlin-exec %t/row.prog --world-size=4 --backend=threads --device=0 --arg=%t/d/x.{rank}.npy --arg=%t/d/w.npy --arg=%t/d/b.npy --out=%t/out/y.{rank}.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=DEVICE-CPU -DTOOL=exec --match-full-lines --implicit-check-not='{{.}}'
// RUN: not shardlin-run %S/Inputs/row-uneven-bias.mlir --device=1 --arg=%t/d/x.{rank}.npy --arg=%t/d/w.npy --arg=%t/d/b.npy --out=%t/out/y.{rank}.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=DEVICE-CPU -DTOOL=run --match-full-lines --implicit-check-not='{{.}}'
// DEVICE-CPU: shardlin-[[TOOL]]: error: --device={{[01]}}: a device number applies to the GPU backends (cuda-local, nccl), not to 'threads'

// Compiling for a GPU backend needs no GPU: --emit-program runs nothing.
// RUN: shardlin-run %S/Inputs/row-uneven-bias.mlir --backend=nccl --emit-program=%t/row-nccl.prog
// RUN: cmp %t/row.prog %t/row-nccl.prog

// ---- No usable GPU: one line, exit 1, nothing written ---------------------------

// RUN: %if !gpu %{ not shardlin-exec %t/row.prog --world-size=4 --backend=nccl --arg=%t/d/x.{rank}.npy --arg=%t/d/w.npy --arg=%t/d/b.npy --out=%t/out/y.{rank}.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NO-GPU -DTOOL=exec --match-full-lines --implicit-check-not='{{.}}' %}
// RUN: %if !gpu %{ not shardlin-exec %t/row.prog --world-size=4 --backend=cuda-local --device=0 --arg=%t/d/x.{rank}.npy --arg=%t/d/w.npy --arg=%t/d/b.npy --out=%t/out/y.{rank}.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NO-GPU -DTOOL=exec --match-full-lines --implicit-check-not='{{.}}' %}
// RUN: %if !gpu %{ not shardlin-run %S/Inputs/row-uneven-bias.mlir --backend=nccl --arg=%t/d/x.{rank}.npy --arg=%t/d/w.npy --arg=%t/d/b.npy --out=%t/out/y.{rank}.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NO-GPU -DTOOL=run --match-full-lines --implicit-check-not='{{.}}' %}
// RUN: %if !gpu %{ not shardlin-run %S/Inputs/row-uneven-bias.mlir --backend=cuda-local --arg=%t/d/x.{rank}.npy --arg=%t/d/w.npy --arg=%t/d/b.npy --out=%t/out/y.{rank}.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NO-GPU -DTOOL=run --match-full-lines --implicit-check-not='{{.}}' %}
// NO-GPU: shardlin-[[TOOL]]: error: no usable CUDA device: {{.+}}

// The exit status is exactly 1 (a crash would be 128 + the signal).
// RUN: %if !gpu %{ sh -c 'shardlin-exec %t/row.prog --world-size=4 --backend=nccl --arg=%t/d/x.{rank}.npy --arg=%t/d/w.npy --arg=%t/d/b.npy --out=%t/out/y.{rank}.npy 2>/dev/null; echo "exit $?"' | FileCheck %s --check-prefix=EXIT1 %}
// EXIT1: exit 1

// Under mpirun, nccl runs one process per rank and bootstraps through MPI:
// without a GPU every process says so (and they agree before NCCL's
// initialization, so none waits for the others). cuda-local is refused
// there: every process would run all ranks.
// RUN: %if mpi && !gpu %{ not timeout 120 mpirun --allow-run-as-root --oversubscribe -np 4 shardlin-exec %t/row.prog --backend=nccl --arg=%t/d/x.{rank}.npy --arg=%t/d/w.npy --arg=%t/d/b.npy --out=%t/out/y.{rank}.npy > %t/mpi-nccl.txt 2>&1 %}
// RUN: %if mpi && !gpu %{ FileCheck %s --check-prefix=MPI-NO-GPU --input-file=%t/mpi-nccl.txt %}
// MPI-NO-GPU-DAG: shardlin-exec: error: rank 0: no usable CUDA device: {{.+}}
// MPI-NO-GPU-DAG: shardlin-exec: error: rank 1: no usable CUDA device: {{.+}}
// MPI-NO-GPU-DAG: shardlin-exec: error: rank 2: no usable CUDA device: {{.+}}
// MPI-NO-GPU-DAG: shardlin-exec: error: rank 3: no usable CUDA device: {{.+}}
// RUN: %if mpi %{ not timeout 120 mpirun --allow-run-as-root --oversubscribe -np 2 shardlin-exec %t/row.prog --backend=cuda-local --arg=%t/d/x.{rank}.npy --arg=%t/d/w.npy --arg=%t/d/b.npy --out=%t/out/y.{rank}.npy > %t/mpi-local.txt 2>&1 %}
// RUN: %if mpi %{ FileCheck %s --check-prefix=MPI-LOCAL --input-file=%t/mpi-local.txt %}
// MPI-LOCAL: shardlin-exec: error: the cuda-local backend runs all ranks as threads of one process, but the launcher started 2 processes; under mpirun use a backend with one process per rank (mpi, or nccl for GPUs)

// ---- With a GPU: devices that do not exist -------------------------------------

// RUN: %if gpu %{ not shardlin-exec %t/row.prog --world-size=4 --backend=cuda-local --device=99 --arg=%t/d/x.{rank}.npy --arg=%t/d/w.npy --arg=%t/d/b.npy --out=%t/out/y.{rank}.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NO-DEVICE --match-full-lines --implicit-check-not='{{.}}' %}
// NO-DEVICE: shardlin-exec: error: --device=99: there is no cuda:99 ({{[0-9]+}} usable CUDA device{{s?}})
// RUN: %if gpu && nccl %{ not shardlin-exec %t/row.prog --world-size=4 --backend=nccl --device=99 --arg=%t/d/x.{rank}.npy --arg=%t/d/w.npy --arg=%t/d/b.npy --out=%t/out/y.{rank}.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NCCL-NO-DEVICE --match-full-lines --implicit-check-not='{{.}}' %}
// NCCL-NO-DEVICE: shardlin-exec: error: the nccl backend runs one rank per GPU: 4 ranks need cuda:99..cuda:102, but this machine has {{[0-9]+}} usable CUDA device{{s?}} (--backend=cuda-local runs several ranks on one GPU; under mpirun, nccl runs one process per GPU)
// Fewer GPUs than ranks (W = 4): the error suggests cuda-local.
// RUN: %if gpu && nccl && !gpus-4 %{ not shardlin-exec %t/row.prog --world-size=4 --backend=nccl --arg=%t/d/x.{rank}.npy --arg=%t/d/w.npy --arg=%t/d/b.npy --out=%t/out/y.{rank}.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NCCL-FEW --match-full-lines --implicit-check-not='{{.}}' %}
// NCCL-FEW: shardlin-exec: error: the nccl backend runs one rank per GPU: 4 ranks need 4 GPUs, but this machine has {{[0-9]}} usable CUDA device{{s?}} (--backend=cuda-local runs several ranks on one GPU; under mpirun, nccl runs one process per GPU)

// None of the failed runs wrote an output.
// RUN: ls -A %t/out | count 0
