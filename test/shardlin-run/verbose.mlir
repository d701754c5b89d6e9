// --verbose prints, per linear, the chosen strategy with every strategy's
// bytes and estimate, and per rank the phases and the traffic; the cost
// model's options change the choice. shardlin-exec prints the strategy the
// program records and the same rank lines.

// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 10 --k 7 --batch-shape 5 --world-size 3 --seed 43 --out-dir %t
// RUN: shardlin-run %S/Inputs/col-w3.mlir --verbose --arg=%t/x.{rank}.npy --arg=%t/w.npy --out=%t/y.{rank}.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=VERBOSE
// VERBOSE-DAG: {{.*}}col-w3.mlir:5:8: remark: lowered col-wise with gather-weight (cheapest estimate); activations: est. {{[0-9.]+}} us, max 440 bytes sent, max 860 extra bytes per rank; gather-weight: est. {{[0-9.]+}} us, max 224 bytes sent, max 280 extra bytes per rank
// VERBOSE-DAG: shardlin-run: compiled in {{[0-9.]+}} ms
// VERBOSE-DAG: shardlin-run: rank 0: plan {{[0-9.]+}} ms, load {{[0-9.]+}} ms, agree {{[0-9.]+}} ms, run {{[0-9.]+}} ms, write {{[0-9.]+}} ms; sent 112 bytes in 1 collectives
// VERBOSE-DAG: shardlin-run: rank 1: {{.*}}; sent 224 bytes in 1 collectives
// VERBOSE-DAG: shardlin-run: rank 2: {{.*}}; sent 224 bytes in 1 collectives
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t --out '%t/y.{rank}.npy' --world-size 3 | FileCheck %s --check-prefix=OK
// OK: ok: 3 ranks

// Without --verbose, nothing is printed.
// RUN: shardlin-run %S/Inputs/col-w3.mlir --arg=%t/x.{rank}.npy --arg=%t/w.npy --out=%t/y.{rank}.npy 2>&1 | count 0

// row-1d.mlir gathers the weight on the default machine; on one with a
// slow network and no latency, moving the (fewer) activation bytes wins.
// RUN: shardlin-run %S/Inputs/row-1d.mlir --verbose --emit-program=%t/row.prog 2>&1 \
// RUN:   | FileCheck %s --check-prefix=DEFAULT-MODEL
// DEFAULT-MODEL: remark: lowered row-wise with gather-weight (cheapest estimate)
// RUN: shardlin-run %S/Inputs/row-1d.mlir --verbose --latency-us=0 --bandwidth-gbps=0.000001 --emit-program=%t/row.prog 2>&1 \
// RUN:   | FileCheck %s --check-prefix=MODEL
// MODEL: remark: lowered row-wise with activations (cheapest estimate)
// RUN: FileCheck %s --check-prefix=PROG --input-file=%t/row.prog
// PROG: instr gemm {{.*}} strategy activations loc

// The options' values are checked, naming the option.
// RUN: not shardlin-run %S/Inputs/col-w3.mlir --bandwidth-gbps=0 --arg=%t/x.{rank}.npy --arg=%t/w.npy --out=%t/y.{rank}.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BAD --match-full-lines
// BAD: shardlin-run: error: lower-sharded-linear: bandwidth-gbps must be > 0, got 0
// RUN: not shardlin-run %S/Inputs/col-w3.mlir --latency-us=-2.5 --arg=%t/x.{rank}.npy --arg=%t/w.npy --out=%t/y.{rank}.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BAD-LATENCY --match-full-lines
// BAD-LATENCY: shardlin-run: error: lower-sharded-linear: latency-us must be >= 0, got -2.5

// shardlin-exec.
// RUN: shardlin-run %S/Inputs/col-w3.mlir --emit-program=%t/gather.prog
// RUN: shardlin-exec %t/gather.prog --verbose --world-size=3 --arg=%t/x.{rank}.npy --arg=%t/w.npy --out=%t/e.{rank}.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=EXEC
// EXEC-DAG: shardlin-exec: {{.*}}col-w3.mlir:5:8: gemm lowered with gather-weight
// EXEC-DAG: shardlin-exec: rank 0: plan {{[0-9.]+}} ms, load {{[0-9.]+}} ms, agree {{[0-9.]+}} ms, run {{[0-9.]+}} ms, write {{[0-9.]+}} ms; sent 112 bytes in 1 collectives
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t --out '%t/e.{rank}.npy' --world-size 3 | FileCheck %s --check-prefix=OK
