//===- ShardlinAttrs.td - shardlin attributes --------------*- tablegen -*-===//
#ifndef SHARDLIN_ATTRS_TD
#define SHARDLIN_ATTRS_TD

include "shardlin/Dialect/Shardlin/IR/ShardlinDialect.td"
include "mlir/IR/AttrTypeBase.td"

def Shardlin_ChunkAttr : AttrDef<Shardlin_Dialect, "Chunk"> {
  let mnemonic = "chunk";
  let summary = "PyTorch ChunkShardingSpec: a sharding dim and a placement list";
  let description = [{
    `#shardlin.chunk<dim = d, placements = [p0, ..., p_(W-1)]>` splits
    dimension `d` of a tensor into W = len(placements) chunks by the chunk
    rule (split = ceil(n / W); chunk i covers [i*split, min(n, (i+1)*split)),
    possibly empty) and places chunk i on rank `placements[i]`.

    Constraints (checked when the attribute is built or parsed):
    - `dim` >= 0 (it must also be a dimension of the tensor it describes,
      which the type or op using it checks);
    - `placements` is a permutation of 0..W-1: not empty, no duplicate and no
      out-of-range entry.

    The same attribute describes how the collectives of the lowered program
    partition a dimension, so that every size and offset table, for every
    rank, is derived from one chunk-to-rank map.

    Example: `#shardlin.chunk<dim = 1, placements = [2, 3, 0, 1]>`.
  }];
  let parameters = (ins "int64_t":$dim,
                        ArrayRefParameter<"int64_t", "placements">:$placements);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Number of chunks, which is also the number of ranks.
    int64_t getNumChunks() const { return getPlacements().size(); }
    /// The size of one rank's chunk of a dimension of size `n`: static if all
    /// chunks have the same size, ShapedType::kDynamic otherwise (also for a
    /// dynamic `n`).
    int64_t getLocalSize(int64_t n) const;
  }];
}

#endif // SHARDLIN_ATTRS_TD
