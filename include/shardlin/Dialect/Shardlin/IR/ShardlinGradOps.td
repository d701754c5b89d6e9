//===- ShardlinGradOps.td - ops of backward functions ------*- tablegen -*-===//
//
// The ops that the backward functions of --shardlin-generate-backward need
// beyond the lowered forward ops (docs/training.md): the sum of a matrix's
// rows (a bias's gradient) and the gradients of attention
// (docs/attention.md, "The backward"). Included by ShardlinOps.td (one generated op
// list); the all-reduce of a replicated value's gradient is
// shardlin.all_reduce, with the other collectives, and a sharded weight's
// gradient is returned through shardlin.from_local.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_GRAD_OPS_TD
#define SHARDLIN_GRAD_OPS_TD

def Shardlin_SumRowsOp : Shardlin_Op<"sum_rows", [Pure]> {
  let summary = "The sum of a matrix's rows: result[j] = sum over i of input[i, j]";
  let description = [{
    Sums a rank-2 tensor over its rows (dim 0): `result[j] = sum_i
    input[i, j]`, a rank-1 tensor of the input's column count. With 0 rows
    the result is zeros. It is rank-local (no communication).

    Element types: the result has the input's, or is f32 when the input is
    f16 or bf16. f16 and bf16 are summed in f32; an f16/bf16 result is
    rounded once, an f32 result keeps the sum unrounded, which is how a
    bias's gradient stays unrounded until its sum over ranks
    (`shardlin.all_reduce`, or `shardlin.all_gather` of chunks) as a K
    split's partial products do.

    A linear's bias gradient is the sum of the rows of the result's
    gradient (docs/training.md); the backward of a bias added along the last
    dim of an N-D tensor collapses the tensor to rows first.

    ```mlir
    %db = shardlin.sum_rows %dy : tensor<20x11xf32> -> tensor<11xf32>
    %dh = shardlin.sum_rows %g : tensor<?x?xbf16> -> tensor<?xf32>
    ```
  }];
  let arguments = (ins Shardlin_Tensor:$input);
  let results = (outs Shardlin_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Shardlin_AttentionGradOp : Shardlin_Op<"attention_grad", [Pure]> {
  let summary = "One gradient (dq, dk or dv) of shardlin.attention";
  let description = [{
    `%d = shardlin.attention_grad %q, %k, %v, %dout [mask %m] {wrt = "q"|"k"|"v",
    head_dim = D, causal, scale = s[, group = g, q_heads = ..., kv_heads =
    ...]}`: the gradient with respect to `q`, `k` or `v` (`wrt`) of the
    loss `<dout, shardlin.attention(q, k, v [mask m])>` with the same
    attributes, i.e. for o = attention(q, k, v) and its gradient `dout`
    (q's type):

        P = softmax(s * q k^T (+ mask), causal)    per head, GQA mapping
        dv[j, h/g] += sum_i P[i, j] dout[i, h]
        dP         = dout v^T,   dS = P * (dP - rowsum(dP * P))
        dq[i, h]   = s * sum_j dS[i, j] k[j, h/g]
        dk[j, h/g] += s * sum_i dS[i, j] q[i, h]

    The softmax is recomputed from q and k (nothing of the forward is
    kept), in f32 (f64 for f64). dk and dv of a kv head sum the
    contributions of every query head of its group that the rank holds;
    the result has q's type for `wrt = "q"` and k's otherwise. The mask is
    an input only (an additive constant: not differentiated).

    The forms and their checks are those of `shardlin.attention` (global,
    or rank-local with `q_heads`, `kv_heads` and `group`); `dout` has q's
    type. It is rank-local: a rank whose kv heads are also another rank's
    (GQA with more ranks than kv heads) gets only its own query heads'
    part of their dk and dv, and the backward sums the parts over the
    ranks through the weights' gradients (docs/attention.md, "The
    backward"). The runtime runs it as `attention_grad` (wrt 0, 1, 2).

    ```mlir
    %dq = shardlin.attention_grad %q, %k, %v, %do {wrt = "q", head_dim = 4 : i64, causal}
        : tensor<2x8x48xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x48xf32> -> tensor<2x8x48xf32>
    ```
  }];
  let arguments = (ins Shardlin_Tensor:$q, Shardlin_Tensor:$k,
                       Shardlin_Tensor:$v, Shardlin_Tensor:$dout,
                       Optional<Shardlin_Tensor>:$mask,
                       StrAttr:$wrt,
                       ConfinedAttr<I64Attr, [IntPositive]>:$head_dim,
                       OptionalAttr<F64Attr>:$scale, UnitAttr:$causal,
                       OptionalAttr<ConfinedAttr<I64Attr, [IntPositive]>>:$group,
                       OptionalAttr<DenseI64ArrayAttr>:$q_heads,
                       OptionalAttr<DenseI64ArrayAttr>:$kv_heads);
  let results = (outs Shardlin_Tensor:$result);
  let assemblyFormat = [{
    $q `,` $k `,` $v `,` $dout (`mask` $mask^)? attr-dict `:` type($q) `,`
    type($k) `,` type($v) `,` type($dout) (`,` type($mask)^)? `->`
    type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The scale of the scores: `scale`, or 1 / sqrt(head_dim).
    double getScaleOrDefault();
    /// Whether the op carries per-rank head tables (the rank-local form).
    bool isRankLocal() { return getQHeads().has_value(); }
    /// 0 for dq, 1 for dk, 2 for dv (the runtime's `wrt`).
    int64_t getWrtIndex() {
      return getWrt() == "q" ? 0 : getWrt() == "k" ? 1 : 2;
    }
  }];
}

#endif // SHARDLIN_GRAD_OPS_TD
