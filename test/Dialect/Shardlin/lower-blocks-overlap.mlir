// RUN: shardlin-opt %s '--lower-sharded-linear=strategy=activations overlap-chunks=4' | FileCheck %s --check-prefix=FORCED
// RUN: shardlin-opt %s '--lower-sharded-linear=strategy=activations overlap-chunks=4' | shardlin-opt | FileCheck %s --check-prefix=FORCED
// RUN: shardlin-opt %s '--lower-sharded-linear=strategy=activations' | FileCheck %s --check-prefix=NONE
// RUN: shardlin-opt %s '--lower-sharded-linear=strategy=activations overlap-chunks=1' | FileCheck %s --check-prefix=NONE
// RUN: shardlin-opt %s '--lower-sharded-linear=overlap-comm=true bandwidth-gbps=150 gemm-gflops=600000 latency-us=10 explain=true' 2>&1 | FileCheck %s --check-prefix=AUTO
// RUN: shardlin-opt %s '--lower-sharded-linear=bandwidth-gbps=150 gemm-gflops=600000 latency-us=10' | FileCheck %s --check-prefix=NONE
// RUN: not shardlin-opt %s '--lower-sharded-linear=overlap-chunks=65' 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not shardlin-opt %s '--lower-sharded-linear=overlap-chunks=two' 2>&1 | FileCheck %s --check-prefix=NOTINT

// Overlap of a fused block's collectives with its GEMMs (docs/lowering.md,
// docs/runtime.md): the fused all_gather carries the row chunks in which the
// runtime pipelines the block, `overlap_chunks` in its shardlin.lowering
// (the program text's `overlap N`). overlap-chunks=N forces N; the default
// (-1) lets the cost model choose (chooseOverlapChunks), which overlaps only
// on a machine whose collectives run beside its GEMMs (overlap-comm=true,
// a GPU) and only blocks of enough rows per chunk.

// FORCED-LABEL: func.func @small
// FORCED: shardlin.all_gather %{{.*}} along <dim = 0, placements = [0, 1, 2, 3]> {shardlin.lowering = {overlap_chunks = 4 : i64, strategy = "fused"}}
// NONE-LABEL: func.func @small
// NONE-NOT: overlap_chunks
// AUTO-NOT: remark: {{.*}}small{{.*}}overlapped
func.func @small(%x: tensor<6x8xf32>,
    %w1: !shardlin.sharded<tensor<20x8xf32>, #shardlin.chunk<dim = 0, placements = [2, 0, 1, 3]>>, %b1: tensor<20xf32>,
    %w2: !shardlin.sharded<tensor<8x20xf32>, #shardlin.chunk<dim = 1, placements = [2, 0, 1, 3]>>, %b2: tensor<8xf32>) -> tensor<6x8xf32> {
  %h = shardlin.linear %x, %w1, %b1 : (tensor<6x8xf32>, !shardlin.sharded<tensor<20x8xf32>, #shardlin.chunk<dim = 0, placements = [2, 0, 1, 3]>>, tensor<20xf32>) -> tensor<6x20xf32>
  %t = math.tanh %h : tensor<6x20xf32>
  %y = shardlin.linear %t, %w2, %b2 : (tensor<6x20xf32>, !shardlin.sharded<tensor<8x20xf32>, #shardlin.chunk<dim = 1, placements = [2, 0, 1, 3]>>, tensor<8xf32>) -> tensor<6x8xf32>
  return %y : tensor<6x8xf32>
}

// The issue's MLP on 8 GPUs, 1024 rows per rank: the collectives (176 MB
// per rank at 150 GB/s) take longer than the GEMMs; in 2 chunks the GEMMs
// hide behind them but for half a chunk, and 4 would add more latency than
// they hide.
// AUTO: lower-blocks-overlap.mlir:[[# @LINE + 9]]:8: remark: block fused with 1 col-wise linear (cheapest estimate): fused est. 1772.535 us, {{.*}}; overlapped in 2 row chunks, est. 1683.470 us
// AUTO: shardlin.all_gather {{.*}} {shardlin.lowering = {overlap_chunks = 2 : i64, strategy = "fused"}} : tensor<1024x4096xbf16> -> tensor<8192x4096xbf16>
// NONE-LABEL: func.func @big
// NONE-NOT: overlap_chunks
func.func @big(%x: tensor<1024x4096xbf16>,
    %w1: !shardlin.sharded<tensor<16384x4096xbf16>, #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3, 4, 5, 6, 7]>>,
    %w2: !shardlin.sharded<tensor<4096x16384xbf16>, #shardlin.chunk<dim = 1, placements = [0, 1, 2, 3, 4, 5, 6, 7]>>) -> tensor<1024x4096xbf16> {
  %h = shardlin.linear %x, %w1 : (tensor<1024x4096xbf16>, !shardlin.sharded<tensor<16384x4096xbf16>, #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3, 4, 5, 6, 7]>>) -> tensor<1024x16384xbf16>
  %t = math.tanh %h : tensor<1024x16384xbf16>
  %y = shardlin.linear %t, %w2 : (tensor<1024x16384xbf16>, !shardlin.sharded<tensor<4096x16384xbf16>, #shardlin.chunk<dim = 1, placements = [0, 1, 2, 3, 4, 5, 6, 7]>>) -> tensor<1024x4096xbf16>
  return %y : tensor<1024x4096xbf16>
}

// BAD: lower-sharded-linear: overlap-chunks must be -1 (the cost model's choice), 0 or 1 (none) or a chunk count up to 64, got 65
// NOTINT: lower-sharded-linear: invalid value 'two' for option 'overlap-chunks': expected an integer
