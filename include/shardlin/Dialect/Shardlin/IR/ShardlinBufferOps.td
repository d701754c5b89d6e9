//===- ShardlinBufferOps.td - shardlin ops on buffers ------*- tablegen -*-===//
//
// The bufferized forms of the collectives and the local compute ops: what
// One-Shot Bufferize turns the tensor ops into (BufferizableOpInterfaceImpl),
// and what shardlin-convert-to-llvm turns into calls of the runtime's C ABI
// (shardlin-c/Runtime.h), one call per op. Destination-passing style, in the
// manner of the mpi dialect's ops: the inputs are read, `output` is written,
// nothing is returned. Included by ShardlinOps.td (one generated op list).
//
// local_shard and local_chunk have no buffer form: a rank's shard is the
// memref its function receives (shardlin-localize-sharded), and a chunk is a
// memref.subview.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_BUFFER_OPS_TD
#define SHARDLIN_BUFFER_OPS_TD

// A strided memref of a supported element type: what the C ABI's views
// describe (any strides, any offset).
def Shardlin_MemRef : StridedMemRefOf<[Shardlin_ElementType]>;

class Shardlin_BufferOp<string mnemonic, list<Trait> traits = []>
    : Shardlin_Op<"buffer." # mnemonic, traits> {
  // The paragraph every buffer op's description ends with.
  code bufferDescription = [{

    The buffers may have any strided layout. `output` must not overlap an
    input (`bias_add` may write into its input). The op has the verifier of
    its tensor form, with `output` in the place of the result.
    `shardlin-convert-to-llvm` lowers it to one call of the runtime's C ABI
    (`shardlin-c/Runtime.h`); see docs/native.md.
  }];
}

// The collectives: one input, one output of the same element type and rank.
class Shardlin_BufferCollectiveOp<string mnemonic, list<Trait> traits = []>
    : Shardlin_BufferOp<mnemonic, !listconcat(
          [AllElementTypesMatch<["input", "output"]>,
           AllRanksMatch<["input", "output"]>], traits)> {
  dag commonArgs = (ins Arg<Shardlin_MemRef, "", [MemRead]>:$input,
                        Arg<Shardlin_MemRef, "", [MemWrite]>:$output);
  let hasVerifier = 1;
}

def Shardlin_BufferAllGatherOp : Shardlin_BufferCollectiveOp<"all_gather"> {
  let summary = "`shardlin.all_gather` into a buffer";
  let description = [{
    Writes into `output` the blocks of every rank's `input` along `along.dim`,
    chunk `c` from rank `along.placements[c]`, as `shardlin.all_gather`
    returns them. Calls `shardlin_all_gather`.

    ```mlir
    shardlin.buffer.all_gather %x into %g along <dim = 0,
        placements = [0, 1, 2, 3]> : memref<5x19xf32> into memref<20x19xf32>
    ```
  }] # bufferDescription;
  let arguments = !con(commonArgs,
      (ins Arg<Optional<Shardlin_BoundsMemRef>, "", [MemRead]>:$bounds,
           Shardlin_ChunkAttr:$along));
  let assemblyFormat = [{
    $input `into` $output `along` $along
    (`bounds` `(` $bounds^ `:` type($bounds) `)`)? attr-dict
    `:` type($input) `into` type($output)
  }];
}

def Shardlin_BufferAllToAllOp
    : Shardlin_BufferCollectiveOp<"all_to_all", [AttrSizedOperandSegments]> {
  let summary = "`shardlin.all_to_all` into a buffer";
  let description = [{
    Splits `input` along `split.dim`, exchanges the chunks and writes what
    arrives into `output` along `concat.dim`, as `shardlin.all_to_all`
    returns it. Calls `shardlin_all_to_all`.

    ```mlir
    shardlin.buffer.all_to_all %x into %xs
        split <dim = 1, placements = [2, 3, 0, 1]>
        concat <dim = 0, placements = [0, 1, 2, 3]>
        : memref<5x19xf32> into memref<20x?xf32>
    ```
  }] # bufferDescription;
  let arguments = !con(commonArgs,
      (ins Arg<Optional<Shardlin_BoundsMemRef>, "", [MemRead]>:$split_bounds,
           Arg<Optional<Shardlin_BoundsMemRef>, "", [MemRead]>:$concat_bounds,
           Shardlin_ChunkAttr:$split, Shardlin_ChunkAttr:$concat));
  let assemblyFormat = [{
    $input `into` $output `split` $split
    (`bounds` `(` $split_bounds^ `:` type($split_bounds) `)`)?
    `concat` $concat
    (`bounds` `(` $concat_bounds^ `:` type($concat_bounds) `)`)? attr-dict
    `:` type($input) `into` type($output)
  }];
}

