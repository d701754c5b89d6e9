// Options of the cost model. One row against a 1024 x 1024 f32 weight on a
// machine with a high per-message latency: gathering the weight (one
// collective) beats moving activations (two), but its 8 MiB of extra memory
// per rank (the weight plus the staging copy of its column chunks) exceeds a
// 1 MiB cap, so auto falls back to moving activations. With a 1 KiB cap
// nothing fits and the pass says so.

// NOCAP: strategy = "gather-weight"
// CAP: strategy = "activations"
// TIGHT: :[[@LINE+4]]:8: error: 'shardlin.linear' op no lowering strategy fits the memory cap of 1048 bytes per rank; activations needs {{[0-9]+}}; gather-weight needs 8388608
// BADSTRATEGY: error: lower-sharded-linear: unknown strategy 'bogus' (expected auto, activations or gather-weight)
// BADMODEL: error: lower-sharded-linear: latency-us must be >= 0, bandwidth-gbps and gemm-gflops > 0, memory-cap-mib >= 0
func.func @capped(%x: tensor<1x1024xf32>, %w: !shardlin.sharded<tensor<1024x1024xf32>, #shardlin.chunk<dim = 1, placements = [0, 1, 2, 3]>>) -> tensor<1x1024xf32> {
  %y = shardlin.linear %x, %w : (tensor<1x1024xf32>, !shardlin.sharded<tensor<1024x1024xf32>, #shardlin.chunk<dim = 1, placements = [0, 1, 2, 3]>>) -> tensor<1x1024xf32>
  return %y : tensor<1x1024xf32>
}
