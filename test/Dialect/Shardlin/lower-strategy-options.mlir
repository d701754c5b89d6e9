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

// NOCAP: strategy = "gather-weight"
// CAP: strategy = "activations"
// TIGHT: :[[@LINE+4]]:8: error: 'shardlin.linear' op no lowering strategy fits the memory cap of 1048 bytes per rank; activations needs {{[0-9]+}}; gather-weight needs 8388608
// BADSTRATEGY: for the --strategy option: Cannot find option named 'bogus'!
// BADMODEL: error: lower-sharded-linear: latency-us must be >= 0, bandwidth-gbps and gemm-gflops > 0, memory-cap-mib >= 0
func.func @capped(%x: tensor<1x1024xf32>, %w: !shardlin.sharded<tensor<1024x1024xf32>, #shardlin.chunk<dim = 1, placements = [0, 1, 2, 3]>>) -> tensor<1x1024xf32> {
  %y = shardlin.linear %x, %w : (tensor<1x1024xf32>, !shardlin.sharded<tensor<1024x1024xf32>, #shardlin.chunk<dim = 1, placements = [0, 1, 2, 3]>>) -> tensor<1x1024xf32>
  return %y : tensor<1x1024xf32>
}