def Shardlin_BufferReduceScatterOp
    : Shardlin_BufferCollectiveOp<"reduce_scatter"> {
  let summary = "`shardlin.reduce_scatter` into a buffer";
  let description = [{
    Writes into `output` the calling rank's chunk along `along.dim` of the sum
    over ranks of `input`, as `shardlin.reduce_scatter` returns it (f16 and
    bf16 summed in f32). Calls `shardlin_reduce_scatter`.

    ```mlir
    shardlin.buffer.reduce_scatter %p into %y along <dim = 0,
        placements = [0, 1, 2, 3]> : memref<20x11xf32> into memref<5x11xf32>
    ```
  }] # bufferDescription;
  let arguments = !con(commonArgs,
      (ins Arg<Optional<Shardlin_BoundsMemRef>, "", [MemRead]>:$bounds,
           Shardlin_ChunkAttr:$along));
  let assemblyFormat = [{
    $input `into` $output `along` $along
    (`bounds` `(` $bounds^ `:` type($bounds) `)`)? attr-dict
    `:` type($input) `into` type($output)
  }];
}

def Shardlin_BufferGatherBoundsOp : Shardlin_BufferOp<"gather_bounds"> {
  let summary = "`shardlin.gather_bounds` into a buffer";
  let description = [{
    Writes into `output` (`W + 1` i64) the chunk bounds of every rank's size
    of dim `along.dim` of its `input`, stacked in chunk order, as
    `shardlin.gather_bounds` returns them. Only `input`'s size is read.
    Calls `shardlin_gather_bounds`. A collective `bounds` operand of the
    buffer forms reads such a buffer (identity layout).

    ```mlir
    shardlin.buffer.gather_bounds %x into %b along <dim = 0,
        placements = [0, 1, 2, 3]> : memref<?x19xf32> into memref<5xi64>
    ```
  }] # bufferDescription;
  let arguments = (ins Shardlin_MemRef:$input,
                       Arg<Shardlin_BoundsMemRef, "", [MemWrite]>:$output,
                       Shardlin_ChunkAttr:$along);
  let assemblyFormat = [{
    $input `into` $output `along` $along attr-dict
    `:` type($input) `into` type($output)
  }];
  let hasVerifier = 1;
}

