//===- ShardlinOps.td - shardlin operations ----------------*- tablegen -*-===//
#ifndef SHARDLIN_OPS_TD
#define SHARDLIN_OPS_TD

include "shardlin/Dialect/Shardlin/IR/ShardlinDialect.td"
include "shardlin/Dialect/Shardlin/IR/ShardlinAttrs.td"
include "shardlin/Dialect/Shardlin/IR/ShardlinTypes.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/OpBase.td"

//===----------------------------------------------------------------------===//
// The sharded linear layer.
//===----------------------------------------------------------------------===//

def Shardlin_LinearOp : Shardlin_Op<"linear", [Pure]> {
  let summary = "Tensor-parallel linear layer y = x A^T + b";
  let description = [{
    Computes `y = x A^T + b` on every rank, where `x` is the rank's own input,
    `A` (N x K) is a sharded weight and `b` (N) an optional bias that is the
    full vector on every rank. The result is rank-local and has all N
    features.

    The leading dims of `x` are batch dims (flattened to B rows); a 1-D `x`
    is one row. Batch dims may be dynamic (`?`): their sizes come with the
    input at run time, may differ between ranks and may be 0; the result has
    the same dynamic dims. The weight may be split along dim 1 (K,
    "row-wise") or dim 0 (N, "col-wise") in any placement order, with uneven
    or empty chunks, by the ceil rule or by explicit chunk bounds.

    ```mlir
    %y = shardlin.linear %x, %w, %b : (tensor<5x19xf32>,
        !shardlin.sharded<tensor<11x19xf32>,
                          #shardlin.chunk<dim = 1, placements = [2, 3, 0, 1]>>,
        tensor<11xf32>) -> tensor<5x11xf32>
    ```

    ```mlir
    %y = shardlin.linear %x, %w : (tensor<?x?x19xf32>, !shardlin.sharded<
        tensor<11x19xf32>, #shardlin.chunk<dim = 0, placements = [1, 0]>>)
        -> tensor<?x?x11xf32>
    ```

    **Weight storage.** With `weight_kn` the weight is stored K x N (the
    `linalg.matmul` form y = x W + b, W = A^T): K is its dim 0 and N its dim
    1, and the lowering only changes the GEMM's transpose flag (nothing is
    transposed in memory). A split of its dim 0 is then a K split.

    **Layouts** (`#shardlin.layout`, for programs imported from the global
    view, docs/interop.md). `layouts IN -> OUT` says how the input and the
    result are spread over the ranks; without it both are `rows` (each rank
    its own rows, the semantics above). The other pairs take a 2-D input
    (rows x K; an importer reshapes N-D activations around the linear):

    | input -> result | weight split | per rank |
    |---|---|---|
    | `rows -> features` | N | all ranks' rows stacked by `row_chunks`, the rank's N chunk |
    | `replicated -> features` | N | all B rows, the rank's N chunk |
    | `replicated -> replicated` | N or K | all B rows, all N features, the same on every rank |
    | `replicated -> rows` | N or K | the rank's chunk of the B rows, all N |
    | `features -> replicated` | K | the input holds the rank's K chunk of all B rows |
    | `features -> rows` | K | likewise; the result the rank's chunk of the rows |

    Where one side holds all rows and the other each rank's chunk of them,
    `along <chunk>` (the `row_chunks` attribute: a `#shardlin.chunk` on dim
    0 with W chunks; default: rank order by the ceil rule) says how the
    rows are split: the result's for a `rows` result of a `replicated` or
    `features` input, the input's for `rows -> features` (whose result
    stacks every rank's rows in that order; its row count is `?` or the
    total the chunks give). For a `features` input that a `rows ->
    features` linear stacked, the same chunks give each rank back its own
    rows. A replicated x is never gathered; a K split with a replicated
    result ends in one `all_reduce`, with a `rows` result in one
    `reduce_scatter`.

    ```mlir
    %h = shardlin.linear %x, %w1 weight_kn layouts replicated -> features
        : (tensor<8x16xf32>, !shardlin.sharded<tensor<16x12xf32>,
           #shardlin.chunk<dim = 1, placements = [0, 1, 2, 3]>>) -> tensor<8x3xf32>
    ```

    Verified: the weight has rank 2 and is split on one of its dims; the
    input has rank >= 1 and a static last dim (K, or the rank's K chunk for
    a `features` input; only the batch dims may be dynamic); the bias has
    rank 1 and size N; the layouts are one of the pairs above, with the
    weight split that pair needs; the result shape is the one the layouts
    give (above: N, or the rank's N chunk for `features`; the rows of the
    input, all ranks' for `rows -> features`, the rank's chunk of them for
    a `rows` result of another input); `row_chunks` only where one side
    holds all rows, on dim 0, with W chunks that fit the rows;
    one element type (f16, bf16, f32 or f64) throughout.

    `--lower-sharded-linear` rewrites it into explicit collectives and GEMMs.
  }];
  let arguments = (ins Shardlin_Tensor:$input, Shardlin_ShardedType:$weight,
                       Optional<Shardlin_Tensor>:$bias,
                       UnitAttr:$weight_kn,
                       DefaultValuedAttr<Shardlin_LayoutAttr,
                           "::mlir::shardlin::Layout::Rows">:$input_layout,
                       DefaultValuedAttr<Shardlin_LayoutAttr,
                           "::mlir::shardlin::Layout::Rows">:$result_layout,
                       OptionalAttr<Shardlin_ChunkAttr>:$row_chunks);
  let results = (outs Shardlin_Tensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? (`weight_kn` $weight_kn^)?
    custom<LinearLayouts>($input_layout, $result_layout, $row_chunks)
    attr-dict `:` functional-type(operands, results)
  }];
  let builders = [
    // The dialect's default form: an N x K weight, each rank its own rows.
    OpBuilder<(ins "::mlir::Type":$result, "::mlir::Value":$input,
                   "::mlir::Value":$weight,
                   CArg<"::mlir::Value", "{}">:$bias), [{
      build($_builder, $_state, result, input, weight, bias,
            /*weight_kn=*/false, ::mlir::shardlin::Layout::Rows,
            ::mlir::shardlin::Layout::Rows, /*row_chunks=*/nullptr);
    }]>
  ];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ShardedType getWeightType() { return getWeight().getType(); }
    /// The weight's dims of N and of K.
    int64_t getNDim() { return getWeightKn() ? 1 : 0; }
    int64_t getKDim() { return getWeightKn() ? 0 : 1; }
    int64_t getN() { return getWeightType().getShape()[getNDim()]; }
    int64_t getK() { return getWeightType().getShape()[getKDim()]; }
    /// Whether the weight's split dim is K (row-wise) rather than N.
    bool splitsK() {
      return getWeightType().getSharding().getDim() == getKDim();
    }
    /// Whether both layouts are the default `rows`.
    bool hasDefaultLayouts() {
      return getInputLayout() == Layout::Rows &&
             getResultLayout() == Layout::Rows;
    }
    /// How the rows are split where one side holds all of them (see the
    /// description): `row_chunks`, or rank order by the ceil rule.
    ChunkAttr getRowSplit();
  }];
}

