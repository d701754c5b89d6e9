//===- ShardlinGradOps.td - ops of backward functions ------*- tablegen -*-===//
//
// The op that the backward functions of --shardlin-generate-backward need
// beyond the lowered forward ops (docs/training.md): the sum of a matrix's
// rows (a bias's gradient). Included by ShardlinOps.td (one generated op
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

#endif // SHARDLIN_GRAD_OPS_TD
