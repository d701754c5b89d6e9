// Entries that mix a sharded linear with upstream ops the plan executor does
// not run; shardlin-run --jit compiles them (--entry picks one). The linear:
// W = 3, K = 9 split in chunks 3, 3, 3 held by ranks 2, 0, 1; x is 4 x 9 on
// each rank, y = x A^T + b is 4 x 6. jit_upstream.py computes every entry's
// float64 reference.

// softmax over the rows of y, log1p of it where y > 0, y elsewhere.
func.func @softmax_select(%x: tensor<4x9xf32>,
    %w: !shardlin.sharded<tensor<6x9xf32>, #shardlin.chunk<dim = 1, placements = [2, 0, 1]>>,
    %b: tensor<6xf32>) -> tensor<4x6xf32> {
  %y = shardlin.linear %x, %w, %b : (tensor<4x9xf32>, !shardlin.sharded<tensor<6x9xf32>, #shardlin.chunk<dim = 1, placements = [2, 0, 1]>>, tensor<6xf32>) -> tensor<4x6xf32>
  %e = tensor.empty() : tensor<4x6xf32>
  %s = linalg.softmax dimension(1) ins(%y : tensor<4x6xf32>) outs(%e : tensor<4x6xf32>) -> tensor<4x6xf32>
  %l = math.log1p %s : tensor<4x6xf32>
  %zero = arith.constant dense<0.0> : tensor<4x6xf32>
  %pos = arith.cmpf ogt, %y, %zero : tensor<4x6xf32>
  %sel = arith.select %pos, %l, %y : tensor<4x6xi1>, tensor<4x6xf32>
  return %sel : tensor<4x6xf32>
}

// y times a rank-local 6 x 6 matrix m (linalg.matmul), then three rounds of
// r = tanh(r) + y (scf.for carrying the tensor).
func.func @matmul_loop(%x: tensor<4x9xf32>,
    %w: !shardlin.sharded<tensor<6x9xf32>, #shardlin.chunk<dim = 1, placements = [2, 0, 1]>>,
    %b: tensor<6xf32>, %m: tensor<6x6xf32>) -> tensor<4x6xf32> {
  %y = shardlin.linear %x, %w, %b : (tensor<4x9xf32>, !shardlin.sharded<tensor<6x9xf32>, #shardlin.chunk<dim = 1, placements = [2, 0, 1]>>, tensor<6xf32>) -> tensor<4x6xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x6xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4x6xf32>) -> tensor<4x6xf32>
  %mm = linalg.matmul ins(%y, %m : tensor<4x6xf32>, tensor<6x6xf32>) outs(%f : tensor<4x6xf32>) -> tensor<4x6xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%acc = %mm) -> tensor<4x6xf32> {
    %t = math.tanh %acc : tensor<4x6xf32>
    %a = arith.addf %t, %y : tensor<4x6xf32>
    scf.yield %a : tensor<4x6xf32>
  }
  return %r : tensor<4x6xf32>
}

// No shardlin op at all (any number of ranks): log1p(|a m|) in f64, each
// rank with its own a.
func.func @local_f64(%a: tensor<3x5xf64>, %m: tensor<5x4xf64>) -> tensor<3x4xf64> {
  %z = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<3x4xf64>
  %f = linalg.fill ins(%z : f64) outs(%e : tensor<3x4xf64>) -> tensor<3x4xf64>
  %mm = linalg.matmul ins(%a, %m : tensor<3x5xf64>, tensor<5x4xf64>) outs(%f : tensor<3x4xf64>) -> tensor<3x4xf64>
  %abs = math.absf %mm : tensor<3x4xf64>
  %l = math.log1p %abs : tensor<3x4xf64>
  return %l : tensor<3x4xf64>
}

// The linear's result and the rank's chunk of its columns (4 x 2, a
// strided view the compiled code copies out with memrefCopy): two results.
func.func @with_chunk(%x: tensor<4x9xf32>,
    %w: !shardlin.sharded<tensor<6x9xf32>, #shardlin.chunk<dim = 1, placements = [2, 0, 1]>>,
    %b: tensor<6xf32>) -> (tensor<4x6xf32>, tensor<4x2xf32>) {
  %y = shardlin.linear %x, %w, %b : (tensor<4x9xf32>, !shardlin.sharded<tensor<6x9xf32>, #shardlin.chunk<dim = 1, placements = [2, 0, 1]>>, tensor<6xf32>) -> tensor<4x6xf32>
  %c = shardlin.local_chunk %y along <dim = 1, placements = [2, 0, 1]> : tensor<4x6xf32> -> tensor<4x2xf32>
  return %y, %c : tensor<4x6xf32>, tensor<4x2xf32>
}