//===----------------------------------------------------------------------===//
// Local data access.
//===----------------------------------------------------------------------===//

def Shardlin_LocalShardOp : Shardlin_Op<"local_shard", [Pure]> {
  let summary = "The calling rank's chunk of a sharded tensor";
  let description = [{
    Returns the chunk of the sharded tensor that the calling rank holds (chunk
    `c` with `placements[c] == rank`). The result type is the global shape with
    the sharded dim replaced by the local chunk size, which is `?` when chunks
    differ in size (the runtime resolves it from the rank), and may be 0.
    No data moves: it is a view of the rank's shard. The chunk of a
    `shardlin.from_local` is that op's source (the folder says so).

    ```mlir
    %a = shardlin.local_shard %w : !shardlin.sharded<tensor<11x19xf32>,
        #shardlin.chunk<dim = 1, placements = [2, 3, 0, 1]>> -> tensor<11x?xf32>
    ```
  }];
  let arguments = (ins Shardlin_ShardedType:$source);
  let results = (outs Shardlin_Tensor:$result);
  let assemblyFormat = "$source attr-dict `:` qualified(type($source)) `->` type($result)";
  let hasVerifier = 1;
  // local_shard(from_local(x)) is x.
  let hasFolder = 1;
}

def Shardlin_LocalChunkOp : Shardlin_Op<"local_chunk", [Pure,
    AllElementTypesMatch<["source", "result"]>]> {
  let summary = "The calling rank's chunk of a tensor that every rank holds";
  let description = [{
    Given a tensor that has the same value on every rank (such as a bias),
    returns the chunk along `along.dim` that the chunk spec assigns to the
    calling rank. The result's chunked dim is the local chunk size (`?` when
    chunks are uneven). It is a view, or a strided copy when the dim is not
    the outermost non-unit dim.

    ```mlir
    %bc = shardlin.local_chunk %b along <dim = 0,
        placements = [1, 0]> : tensor<11xf32> -> tensor<?xf32>
    ```
  }];
  let arguments = (ins Shardlin_Tensor:$source, Shardlin_ChunkAttr:$along);
  let results = (outs Shardlin_Tensor:$result);
  let assemblyFormat = [{
    $source `along` $along attr-dict `:` type($source) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Shardlin_FromLocalOp : Shardlin_Op<"from_local", [Pure]> {
  let summary = "A sharded tensor from every rank's chunk";
  let description = [{
    The inverse of `shardlin.local_shard`: the sharded tensor of which the
    calling rank holds `source`, its chunk under the result type's spec.
    No data moves; the source's type must be the result's local chunk type
    (`?` where chunks differ in size, the rank's size at run time).

    An importer returns a function result that the module states split (a
    sequence- or feature-sharded activation) through it, so that the
    function's signature says which global tensor each rank's value is a
    chunk of.

    ```mlir
    %y = shardlin.from_local %yl : tensor<?x16xf32> -> !shardlin.sharded<
        tensor<10x16xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3],
        bounds = [0, 3, 6, 9, 10]>>
    ```
  }];
  let arguments = (ins Shardlin_Tensor:$source);
  let results = (outs Shardlin_ShardedType:$result);
  let assemblyFormat = "$source attr-dict `:` type($source) `->` qualified(type($result))";
  let hasVerifier = 1;
}

def Shardlin_ConstantOp : Shardlin_Op<"constant", [Pure]> {
  let summary = "A constant tensor: the whole value, or each rank its chunk";
  let description = [{
    A constant of the global view, such as a weight or a bias that a
    frontend wrote into the module (`dense<...>`, a splat, or a
    `dense_resource<NAME>` blob of the module's `dialect_resources`). With a
    plain tensor result every rank holds all of it; with a
    `!shardlin.sharded` result it is split like a sharded argument: rank
    `placements[i]` holds chunk i along the spec's dim and takes it with
    `shardlin.local_shard`, so the lowering, block fusion and the cost model
    treat it as a weight. The executors keep only the rank's chunk of it:
    the plan executor copies that chunk from the program's constants table
    (docs/runtime.md, "Constants"), the native path slices it as
    `shardlin.local_chunk` does.

    `--shardlin-import-shard` builds it from an `arith.constant` that is not
    a splat (docs/interop.md, "Constants").

    ```mlir
    %w = shardlin.constant dense_resource<fc.weight> : tensor<38x40xf32>
        -> !shardlin.sharded<tensor<38x40xf32>,
                             #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3]>>
    %b = shardlin.constant dense<[1.0, 2.0]> : tensor<2xf32> -> tensor<2xf32>
    ```

    Constraints: the value is a tensor of static shape of f16, bf16, f32 or
    f64 and, if it is a `dense_resource`, its blob (when the module holds
    it) has the bytes of that many elements; the result is the value's type,
    or a sharded type of it.
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs AnyTypeOf<[Shardlin_Tensor, Shardlin_ShardedType]>:$result);
  let assemblyFormat = "$value attr-dict `->` qualified(type($result))";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The value's type (the global tensor).
    ::mlir::RankedTensorType getGlobalType() {
      return ::llvm::cast<::mlir::RankedTensorType>(getValue().getType());
    }
    /// The chunk spec of a sharded result, or null for a plain one.
    ::mlir::shardlin::ChunkAttr getSharding();
    /// The value's elements, row-major in their element type's bytes
    /// (little-endian, 2, 4 or 8 bytes each; a splat is expanded), or
    /// failure with a diagnostic at the op (a dense_resource whose blob
    /// the module does not hold).
    ::mlir::FailureOr<std::vector<char>> getBytes();
  }];
}

def Shardlin_RankOp : Shardlin_Op<"rank", [Pure]> {
  let summary = "The calling rank in a group of `world_size` ranks";
  let description = [{
    Returns the rank, in `[0, world_size)`, of the process or thread that runs
    the program. Sizes and offsets that differ by rank (`?` in types) are
    computed from it and a `#shardlin.chunk` spec: the bufferization of the
    shardlin ops emits it with `arith` ops for the chunk rule.

    `shardlin-convert-to-llvm` turns it into `shardlin_context_rank` on the
    calling thread's context, which the function's prologue has checked to
    have `world_size` ranks. With `world_size = 1` it folds to 0.

    ```mlir
    %r = shardlin.rank world_size = 4
    ```
  }];
  let arguments = (ins ConfinedAttr<I64Attr, [IntPositive]>:$world_size);
  let results = (outs Index:$rank);
  let assemblyFormat = "`world_size` `=` $world_size attr-dict";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Collectives.
//===----------------------------------------------------------------------===//

// The base of the collectives: one tensor in, one out, of the same element
// type and rank; their chunk attributes follow `commonArgs` (the manner of
// upstream Shard's collective base).
class Shardlin_CollectiveOp<string mnemonic, list<Trait> traits = []>
    : Shardlin_Op<mnemonic, !listconcat([Pure,
        AllElementTypesMatch<["input", "result"]>,
        AllRanksMatch<["input", "result"]>], traits)> {
  dag commonArgs = (ins Shardlin_Tensor:$input);
  let results = (outs Shardlin_Tensor:$result);
  let hasVerifier = 1;
  // The paragraph every collective's description ends with.
  code commonDescription = [{
    Every rank runs the collective with the same attributes. It maps to one
    collective call of the runtime (an MPI or NCCL collective, or one grouped
    send/recv); the chunk attributes give every rank's counts and offsets, so
    each size and offset table is derived from one chunk-to-rank map. The
    input and the result have the same element type and rank.

    A dynamic dim (rows of run-time batch sizes, which may differ between
    ranks) has no chunk rule. Gathered or concatenated along a dynamic dim,
    chunk `c` is the whole block of rank `placements[c]`, whatever its size.
    Split along a dynamic dim (reduce_scatter, or all_to_all's `split`), a
    tensor whose rows were stacked that way, and carried since through
    gemm rows, bias_add, convert or elementwise ops, is split into the same
    blocks; one that was not is split by the chunk rule over its run-time
    size. The verifier accepts any size for the chunk of a dynamic dim; the
    runtime checks a static one.

    The native path states those blocks: `shardlin-prepare-native` gives a collective
    that stacks or splits a dynamic dim the chunk bounds of its blocks,
    `bounds(%b : tensor<Wp1xi64>)` after the chunk spec it applies to, made
    by `shardlin.gather_bounds` (the ranks' sizes exchanged at run time).
    A spec with a `bounds` operand uses them instead of its chunk rule; it
    must have no explicit bounds of its own, and its dim must be dynamic.
  }];
}

// The W + 1 chunk bounds of a dim known only at run time
// (shardlin.gather_bounds), and their buffer.
def Shardlin_BoundsTensor : 1DTensorOf<[I64]>;
def Shardlin_BoundsMemRef : MemRefRankOf<[I64], [1]>;

def Shardlin_AllGatherOp : Shardlin_CollectiveOp<"all_gather"> {
  let summary = "Gather every rank's block into a tensor along one dim";
  let description = [{
    The result's dim `along.dim` is divided into chunks by the chunk rule;
    chunk `c` is the input of rank `along.placements[c]`. So each rank's input
    has, along that dim, the size of the chunk it is assigned (`?` when chunks
    are uneven); all other dims are equal. Every rank receives the same
    result.

    Gathering equal row blocks of W ranks in rank order uses identity
    placements on a dim of size W*B:

    ```mlir
    %g = shardlin.all_gather %x along <dim = 0,
        placements = [0, 1, 2, 3]> : tensor<5x19xf32> -> tensor<20x19xf32>
    ```
  }] # commonDescription;
  let arguments = !con(commonArgs, (ins Optional<Shardlin_BoundsTensor>:$bounds,
                                        Shardlin_ChunkAttr:$along));
  let assemblyFormat = [{
    $input `along` $along (`bounds` `(` $bounds^ `:` type($bounds) `)`)?
    attr-dict `:` type($input) `->` type($result)
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Type":$result, "::mlir::Value":$input,
                   "::mlir::shardlin::ChunkAttr":$along), [{
      build($_builder, $_state, result, input, ::mlir::Value(), along);
    }]>
  ];
}

def Shardlin_AllToAllOp : Shardlin_CollectiveOp<"all_to_all",
    [AttrSizedOperandSegments]> {
  let summary = "Split along one dim, exchange, concatenate along another";
  let description = [{
    Each rank splits its input along `split.dim` by the chunk rule and sends
    chunk `c` to rank `split.placements[c]`. Each rank receives one piece from
    every rank `s` and places it as chunk `c'` of the result along
    `concat.dim`, where `concat.placements[c'] == s`. `split.dim` and
    `concat.dim` differ, and both specs have the same number of chunks.

    Types: the result's split dim is the local chunk size of the input's
    split dim under `split`; the input's concat dim is the local chunk size
    of the result's concat dim under `concat`; all other dims are equal.
    Rank-dependent sizes are `?`.

    Row-wise sharded linear (K split by the weight's spec, rows stacked by
    source rank):

    ```mlir
    %xs = shardlin.all_to_all %x
        split <dim = 1, placements = [2, 3, 0, 1]>
        concat <dim = 0, placements = [0, 1, 2, 3]>
        : tensor<5x19xf32> -> tensor<20x?xf32>
    ```
  }] # commonDescription;
  let arguments = !con(commonArgs, (ins
      Optional<Shardlin_BoundsTensor>:$split_bounds,
      Optional<Shardlin_BoundsTensor>:$concat_bounds,
      Shardlin_ChunkAttr:$split, Shardlin_ChunkAttr:$concat));
  let assemblyFormat = [{
    $input `split` $split
    (`bounds` `(` $split_bounds^ `:` type($split_bounds) `)`)?
    `concat` $concat
    (`bounds` `(` $concat_bounds^ `:` type($concat_bounds) `)`)?
    attr-dict `:` type($input) `->` type($result)
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Type":$result, "::mlir::Value":$input,
                   "::mlir::shardlin::ChunkAttr":$split,
                   "::mlir::shardlin::ChunkAttr":$concat), [{
      build($_builder, $_state, result, input, ::mlir::Value(),
            ::mlir::Value(), split, concat);
    }]>
  ];
}

def Shardlin_ReduceScatterOp : Shardlin_CollectiveOp<"reduce_scatter"> {
  let summary = "Sum over ranks, then give each rank its chunk along one dim";
  let description = [{
    Computes the elementwise sum of the inputs of all ranks and returns to
    each rank the chunk along `along.dim` that the spec assigns to it (chunk
    `c` goes to rank `along.placements[c]`). The result's dim is the local
    chunk size (`?` when uneven). f16 and bf16 are summed in f32 and rounded
    once.

    ```mlir
    %y = shardlin.reduce_scatter %p along <dim = 0,
        placements = [0, 1, 2, 3]> : tensor<20x11xf32> -> tensor<5x11xf32>
    ```
  }] # commonDescription;
  let arguments = !con(commonArgs, (ins Optional<Shardlin_BoundsTensor>:$bounds,
                                        Shardlin_ChunkAttr:$along));
  let assemblyFormat = [{
    $input `along` $along (`bounds` `(` $bounds^ `:` type($bounds) `)`)?
    attr-dict `:` type($input) `->` type($result)
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Type":$result, "::mlir::Value":$input,
                   "::mlir::shardlin::ChunkAttr":$along), [{
      build($_builder, $_state, result, input, ::mlir::Value(), along);
    }]>
  ];
}

def Shardlin_GatherBoundsOp : Shardlin_Op<"gather_bounds", [Pure]> {
  let summary = "The chunk bounds of every rank's block of a dim known only "
                "at run time";
  let description = [{
    Every rank's size of dim `along.dim` of its `input`, exchanged, as the
    `W + 1` bounds of those blocks stacked in chunk order: chunk `c` is rank
    `along.placements[c]`'s block, so `bounds[0] = 0` and `bounds[c + 1] =
    bounds[c] + size(rank along.placements[c])`. These are the chunks that a
    collective with the same spec stacks along that dim (all_gather's dim,
    all_to_all's concat dim), and the ones in which the stacked rows are
    split back (reduce_scatter, all_to_all's split dim).

    `shardlin-prepare-native` emits one for each collective that stacks a dynamic
    dim, and gives its result to that collective and to the ones that split
    those rows back (the plan executor exchanges the ranks' sizes itself and
    never sees it). It is a collective: every rank runs it. It bufferizes
    into `shardlin.buffer.gather_bounds`, one call of the C ABI's
    `shardlin_gather_bounds` (one 8-byte element from every rank).

    ```mlir
    %b = shardlin.gather_bounds %x along <dim = 0,
        placements = [0, 1, 2, 3]> : tensor<?x19xf32> -> tensor<5xi64>
    ```
  }];
  let arguments = (ins Shardlin_Tensor:$input, Shardlin_ChunkAttr:$along);
  let results = (outs Shardlin_BoundsTensor:$bounds);
  let assemblyFormat = [{
    $input `along` $along attr-dict `:` type($input) `->` type($bounds)
  }];
  let hasVerifier = 1;
}

def Shardlin_AllReduceOp : Shardlin_Op<"all_reduce", [Pure,
    AllTypesMatch<["input", "result"]>]> {
  let summary = "Sum over ranks; every rank receives the whole sum";
  let description = [{
    Computes the elementwise sum of the inputs of all `world_size` ranks and
    returns it to every rank: rank-local in and out, the same shape on every
    rank. f16 and bf16 are summed in f32 and rounded once (the lowering
    sums a K split's partial products in f32 anyway and rounds after the
    bias).

    The lowering of a K-split linear whose result is replicated ends with
    it (`layouts replicated -> replicated` or `features -> replicated`):
    every rank's partial product over its K chunk, summed.

    It maps to one collective call of the runtime (MPI_Allreduce,
    ncclAllReduce, or the threads backend's own): the plan executor runs it,
    and the native path bufferizes it into `shardlin.buffer.all_reduce`, a
    call of the C ABI's `shardlin_all_reduce`. Its traffic
    is counted as that of a reduce-scatter followed by an all-gather of the
    flattened elements' chunks by the ceil rule in rank order, which is what
    the cost model charges (`allReduceTraffic` in CostModel.h).

    ```mlir
    %s = shardlin.all_reduce %p world_size = 4 : tensor<8x11xf32>
    ```
  }];
  let arguments = (ins Shardlin_Tensor:$input,
                       ConfinedAttr<I64Attr, [IntPositive]>:$world_size);
  let results = (outs Shardlin_Tensor:$result);
  let assemblyFormat = [{
    $input `world_size` `=` $world_size attr-dict `:` type($input)
  }];
}

//===----------------------------------------------------------------------===//
// Local compute.
//===----------------------------------------------------------------------===//

def Shardlin_GemmOp : Shardlin_Op<"gemm", [Pure]> {
  let summary = "Matrix product with transpose flags and a fused bias";
  let description = [{
    `result = op(lhs) * op(rhs) (+ bias)`, where `op(X)` is `X^T` when the
    matching `transpose_*` flag is set. All operands are rank-2 (bias rank-1,
    added to every row) and row-major; transposes are BLAS flags, never
    materialized. The contraction dim may be rank-dependent (`?`) and even 0,
    giving `bias` (or zeros). Maps to one BLAS/cuBLAS call.

    Element types: `lhs`, `rhs` and `bias` share one; the result has it too,
    or is f32 when it is f16 or bf16 and there is no bias. f16 and bf16 are
    always accumulated in f32; an f32 result keeps that accumulation
    unrounded, which is how a K-split linear's partial products are kept
    until the reduction over ranks (whose sum would overflow f16 or lose
    bf16's few bits if each rank's partial sum were rounded).

    ```mlir
    %p = shardlin.gemm %xs, %a transpose_rhs
        : (tensor<20x?xf32>, tensor<11x?xf32>) -> tensor<20x11xf32>
    %q = shardlin.gemm %g, %a bias %b transpose_rhs
        : (tensor<20x19xf32>, tensor<?x19xf32>, tensor<?xf32>) -> tensor<20x?xf32>
    %h = shardlin.gemm %xs16, %a16 transpose_rhs
        : (tensor<20x?xf16>, tensor<11x?xf16>) -> tensor<20x11xf32>
    ```
  }];
  let arguments = (ins Shardlin_Tensor:$lhs, Shardlin_Tensor:$rhs,
                       Optional<Shardlin_Tensor>:$bias,
                       UnitAttr:$transpose_lhs, UnitAttr:$transpose_rhs);
  let results = (outs Shardlin_Tensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs (`bias` $bias^)? (`transpose_lhs` $transpose_lhs^)?
    (`transpose_rhs` $transpose_rhs^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Shardlin_BiasAddOp : Shardlin_Op<"bias_add", [Pure,
    AllTypesMatch<["input", "result"]>]> {
  let summary = "Add a vector to every row";
  let description = [{
    `result[..., j] = input[..., j] + bias[j]`: the bias (rank 1) is added
    along the last dim of the input.

    ```mlir
    %z = shardlin.bias_add %y, %b : tensor<5x11xf32>, tensor<11xf32>
    ```
  }];
  let arguments = (ins Shardlin_Tensor:$input, Shardlin_Tensor:$bias);
  let results = (outs Shardlin_Tensor:$result);
  let assemblyFormat = "$input `,` $bias attr-dict `:` type($input) `,` type($bias)";
  let hasVerifier = 1;
}

def Shardlin_ConvertOp : Shardlin_Op<"convert", [Pure,
    AllShapesMatch<["input", "result"]>]> {
  let summary = "The elements of a tensor in another float type";
  let description = [{
    Converts every element from f32 to f16 or bf16, rounding to nearest even
    (overflow gives infinity, as in IEEE arithmetic), or from f16 or bf16 to
    f32, exactly. Other pairs are rejected. The shapes are equal.

    The lowering of a K-split (row-wise) f16/bf16 linear emits it: the
    partial products are produced, reduced and biased in f32 and rounded
    once to the result's type here (the bias is widened by a convert first).

    ```mlir
    %y = shardlin.convert %s : tensor<5x11xf32> -> tensor<5x11xf16>
    ```
  }];
  let arguments = (ins Shardlin_Tensor:$input);
  let results = (outs Shardlin_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

include "shardlin/Dialect/Shardlin/IR/ShardlinBufferOps.td"
include "shardlin/Dialect/Shardlin/IR/ShardlinGradOps.td"
include "shardlin/Dialect/Shardlin/IR/ShardlinAttentionOps.td"

#endif // SHARDLIN_OPS_TD