def Shardlin_BufferAllReduceOp
    : Shardlin_BufferCollectiveOp<"all_reduce"> {
  let summary = "`shardlin.all_reduce` into a buffer";
  let description = [{
    Writes into `output` (of `input`'s shape) the elementwise sum over the
    `world_size` ranks of `input`, on every rank, as `shardlin.all_reduce`
    returns it (f16 and bf16 summed in f32 and rounded once). Calls
    `shardlin_all_reduce`; `world_size` is checked against the calling
    thread's context at the function's entry.

    ```mlir
    shardlin.buffer.all_reduce %p into %s world_size = 4
        : memref<8x11xf32> into memref<8x11xf32>
    ```
  }] # bufferDescription;
  let arguments = !con(commonArgs,
      (ins ConfinedAttr<I64Attr, [IntPositive]>:$world_size));
  let assemblyFormat = [{
    $input `into` $output `world_size` `=` $world_size attr-dict
    `:` type($input) `into` type($output)
  }];
}

def Shardlin_BufferGemmOp : Shardlin_BufferOp<"gemm"> {
  let summary = "`shardlin.gemm` into a buffer";
  let description = [{
    `output = op(lhs) * op(rhs) (+ bias)`, with the element types and shapes
    of `shardlin.gemm` (an f32 `output` for f16 or bf16 operands without a
    bias keeps the f32 accumulation). Calls `shardlin_gemm`.

    ```mlir
    shardlin.buffer.gemm %g, %a bias %b transpose_rhs into %q
        : memref<20x19xf32>, memref<?x19xf32>,
          memref<?xf32, strided<[1], offset: ?>> into memref<20x?xf32>
    ```
  }] # bufferDescription;
  let arguments = (ins Arg<Shardlin_MemRef, "", [MemRead]>:$lhs,
                       Arg<Shardlin_MemRef, "", [MemRead]>:$rhs,
                       Arg<Optional<Shardlin_MemRef>, "", [MemRead]>:$bias,
                       Arg<Shardlin_MemRef, "", [MemWrite]>:$output,
                       UnitAttr:$transpose_lhs, UnitAttr:$transpose_rhs);
  let assemblyFormat = [{
    $lhs `,` $rhs (`bias` $bias^)? (`transpose_lhs` $transpose_lhs^)?
    (`transpose_rhs` $transpose_rhs^)? `into` $output attr-dict
    `:` type($lhs) `,` type($rhs) (`,` type($bias)^)? `into` type($output)
  }];
  let hasVerifier = 1;
}

def Shardlin_BufferBiasAddOp : Shardlin_BufferOp<"bias_add",
    [AllShapesMatch<["input", "output"]>,
     AllElementTypesMatch<["input", "output"]>]> {
  let summary = "`shardlin.bias_add` into a buffer";
  let description = [{
    `output[i, j] = input[i, j] + bias[j]` on rank-2 buffers (the
    bufferization reshapes other ranks to rows); `output` may be `input`
    itself, which is how a lowered linear adds its bias in place. Calls
    `shardlin_bias_add`.

    ```mlir
    shardlin.buffer.bias_add %y, %b into %y
        : memref<5x11xf32>, memref<11xf32> into memref<5x11xf32>
    ```
  }] # bufferDescription;
  let arguments = (ins Arg<Shardlin_MemRef, "", [MemRead]>:$input,
                       Arg<Shardlin_MemRef, "", [MemRead]>:$bias,
                       Arg<Shardlin_MemRef, "", [MemWrite]>:$output);
  let assemblyFormat = [{
    $input `,` $bias `into` $output attr-dict
    `:` type($input) `,` type($bias) `into` type($output)
  }];
  let hasVerifier = 1;
}

def Shardlin_BufferConvertOp : Shardlin_BufferOp<"convert",
    [AllShapesMatch<["input", "output"]>]> {
  let summary = "`shardlin.convert` into a buffer";
  let description = [{
    Writes `input` converted to `output`'s element type (f32 to f16 or bf16,
    rounding to nearest even, or back, exactly). Calls `shardlin_convert`.

    ```mlir
    shardlin.buffer.convert %s into %y : memref<5x11xf32> into memref<5x11xf16>
    ```
  }] # bufferDescription;
  let arguments = (ins Arg<Shardlin_MemRef, "", [MemRead]>:$input,
                       Arg<Shardlin_MemRef, "", [MemWrite]>:$output);
  let assemblyFormat = [{
    $input `into` $output attr-dict `:` type($input) `into` type($output)
  }];
  let hasVerifier = 1;
}

def Shardlin_BufferSumRowsOp : Shardlin_BufferOp<"sum_rows"> {
  let summary = "`shardlin.sum_rows` into a buffer";
  let description = [{
    Writes the column sums of the rank-2 `input` into the rank-1 `output`:
    `output[j] = sum_i input[i, j]`, each column from +0 in row order, f16
    and bf16 summed in f32; `output` has `input`'s element type, or f32
    when it is f16 or bf16. Calls `shardlin_sum_rows`.

    ```mlir
    shardlin.buffer.sum_rows %dy into %db : memref<20x11xbf16> into memref<11xf32>
    ```
  }] # bufferDescription;
  let arguments = (ins Arg<Shardlin_MemRef, "", [MemRead]>:$input,
                       Arg<Shardlin_MemRef, "", [MemWrite]>:$output);
  let assemblyFormat = [{
    $input `into` $output attr-dict `:` type($input) `into` type($output)
  }];
  let hasVerifier = 1;
}

// The attributes of shardlin.attention and attention_grad, which their
// buffer forms keep as they are (one verifier for both forms).
defvar Shardlin_AttentionAttrs = (ins
    ConfinedAttr<I64Attr, [IntPositive]>:$head_dim,
    OptionalAttr<F64Attr>:$scale, UnitAttr:$causal,
    OptionalAttr<ConfinedAttr<I64Attr, [IntPositive]>>:$group,
    OptionalAttr<DenseI64ArrayAttr>:$q_heads,
    OptionalAttr<DenseI64ArrayAttr>:$kv_heads);

