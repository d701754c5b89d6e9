// A Llama-style decoder layer written in shardlin IR, tensor-parallel over
// heads that the 3 ranks do not divide evenly for K and V:
//
//   h  = x + O(attention(rope(Q(rms1(x))), rope(K(rms1(x))), V(rms1(x))))
//   y  = h + down(silu(gate(rms2(h))) * up(rms2(h)))
//
// H = 24, head_dim D = 4, Hq = 6 query heads, Hkv = 2 kv heads (GQA group
// g = 3), SwiGLU width F = 40, 3 ranks. Each rank's x is its own sequence of
// S = 8 tokens (sequence-parallel rows). Q is split in whole heads
// (`block = 4`: 2 heads a rank); with more ranks than kv heads, K and V are
// replicated (`shardlin.replicated`) and each rank's kv heads are sliced
// from them: rank 0 needs kv head 0, rank 1 (query heads 2, 3) kv heads 0
// and 1, rank 2 kv head 1. O's input features follow Q's heads.
//
// `shardlin-opt --lower-sharded-linear` lowers the attention sub-block to
// one all_gather of x, the rank's q/k/v GEMMs, rank-local rope and
// attention (head tables q_heads / kv_heads), O's GEMM and one
// reduce_scatter; the SwiGLU block to one all_gather and one
// reduce_scatter (docs/attention.md, docs/blocks.md). The norms and
// residuals stay rank-local on each rank's rows.
//
//   shardlin-opt examples/attention/layer.mlir --lower-sharded-linear

!wq = !shardlin.sharded<tensor<24x24xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2], block = 4>>
!wo = !shardlin.sharded<tensor<24x24xf32>, #shardlin.chunk<dim = 1, placements = [0, 1, 2], block = 4>>
!wg = !shardlin.sharded<tensor<40x24xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2]>>
!wd = !shardlin.sharded<tensor<24x40xf32>, #shardlin.chunk<dim = 1, placements = [0, 1, 2]>>

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0, 0)>
#col = affine_map<(d0, d1) -> (d1)>

module {
  // RMSNorm of each row: x * rsqrt(mean(x^2) + eps) * w.
  func.func private @rms_norm(%x: tensor<8x24xf32>, %w: tensor<24xf32>) -> tensor<8x24xf32> {
    %zero = arith.constant 0.0 : f32
    %n = arith.constant 24.0 : f32
    %eps = arith.constant 1.0e-5 : f32
    %e = tensor.empty() : tensor<8x24xf32>
    %e1 = tensor.empty() : tensor<8x1xf32>
    %sq = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%x : tensor<8x24xf32>) outs(%e : tensor<8x24xf32>) {
    ^bb0(%a: f32, %o: f32):
      %m = arith.mulf %a, %a : f32
      linalg.yield %m : f32
    } -> tensor<8x24xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e1 : tensor<8x1xf32>) -> tensor<8x1xf32>
    %ss = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
        ins(%sq : tensor<8x24xf32>) outs(%z : tensor<8x1xf32>) {
    ^bb0(%a: f32, %o: f32):
      %s = arith.addf %a, %o : f32
      linalg.yield %s : f32
    } -> tensor<8x1xf32>
    %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%ss : tensor<8x1xf32>) outs(%e1 : tensor<8x1xf32>) {
    ^bb0(%a: f32, %o: f32):
      %mean = arith.divf %a, %n : f32
      %v = arith.addf %mean, %eps : f32
      %q = math.rsqrt %v : f32
      linalg.yield %q : f32
    } -> tensor<8x1xf32>
    %y = linalg.generic {indexing_maps = [#id, #row, #col, #id], iterator_types = ["parallel", "parallel"]}
        ins(%x, %r, %w : tensor<8x24xf32>, tensor<8x1xf32>, tensor<24xf32>) outs(%e : tensor<8x24xf32>) {
    ^bb0(%a: f32, %b: f32, %c: f32, %o: f32):
      %t = arith.mulf %a, %b : f32
      %u = arith.mulf %t, %c : f32
      linalg.yield %u : f32
    } -> tensor<8x24xf32>
    return %y : tensor<8x24xf32>
  }

  func.func @layer(%x: tensor<8x24xf32>,
                   %n1: tensor<24xf32> {shardlin.replicated},
                   %wq: !wq,
                   %wk: tensor<8x24xf32> {shardlin.replicated},
                   %wv: tensor<8x24xf32> {shardlin.replicated},
                   %wo: !wo,
                   %cos: tensor<8x2xf32> {shardlin.replicated},
                   %sin: tensor<8x2xf32> {shardlin.replicated},
                   %n2: tensor<24xf32> {shardlin.replicated},
                   %wg: !wg, %wu: !wg, %wd: !wd) -> tensor<8x24xf32> {
    // Attention sub-block.
    %h1 = func.call @rms_norm(%x, %n1) : (tensor<8x24xf32>, tensor<24xf32>) -> tensor<8x24xf32>
    %q = shardlin.linear %h1, %wq : (tensor<8x24xf32>, !wq) -> tensor<8x24xf32>
    %k = shardlin.gemm %h1, %wk transpose_rhs : (tensor<8x24xf32>, tensor<8x24xf32>) -> tensor<8x8xf32>
    %v = shardlin.gemm %h1, %wv transpose_rhs : (tensor<8x24xf32>, tensor<8x24xf32>) -> tensor<8x8xf32>
    %qr = shardlin.rope %q, %cos, %sin {head_dim = 4 : i64} : tensor<8x24xf32>, tensor<8x2xf32>, tensor<8x2xf32> -> tensor<8x24xf32>
    %kr = shardlin.rope %k, %cos, %sin {head_dim = 4 : i64} : tensor<8x8xf32>, tensor<8x2xf32>, tensor<8x2xf32> -> tensor<8x8xf32>
    %att = shardlin.attention %qr, %kr, %v {head_dim = 4 : i64, causal} : tensor<8x24xf32>, tensor<8x8xf32>, tensor<8x8xf32> -> tensor<8x24xf32>
    %o = shardlin.linear %att, %wo : (tensor<8x24xf32>, !wo) -> tensor<8x24xf32>
    %h = arith.addf %x, %o : tensor<8x24xf32>
    // MLP sub-block (SwiGLU).
    %h2 = func.call @rms_norm(%h, %n2) : (tensor<8x24xf32>, tensor<24xf32>) -> tensor<8x24xf32>
    %g = shardlin.linear %h2, %wg : (tensor<8x24xf32>, !wg) -> tensor<8x40xf32>
    %u = shardlin.linear %h2, %wu : (tensor<8x24xf32>, !wg) -> tensor<8x40xf32>
    %one = arith.constant dense<1.0> : tensor<8x40xf32>
    %ng = arith.negf %g : tensor<8x40xf32>
    %ex = math.exp %ng : tensor<8x40xf32>
    %den = arith.addf %one, %ex : tensor<8x40xf32>
    %silu = arith.divf %g, %den : tensor<8x40xf32>
    %a = arith.mulf %silu, %u : tensor<8x40xf32>
    %d = shardlin.linear %a, %wd : (tensor<8x40xf32>, !wd) -> tensor<8x24xf32>
    %y = arith.addf %h, %d : tensor<8x24xf32>
    return %y : tensor<8x24xf32>
  }
}
