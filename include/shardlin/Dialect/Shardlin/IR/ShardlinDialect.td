//===- ShardlinDialect.td - The shardlin dialect -----------*- tablegen -*-===//
#ifndef SHARDLIN_DIALECT_TD
#define SHARDLIN_DIALECT_TD

include "mlir/IR/OpBase.td"

def Shardlin_Dialect : Dialect {
  let name = "shardlin";
  let cppNamespace = "::mlir::shardlin";
  let summary = "Sharded tensors and tensor-parallel linear layers";
  let description = [{
    The `shardlin` dialect describes linear layers `y = x A^T + b` whose weight
    `A` (N x K) is split across W ranks with PyTorch's `ChunkShardingSpec`
    semantics, and the explicit SPMD program of collectives and GEMMs that
    they lower to.

    Programs are SPMD: every rank runs the same program. Plain tensors are
    rank-local values (each rank has its own input of the same shape). A value
    of type `!shardlin.sharded<...>` is one global tensor of which each rank
    holds one chunk. Sizes that differ by rank (uneven or empty chunks) are
    never baked into the program: they follow from a `#shardlin.chunk`
    attribute and the rank at run time, and appear as `?` in the types of
    rank-local values.

    Chunk rule: a dimension of size n over W chunks has split = ceil(n / W);
    chunk i covers [i*split, min(n, (i+1)*split)), possibly empty
    (n = 5, W = 4 gives sizes 2, 2, 1, 0). `placements[i]` is the rank that
    holds chunk i. A `#shardlin.chunk` may instead give the chunk boundaries
    explicitly (`bounds`), for splits such as upstream's
    `sharded_dims_offsets`.

    Modules in the upstream global view (`shard` + `linalg`) are imported
    into this dialect by `--shardlin-import-shard`; a linear's `layouts`
    then say which activations are replicated or split along their features
    rather than each rank's own rows.
  }];
  let useDefaultAttributePrinterParser = 1;
  let useDefaultTypePrinterParser = 1;
  // shardlin.rank folds to an index constant (arith.constant).
  let hasConstantMaterializer = 1;
  let extraClassDeclaration = [{
    void registerAttributes();
    void registerTypes();
  }];
}

class Shardlin_Op<string mnemonic, list<Trait> traits = []>
    : Op<Shardlin_Dialect, mnemonic, traits>;

#endif // SHARDLIN_DIALECT_TD
