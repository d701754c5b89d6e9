// RUN: not shardlin-opt %s --shardlin-lower-to-llvm=bogus=1 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not shardlin-opt %s --shardlin-lower-to-llvm=strategy=activations 2>&1 | FileCheck %s --check-prefix=LOWERING
// RUN: not shardlin-opt %s '--shardlin-lower-to-llvm=results-as-out-params=maybe' 2>&1 | FileCheck %s --check-prefix=VALUE
// RUN: shardlin-opt %s '--shardlin-lower-to-llvm=results-as-out-params=true' | FileCheck %s --check-prefix=OK

// The pipeline's options (issue 27, finding 10): an unknown one is named
// with the pipeline and what it takes (it was "<Pass-Options-Parser>: no
// such option bogus"), and so is a bad value.

// UNKNOWN: error: shardlin-lower-to-llvm has no option 'bogus' (its only option: results-as-out-params=BOOL; lower-sharded-linear's options are given to that pass, before this pipeline)
// UNKNOWN-NOT: Pass-Options-Parser
// LOWERING: error: shardlin-lower-to-llvm has no option 'strategy'
// VALUE: error: shardlin-lower-to-llvm: invalid value 'maybe' for option 'results-as-out-params': expected true or false
// OK: llvm.func @f(
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
