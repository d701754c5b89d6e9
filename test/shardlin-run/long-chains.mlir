// Elementwise chains longer than one runtime instruction holds (64 nodes;
// issue 27, finding 6): a chain of 70 and one of 150 ops alone, and a
// chain of 70 and of 150 between two linears fused by
// --strategy=activations, are split into several `elementwise`
// instructions (rt::splitExpr) instead of failing with "internal:
// translated program is invalid" or "needs 74 steps ... limit is 64". The
// numbers are checked against float64 by runtime.ExprSplit.* and
// e2e.blocks.LongChains / e2e.jit.LongChains.

// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/long_chain.py 70 plain > %t/c70.mlir
// RUN: %python %S/Inputs/long_chain.py 150 plain > %t/c150.mlir
// RUN: %python %S/Inputs/long_chain.py 70 mlp > %t/m70.mlir
// RUN: %python %S/Inputs/long_chain.py 150 mlp > %t/m150.mlir
// RUN: shardlin-run %t/c70.mlir --emit-program=%t/c70.prog 2>&1 | count 0
// RUN: FileCheck %s --check-prefix=C70 --input-file=%t/c70.prog
// RUN: shardlin-run %t/c150.mlir --emit-program=%t/c150.prog 2>&1 | count 0
// RUN: FileCheck %s --check-prefix=C150 --input-file=%t/c150.prog
// RUN: shardlin-run %t/m70.mlir --strategy=activations --emit-program=%t/m70.prog 2>&1 | count 0
// RUN: FileCheck %s --check-prefix=M70 --input-file=%t/m70.prog
// RUN: shardlin-run %t/m150.mlir --strategy=activations --emit-program=%t/m150.prog 2>&1 | count 0
// RUN: FileCheck %s --check-prefix=M150 --input-file=%t/m150.prog

// 70 ops: two instructions, the second reading the first's f32 temporary.
// C70: {{^}}instr elementwise result [[T:[0-9]+]] operands 1 0 expr 64 input 0
// C70-NEXT: {{^}}instr elementwise result [[R:[0-9]+]] operands 1 [[T]] expr
// C70-NEXT: {{^}}results 1 [[R]]{{$}}
// C150-COUNT-3: {{^}}instr elementwise
// C150-NEXT: {{^}}results 1

// Fused: the gathered rows, the first GEMM, the chain in pieces, the
// second GEMM and its reduce_scatter.
// M70: instr gemm
// M70-COUNT-2: instr elementwise
// M70-NEXT: instr local_shard
// M70-NEXT: instr gemm
// M70-NEXT: instr reduce_scatter
// M150: instr gemm
// M150-COUNT-3: instr elementwise
// M150-NEXT: instr local_shard
