// shardlin-run --jit-cpu=NAME: the code compiled for another CPU than this
// machine's. x86-64-v2 has no F16C, AVX-512 or AVX512-BF16, so the f16
// conversions become calls of the compiler runtime (__truncsfhf2,
// __extendhfsf2; libgcc_s exports them since GCC 12) while bf16 calls
// nothing: the pipeline computes bf16 arithmetic in f32 and expands the
// conversions into integer arithmetic (shardlin-expand-bf16-conversions).
// GCC 12's libgcc has no __truncsfbf2, which LLVM calls for every bf16
// result on a CPU without AVX512-BF16, so the JIT failed to link such
// modules there.
// Both CPUs give the same bits. The same object ahead of time: llc -mcpu.
// REQUIRES: x86_64

// RUN: rm -rf %t && mkdir -p %t
// RUN: %python -c "import sys; sys.path.insert(0, '%shardlin_src/testing/tools'); import npytool; npytool.write_npy('%t/x.npy', '<f4', (4,), [1.0 / 3.0, 1.5, 1000.1, -2.0e-5])"
// RUN: shardlin-run %s --jit --jit-cpu=x86-64-v2 --arg=%t/x.npy --out=%t/h.v2.npy --out=%t/b.v2.npy --out=%t/s.v2.npy --out=%t/a.v2.npy 2>&1 | count 0
// RUN: shardlin-run %s --jit --arg=%t/x.npy --out=%t/h.npy --out=%t/b.npy --out=%t/s.npy --out=%t/a.npy
// RUN: cmp %t/h.npy %t/h.v2.npy
// RUN: cmp %t/b.npy %t/b.v2.npy
// RUN: cmp %t/s.npy %t/s.v2.npy
// RUN: cmp %t/a.npy %t/a.v2.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py show %t/h.v2.npy | FileCheck %s --check-prefix=F16
// F16: 0.3333 1.5000 1000.0000 -0.0000
// RUN: %python %shardlin_src/testing/tools/npytool.py show %t/b.v2.npy | FileCheck %s --check-prefix=BF16
// BF16: 0.3340 1.5000 1000.0000 -0.0000
// RUN: %python %shardlin_src/testing/tools/npytool.py show %t/a.v2.npy | FileCheck %s --check-prefix=ARITH
// ARITH: 1.7344 5.9688 inf 1.0000

// Ahead of time for x86-64-v2: the f16 conversions call the compiler
// runtime, bf16 nothing.
// RUN: shardlin-opt %s --shardlin-lower-to-llvm | mlir-translate --mlir-to-llvmir | llc -O2 -mcpu=x86-64-v2 -o - \
// RUN:   | FileCheck %s --check-prefix=V2 --implicit-check-not=__truncsfbf2 --implicit-check-not=__extendbfsf2
// V2-DAG: __truncsfhf2
// V2-DAG: __extendhfsf2

// RUN: rm -rf %t

// Conversions, and bf16 arithmetic: exp(b) + b, each result rounded to bf16.
func.func @main(%x: tensor<4xf32>)
    -> (tensor<4xf16>, tensor<4xbf16>, tensor<4xf32>, tensor<4xbf16>) {
  %h = arith.truncf %x : tensor<4xf32> to tensor<4xf16>
  %b = arith.truncf %x : tensor<4xf32> to tensor<4xbf16>
  %hx = arith.extf %h : tensor<4xf16> to tensor<4xf32>
  %bx = arith.extf %b : tensor<4xbf16> to tensor<4xf32>
  %s = arith.addf %hx, %bx : tensor<4xf32>
  %e = math.exp %b : tensor<4xbf16>
  %a = arith.addf %e, %b : tensor<4xbf16>
  return %h, %b, %s, %a : tensor<4xf16>, tensor<4xbf16>, tensor<4xf32>, tensor<4xbf16>
}
