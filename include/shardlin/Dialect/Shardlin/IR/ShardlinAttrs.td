//===- ShardlinAttrs.td - shardlin attributes --------------*- tablegen -*-===//
#ifndef SHARDLIN_ATTRS_TD
#define SHARDLIN_ATTRS_TD

include "shardlin/Dialect/Shardlin/IR/ShardlinDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Shardlin_ChunkAttr : AttrDef<Shardlin_Dialect, "Chunk"> {
  let mnemonic = "chunk";
  let summary = "A sharding dim, a placement list and optional chunk boundaries";
  let description = [{
    `#shardlin.chunk<dim = d, placements = [p0, ..., p_(W-1)]>` splits
    dimension `d` of a tensor into W = len(placements) chunks by PyTorch's
    ChunkShardingSpec rule (split = ceil(n / W); chunk i covers
    [i*split, min(n, (i+1)*split)), possibly empty) and places chunk i on
    rank `placements[i]`.

    `#shardlin.chunk<dim = d, placements = [...], bounds = [b0, ..., b_W]>`
    gives the chunk boundaries explicitly: chunk i covers [b_i, b_(i+1)),
    possibly empty. Upstream `shard.sharding ... sharded_dims_offsets` are
    such boundaries, and so are head-aligned splits of attention weights.
    The ceil rule is the special case the attribute describes without
    `bounds`; boundaries that happen to equal it describe the same chunks
    (every algorithm reads the boundaries through one table,
    `ChunkLayout.h`, so the two spellings give the same program sizes).

    `#shardlin.chunk<dim = d, placements = [...], block = D>` splits the
    dimension in whole blocks of D elements (the heads of an attention
    weight, D = head_dim): the ceil rule applied to the n / D blocks, scaled
    by D, so chunk i covers [D * b_i, D * b_(i+1)) where b are the ceil-rule
    boundaries of n / D over W chunks. Example: 7 heads of 4 over 3 ranks,
    `block = 4` on a dim of 28, gives the chunks [0, 12), [12, 24), [24, 28)
    (3, 3 and 1 heads), where the plain ceil rule (split 10) would cut heads.
    The dimension it splits must be a static multiple of D (checked at use).
    With explicit `bounds` as well, every bound must be a multiple of D: the
    block then only records (and checks) the alignment. `block = 1` is the
    plain rule and is not printed. The lowering replaces a block without
    bounds by its explicit bounds, so everything downstream of it (the
    runtime's chunk specs included) sees plain explicit boundaries.

    Constraints (checked when the attribute is built or parsed):
    - `dim` >= 0 (it must also be a dimension of the tensor it describes,
      which the type or op using it checks);
    - `placements` is a permutation of 0..W-1: not empty, no duplicate and no
      out-of-range entry;
    - `bounds`, if present, are W + 1 non-decreasing values starting at 0.
      The last one is the size of the dimension they split, which must be
      static: the types and ops that use the attribute check that.
    - `block` >= 1, and every bound is a multiple of it.

    The same attribute describes how the collectives of the lowered program
    partition a dimension, so that every size and offset table, for every
    rank, is derived from one chunk-to-rank map.

    Examples: `#shardlin.chunk<dim = 1, placements = [2, 3, 0, 1]>`,
    `#shardlin.chunk<dim = 0, placements = [0, 1, 2, 3], bounds = [0, 4, 4, 8, 10]>`
    (10 rows in chunks of 4, 0, 4 and 2),
    `#shardlin.chunk<dim = 0, placements = [0, 1, 2], block = 4>`.
  }];
  let parameters = (ins "int64_t":$dim,
                        ArrayRefParameter<"int64_t", "placements">:$placements,
                        OptionalArrayRefParameter<"int64_t", "bounds">:$bounds,
                        DefaultValuedParameter<"int64_t", "1">:$block);
  let skipDefaultBuilders = 1;
  let builders = [
    // The ceil rule: no explicit boundaries.
    AttrBuilder<(ins "int64_t":$dim, "::llvm::ArrayRef<int64_t>":$placements), [{
      return $_get($_ctxt, dim, placements, ::llvm::ArrayRef<int64_t>(), 1);
    }]>,
    // Explicit boundaries (none: the ceil rule), in blocks of `block`.
    AttrBuilder<(ins "int64_t":$dim, "::llvm::ArrayRef<int64_t>":$placements,
                     "::llvm::ArrayRef<int64_t>":$bounds,
                     CArg<"int64_t", "1">:$block), [{
      return $_get($_ctxt, dim, placements, bounds, block);
    }]>
  ];
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Number of chunks, which is also the number of ranks.
    int64_t getNumChunks() const { return getPlacements().size(); }
    /// Whether the boundaries are given explicitly.
    bool hasExplicitBounds() const { return !getBounds().empty(); }
    /// Whether the chunks are whole blocks of more than one element.
    bool hasBlock() const { return getBlock() > 1; }
    /// The same chunks of a dimension of static size `n` (a multiple of the
    /// block) with explicit boundaries: what the lowering passes on, so that
    /// nothing downstream needs to know the block rule.
    ChunkAttr withBoundsFor(int64_t n) const;
    /// The W + 1 boundaries of the chunks of a dimension of static size `n`:
    /// the explicit ones, or those of the ceil rule.
    ::llvm::SmallVector<int64_t> getBoundsFor(int64_t n) const;
    /// [offset, offset + size) of chunk `c` of a dimension of static size
    /// `n`, as {offset, size}.
    std::pair<int64_t, int64_t> getChunkRange(int64_t n, int64_t c) const;
    /// The size of one rank's chunk of a dimension of size `n`: static if all
    /// chunks have the same size, ShapedType::kDynamic otherwise (also for a
    /// dynamic `n`).
    int64_t getLocalSize(int64_t n) const;
    /// Fails, with a diagnostic, if the attribute cannot split a dimension of
    /// size `n` (`?` for dynamic): explicit bounds need a static `n` equal to
    /// their last value. `what` names the dimension in the message.
    ::llvm::LogicalResult
    verifyDimSize(::llvm::function_ref<::mlir::InFlightDiagnostic()> emitError,
                  int64_t n, ::llvm::StringRef what) const;
    /// The same placements and boundaries on another dimension.
    ChunkAttr withDim(int64_t dim) const;
    /// Whether `other` places the same chunks of a dimension of size `n` on
    /// the same ranks (the ceil rule and equal explicit bounds agree).
    bool sameChunks(ChunkAttr other, int64_t n) const;
  }];
}

