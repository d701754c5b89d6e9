// Options of the cost model. One row against a 1024 x 1024 f32 weight on a
// machine with a high per-message latency: gathering the weight (one
// collective) beats moving activations (two), but its 8 MiB of extra memory
// per rank (the weight plus the staging copy of its column chunks) exceeds a
// 1 MiB cap, so auto falls back to moving activations. With a 1 KiB cap
// nothing fits and the pass says so.
// RUN: shardlin-opt %s --lower-sharded-linear=latency-us=1000 | FileCheck %s --check-prefix=NOCAP
// RUN: shardlin-opt %s --lower-sharded-linear='latency-us=1000 memory-cap-mib=1' | FileCheck %s --check-prefix=CAP
// RUN: not shardlin-opt %s --lower-sharded-linear=memory-cap-mib=0.001 2>&1 | FileCheck %s --check-prefix=TIGHT
// RUN: not shardlin-opt %s --lower-sharded-linear=strategy=bogus 2>&1 | FileCheck %s --check-prefix=BADSTRATEGY
// RUN: not shardlin-opt %s --lower-sharded-linear=bandwidth-gbps=0 2>&1 | FileCheck %s --check-prefix=BADMODEL
// RUN: not shardlin-opt %s --lower-sharded-linear=latency-us=-2.5 2>&1 | FileCheck %s --check-prefix=NEGLATENCY
// Each bad option string gets one line naming the option and the value,
// and nothing from llvm::cl before it.
// RUN: not shardlin-opt %s --lower-sharded-linear=latency-us=abc 2>&1 | FileCheck %s --check-prefix=NOTNUMBER --implicit-check-not=option:
// RUN: not shardlin-opt %s --lower-sharded-linear=explain=true,strategy=activations 2>&1 | FileCheck %s --check-prefix=COMMAS --implicit-check-not=option:
// RUN: not shardlin-opt %s --lower-sharded-linear=explian=true 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not shardlin-opt %s --lower-sharded-linear=gemm-gflops 2>&1 | FileCheck %s --check-prefix=NOVALUE
// RUN: not shardlin-opt %s '--pass-pipeline=builtin.module(func.func(lower-sharded-linear{latency-us=x}))' 2>&1 | FileCheck %s --check-prefix=NESTED

// NOCAP: strategy = "gather-weight"
// CAP: strategy = "activations"
// TIGHT: :[[@LINE+10]]:8: error: 'shardlin.linear' op no lowering strategy fits the memory cap of 1048 bytes per rank; activations needs {{[0-9]+}}; gather-weight needs 8388608
// BADSTRATEGY: error: lower-sharded-linear: invalid value 'bogus' for option 'strategy': expected one of auto, activations, gather-weight
// BADMODEL: error: lower-sharded-linear: bandwidth-gbps must be > 0, got 0
// NEGLATENCY: error: lower-sharded-linear: latency-us must be >= 0, got -2.5
// NOTNUMBER: error: lower-sharded-linear: invalid value 'abc' for option 'latency-us': expected a number{{$}}
// COMMAS: error: lower-sharded-linear: invalid value 'true,strategy=activations' for option 'explain': expected true or false; a pass's options are separated by spaces, not commas, as in '--lower-sharded-linear=strategy=activations explain=true'
// UNKNOWN: error: lower-sharded-linear has no option 'explian' (its options: strategy, latency-us, bandwidth-gbps, gemm-gflops, overlap-comm, overlap-chunks, memory-cap-mib, assumed-rows, explain, fuse-blocks)
// NOVALUE: error: lower-sharded-linear: option 'gemm-gflops' needs a value: a number
// NESTED: error: lower-sharded-linear: invalid value 'x' for option 'latency-us': expected a number
func.func @capped(%x: tensor<1x1024xf32>, %w: !shardlin.sharded<tensor<1024x1024xf32>, #shardlin.chunk<dim = 1, placements = [0, 1, 2, 3]>>) -> tensor<1x1024xf32> {
  %y = shardlin.linear %x, %w : (tensor<1x1024xf32>, !shardlin.sharded<tensor<1024x1024xf32>, #shardlin.chunk<dim = 1, placements = [0, 1, 2, 3]>>) -> tensor<1x1024xf32>
  return %y : tensor<1x1024xf32>
}
