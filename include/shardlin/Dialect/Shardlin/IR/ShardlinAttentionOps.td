//===- ShardlinAttentionOps.td - attention and rotary ops --*- tablegen -*-===//
//
// Included from ShardlinOps.td: the per-head ops of a transformer layer's
// attention sub-block (docs/attention.md).
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_ATTENTION_OPS_TD
#define SHARDLIN_ATTENTION_OPS_TD

def Shardlin_AttentionOp : Shardlin_Op<"attention", [Pure,
    AllTypesMatch<["q", "result"]>]> {
  let summary = "Causal scaled-dot-product attention per head, with GQA";
  let description = [{
    `%o = shardlin.attention %q, %k, %v [mask %m] {head_dim = D, causal,
    scale = s}` on `q` of shape `[B, S, Hq * D]` (or `[S, Hq * D]`) and `k`,
    `v` of shape `[B, S, Hkv * D]`: for every sequence b, every query head h
    (features [h * D, (h + 1) * D)) and kv head `h / g` (g = Hq / Hkv, the
    GQA group; g = Hq is MQA):

        scores[i, j] = s * <q[b, i, h], k[b, j, h / g]> (+ mask[i, j])
                       (j > i masked out when `causal`)
        o[b, i, h]   = sum_j softmax_j(scores[i, :]) * v[b, j, h / g]

    The softmax is computed in f32 (f64 for f64 operands), whatever the
    element type; the result has q's type. `scale` defaults to
    1 / sqrt(head_dim). The optional additive `mask` is `[S, S]`.

    An activation is the rank's rows; the rows of a rank are its own whole
    sequences, so the op is the same on each rank's rows as on all of them:
    it needs no communication.

    **Global form** (no head tables): Hq * D and Hkv * D are static
    multiples of D and Hq a multiple of Hkv. `group`, if given, must be
    Hq / Hkv.

    **Rank-local form** (what `--lower-sharded-linear` emits for an
    attention block): `q_heads` and `kv_heads` are W pairs [begin, end) of
    GLOBAL head indices, one pair per rank, and `group` = g is given. Rank
    r's q holds the query heads [q_heads[2r], q_heads[2r+1]) and its k and v
    the kv heads [kv_heads[2r], kv_heads[2r+1]); every query head's kv head
    h / g is among them. The query head ranges partition [0, Hq) in rank
    order; the kv ranges may overlap (GQA with more ranks than kv heads
    replicates kv heads). Feature dims are `?` unless every rank holds as
    many heads.

    ```mlir
    %o = shardlin.attention %q, %k, %v {head_dim = 4 : i64, causal}
        : tensor<2x8x48xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32> -> tensor<2x8x48xf32>
    ```
  }];
  let arguments = (ins Shardlin_Tensor:$q, Shardlin_Tensor:$k,
                       Shardlin_Tensor:$v, Optional<Shardlin_Tensor>:$mask,
                       ConfinedAttr<I64Attr, [IntPositive]>:$head_dim,
                       OptionalAttr<F64Attr>:$scale, UnitAttr:$causal,
                       OptionalAttr<ConfinedAttr<I64Attr, [IntPositive]>>:$group,
                       OptionalAttr<DenseI64ArrayAttr>:$q_heads,
                       OptionalAttr<DenseI64ArrayAttr>:$kv_heads);
  let results = (outs Shardlin_Tensor:$result);
  let assemblyFormat = [{
    $q `,` $k `,` $v (`mask` $mask^)? attr-dict `:` type($q) `,` type($k) `,`
    type($v) (`,` type($mask)^)? `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The scale of the scores: `scale`, or 1 / sqrt(head_dim).
    double getScaleOrDefault();
    /// Whether the op carries per-rank head tables (the rank-local form).
    bool isRankLocal() { return getQHeads().has_value(); }
  }];
}

def Shardlin_RopeOp : Shardlin_Op<"rope", [Pure,
    AllTypesMatch<["x", "result"]>]> {
  let summary = "Rotary position embedding per head (rotate-half)";
  let description = [{
    `%y = shardlin.rope %x, %cos, %sin {head_dim = D}` on `x` of shape
    `[B, S, H * D]` (or `[S, H * D]`) with `cos`, `sin` of shape `[S, D/2]`:
    in each head, the pairs (i, i + D/2) for i < D/2 rotate by the angle of
    position s (the rotate-half convention of Llama / GPT-NeoX):

        y1 = x1 * cos[s, i] - x2 * sin[s, i]
        y2 = x2 * cos[s, i] + x1 * sin[s, i]

    With `inverse`, the rotation is by the opposite angle (sin negated):
    the op's own adjoint, which the backward uses. D is even. The last dim
    of x is a multiple of D, or `?` (a rank's chunk of whole heads).

    ```mlir
    %y = shardlin.rope %x, %cos, %sin {head_dim = 4 : i64}
        : tensor<2x8x48xf32>, tensor<8x2xf32>, tensor<8x2xf32> -> tensor<2x8x48xf32>
    ```
  }];
  let arguments = (ins Shardlin_Tensor:$x, Shardlin_Tensor:$cos,
                       Shardlin_Tensor:$sin,
                       ConfinedAttr<I64Attr, [IntPositive]>:$head_dim,
                       UnitAttr:$inverse);
  let results = (outs Shardlin_Tensor:$result);
  let assemblyFormat = [{
    $x `,` $cos `,` $sin attr-dict `:` type($x) `,` type($cos) `,` type($sin)
    `->` type($result)
  }];
  let hasVerifier = 1;
}

def Shardlin_LocalSliceOp : Shardlin_Op<"local_slice", [Pure]> {
  let summary = "A per-rank range of one dim of a replicated tensor";
  let description = [{
    `%s = shardlin.local_slice %t dim = d ranges = [b0, e0, ..., b_(W-1),
    e_(W-1)]` gives rank r the elements [b_r, e_r) of dim `d` of `t`, a
    tensor every rank holds whole (replicated). Unlike `local_chunk`, the
    ranges may overlap and need not cover the dim: the lowering of an
    attention block with more ranks than kv heads slices each rank's kv
    heads [kb_r * D, ke_r * D) from a replicated K or V weight, and
    neighbouring ranks share a kv head (docs/attention.md).

    The dim `d` of `t` is static; the result's dim `d` is e_r - b_r, static
    only if every range has the same size.

    ```mlir
    %kr = shardlin.local_slice %wk dim = 0 ranges = [0, 4, 0, 8, 4, 8]
        : tensor<8x16xf32> -> tensor<?x16xf32>
    ```
  }];
  let arguments = (ins Shardlin_Tensor:$source,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$dim,
                       DenseI64ArrayAttr:$ranges);
  let results = (outs Shardlin_Tensor:$result);
  let assemblyFormat = [{
    $source `dim` `=` $dim `ranges` `=` $ranges attr-dict `:` type($source)
    `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The number of ranks: one pair of `ranges` each.
    int64_t getNumRanks() { return getRanges().size() / 2; }
  }];
}

