//===- LowerShardedLinearOptions.td - The pass's options --*- tablegen -*-===//
//
// The options of --lower-sharded-linear (Passes.td), declared once: the
// backward pass (Backward/Passes.td) lowers with the same ones, and
// shardlin-run takes them as flags read from the pass
// (lowerShardedLinearFlags).
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_LOWERSHARDEDLINEAROPTIONS_TD
#define SHARDLIN_LOWERSHARDEDLINEAROPTIONS_TD

include "mlir/Pass/PassBase.td"

defvar LowerShardedLinearOptionList = [
    Option<"strategy", "strategy", "::mlir::shardlin::StrategyOption",
           /*default=*/"::mlir::shardlin::StrategyOption::Auto",
           "Lowering strategy: auto (cost model, the default), activations or gather-weight",
           // The same clEnumValN values as shardlin-run's --strategy.
           "::mlir::shardlin::strategyOptionValues()">,
    Option<"latencyUs", "latency-us", "double", /*default=*/"2.0",
           "Machine model: latency per collective and peer, in microseconds (default 2)">,
    Option<"bandwidthGBps", "bandwidth-gbps", "double", /*default=*/"10.0",
           "Machine model: bytes each rank sends (and receives) per second, in GB/s (default 10)">,
    Option<"gemmGflops", "gemm-gflops", "double", /*default=*/"100.0",
           "Machine model: GEMM rate per rank, in GFLOP/s (default 100)">,
    Option<"overlapComm", "overlap-comm", "bool", /*default=*/"false",
           "Machine model: a rank's collectives run beside its GEMMs without slowing them (GPUs: copy engines, NICs); lets overlap-chunks=-1 pipeline fused blocks (default false: a CPU's collectives are copies by its cores)">,
    Option<"overlapChunks", "overlap-chunks", "int64_t", /*default=*/"-1",
           "Fused blocks: the row chunks in which the runtime pipelines each block's all_gather and reduce_scatter with its GEMMs (-1, the default: the cost model's choice, none unless overlap-comm; 0 or 1: none; N: N chunks, at most 64)">,
    Option<"memoryCapMiB", "memory-cap-mib", "double", /*default=*/"0.0",
           "Cap on the extra memory per rank a strategy may use, in MiB (default 0: none)">,
    Option<"assumedRows", "assumed-rows", "int64_t", /*default=*/"1024",
           "Cost model: the rows per rank (product of the batch dims) assumed for a linear whose batch dims are dynamic (default 1024)">,
    Option<"explain", "explain", "bool", /*default=*/"false",
           "Emit a remark per linear with every strategy's cost and the choice (default false)">,
    Option<"fuseBlocks", "fuse-blocks", "bool", /*default=*/"true",
           "Fuse col-wise -> elementwise -> row-wise chains into one block "
           "(all_gather, GEMMs, reduce_scatter) where the chunk specs match (default true)">,
  ];

#endif // SHARDLIN_LOWERSHARDEDLINEAROPTIONS_TD