def Shardlin_LayoutRows : I32EnumAttrCase<"Rows", 0, "rows">;
def Shardlin_LayoutReplicated : I32EnumAttrCase<"Replicated", 1, "replicated">;
def Shardlin_LayoutFeatures : I32EnumAttrCase<"Features", 2, "features">;
def Shardlin_LayoutEnum : I32EnumAttr<"Layout",
    "How an activation of a shardlin.linear is spread over the ranks",
    [Shardlin_LayoutRows, Shardlin_LayoutReplicated, Shardlin_LayoutFeatures]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::shardlin";
}

def Shardlin_LayoutAttr : EnumAttr<Shardlin_Dialect, Shardlin_LayoutEnum, "layout"> {
  let summary = "How a linear's input or result is spread over the ranks";
  let description = [{
    The layout of an activation (a `shardlin.linear`'s input or result) in
    the global view, where the activation is one tensor of B rows:

    - `rows`: each rank holds its own rows. This is the SPMD default: a
      plain tensor is rank-local, and rank r's value is its block of the
      global rows (a sequence- or batch-sharded activation). The rows of
      different ranks may differ in number.
    - `replicated`: every rank holds the same whole tensor.
    - `features`: every rank holds all rows, but only the columns (the last
      dim) of its chunk of the weight's split features: its K chunk for an
      input, its N chunk for a result.

    The layouts are attributes of the linear rather than types of the
    activations because the activations flow through upstream ops
    (`arith`, `math`, `linalg`) that only take builtin tensors: a
    replicated or feature-split value between two linears is still a plain
    tensor of the rank's local shape, and the linears at either end state
    what it holds.
  }];
}

#endif // SHARDLIN_ATTRS_TD