def Shardlin_BufferAttentionOp : Shardlin_BufferOp<"attention"> {
  let summary = "`shardlin.attention` into a buffer";
  let description = [{
    Writes into `output` (q's shape) the attention of `q`, `k`, `v` (and
    the additive `mask`) with the attributes of `shardlin.attention`: the
    rank-local form's head tables (`q_heads`, `kv_heads`, `group`), or
    without them the global form's every head of the buffers. Calls
    `shardlin_attention` with the tables (NULL for the global form), the
    group (Hq / Hkv in the global form) and the scale (1 / sqrt(head_dim)
    by default); the runtime runs the plan executor's kernel
    (docs/attention.md).

    ```mlir
    shardlin.buffer.attention %q, %k, %v into %o {causal, head_dim = 4 : i64}
        : memref<2x8x48xf32>, memref<2x8x16xf32>, memref<2x8x16xf32>
          into memref<2x8x48xf32>
    ```
  }] # bufferDescription;
  let arguments = !con((ins Arg<Shardlin_MemRef, "", [MemRead]>:$q,
                            Arg<Shardlin_MemRef, "", [MemRead]>:$k,
                            Arg<Shardlin_MemRef, "", [MemRead]>:$v,
                            Arg<Optional<Shardlin_MemRef>, "", [MemRead]>:$mask,
                            Arg<Shardlin_MemRef, "", [MemWrite]>:$output),
                       Shardlin_AttentionAttrs);
  let assemblyFormat = [{
    $q `,` $k `,` $v (`mask` $mask^)? `into` $output attr-dict `:` type($q)
    `,` type($k) `,` type($v) (`,` type($mask)^)? `into` type($output)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The scale of the scores: `scale`, or 1 / sqrt(head_dim).
    double getScaleOrDefault();
    /// Query heads per kv head: `group`, or Hq / Hkv (the global form).
    int64_t getGroupOrDefault();
  }];
}

def Shardlin_BufferAttentionGradOp : Shardlin_BufferOp<"attention_grad"> {
  let summary = "`shardlin.attention_grad` into a buffer";
  let description = [{
    Writes into `output` (q's shape for `wrt = "q"`, k's otherwise) the
    gradient of `shardlin.attention` with respect to `wrt`, given the
    gradient `dout` of its result, as `shardlin.attention_grad` returns it.
    Calls `shardlin_attention_grad` (wrt 0, 1, 2), the plan executor's
    kernel.

    ```mlir
    shardlin.buffer.attention_grad %q, %k, %v, %do into %dk
        {causal, head_dim = 4 : i64, wrt = "k"}
        : memref<2x8x48xf32>, memref<2x8x16xf32>, memref<2x8x16xf32>,
          memref<2x8x48xf32> into memref<2x8x16xf32>
    ```
  }] # bufferDescription;
  let arguments = !con((ins Arg<Shardlin_MemRef, "", [MemRead]>:$q,
                            Arg<Shardlin_MemRef, "", [MemRead]>:$k,
                            Arg<Shardlin_MemRef, "", [MemRead]>:$v,
                            Arg<Shardlin_MemRef, "", [MemRead]>:$dout,
                            Arg<Optional<Shardlin_MemRef>, "", [MemRead]>:$mask,
                            Arg<Shardlin_MemRef, "", [MemWrite]>:$output,
                            StrAttr:$wrt),
                       Shardlin_AttentionAttrs);
  let assemblyFormat = [{
    $q `,` $k `,` $v `,` $dout (`mask` $mask^)? `into` $output attr-dict `:`
    type($q) `,` type($k) `,` type($v) `,` type($dout) (`,` type($mask)^)?
    `into` type($output)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    double getScaleOrDefault();
    int64_t getGroupOrDefault();
    /// 0 for dq, 1 for dk, 2 for dv (the C ABI's `wrt`).
    int64_t getWrtIndex() {
      return getWrt() == "q" ? 0 : getWrt() == "k" ? 1 : 2;
    }
  }];
}

def Shardlin_BufferRopeOp : Shardlin_BufferOp<"rope"> {
  let summary = "`shardlin.rope` into a buffer";
  let description = [{
    Writes into `output` (x's shape and element type) `x` rotated per head
    as `shardlin.rope` does (`inverse`: by the opposite angle). Calls
    `shardlin_rope`.

    ```mlir
    shardlin.buffer.rope %x, %cos, %sin into %y {head_dim = 4 : i64}
        : memref<2x8x48xf32>, memref<8x2xf32>, memref<8x2xf32>
          into memref<2x8x48xf32>
    ```
  }] # bufferDescription;
  let arguments = (ins Arg<Shardlin_MemRef, "", [MemRead]>:$x,
                       Arg<Shardlin_MemRef, "", [MemRead]>:$cos,
                       Arg<Shardlin_MemRef, "", [MemRead]>:$sin,
                       Arg<Shardlin_MemRef, "", [MemWrite]>:$output,
                       ConfinedAttr<I64Attr, [IntPositive]>:$head_dim,
                       UnitAttr:$inverse);
  let assemblyFormat = [{
    $x `,` $cos `,` $sin `into` $output attr-dict `:` type($x) `,` type($cos)
    `,` type($sin) `into` type($output)
  }];
  let hasVerifier = 1;
}

#endif // SHARDLIN_BUFFER_OPS_TD