def Shardlin_LocalPlaceOp : Shardlin_Op<"local_place", [Pure]> {
  let summary = "A per-rank range placed into a zero tensor of the full size";
  let description = [{
    `%t = shardlin.local_place %s dim = d ranges = [b0, e0, ..., b_(W-1),
    e_(W-1)]` is, on rank r, the tensor of the result's type that holds `s`
    at [b_r, e_r) of dim `d` and zeros elsewhere: the adjoint of
    `local_slice` with the same `dim` and `ranges`. The backward of a
    `local_slice` of a replicated K or V weight places each rank's gradient
    rows so, and the all_reduce of the replicated weight's gradient sums the
    ranks' parts (docs/attention.md, "Backward"). Each element is a copy or
    a zero: an inf or NaN of `s` stays in its own element.

    The result's dim `d` is static; the operand's dim `d` is e_r - b_r,
    static only if every range has the same size (as `local_slice`'s
    result); the other dims are the same.

    ```mlir
    %dk = shardlin.local_place %g dim = 0 ranges = [0, 4, 0, 8, 4, 8]
        : tensor<?x16xf32> -> tensor<8x16xf32>
    ```
  }];
  let arguments = (ins Shardlin_Tensor:$source,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$dim,
                       DenseI64ArrayAttr:$ranges);
  let results = (outs Shardlin_Tensor:$result);
  let assemblyFormat = [{
    $source `dim` `=` $dim `ranges` `=` $ranges attr-dict `:` type($source)
    `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The number of ranks: one pair of `ranges` each.
    int64_t getNumRanks() { return getRanges().size() / 2; }
  }];
}

#endif // SHARDLIN_ATTENTION_OPS_TD
