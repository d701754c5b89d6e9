// RUN: shardlin-opt %s --shardlin-lower-to-llvm | FileCheck %s
// RUN: shardlin-opt %s --shardlin-lower-to-llvm | mlir-translate --mlir-to-llvmir | FileCheck %s --check-prefix=LLVMIR
// RUN: shardlin-opt %s --lower-sharded-linear=strategy=activations --shardlin-lower-to-llvm | mlir-translate --mlir-to-llvmir | FileCheck %s --check-prefix=ACT
// RUN: shardlin-opt %s --lower-sharded-linear=strategy=gather-weight --shardlin-lower-to-llvm | mlir-translate --mlir-to-llvmir | FileCheck %s --check-prefix=GATHER

// --shardlin-lower-to-llvm on a module that mixes shardlin linears with the
// upstream tensor ops a model has around them: its output is the LLVM
// dialect only, and mlir-translate turns it into LLVM IR.

// CHECK-NOT: shardlin.
// CHECK-NOT: memref.
// CHECK-NOT: linalg.
// CHECK-NOT: func.func
// CHECK-NOT: builtin.unrealized_conversion_cast

// The placement lists, the assertion messages and the ABI's declarations
// come first.
// LLVMIR-DAG: @__shardlin_placements_{{[0-9]+}} = private constant [3 x i64] [i64 2, i64 0, i64 1]
// LLVMIR-DAG: @assert_msg{{.*}} = private constant {{.*}} c"shardlin: @mixed was compiled for 3 ranks but the calling thread's context has another world size\00"
// LLVMIR-DAG: declare ptr @shardlin_thread_context()
// LLVMIR-DAG: declare i32 @shardlin_gemm(ptr, i32, ptr, ptr, ptr, i32, ptr, i32, i32)

// A linear, then softmax, log1p and a select on its rows, a matmul with a
// rank-local matrix and a loop.
// LLVMIR-LABEL: define { ptr, ptr, i64, [2 x i64], [2 x i64] } @mixed(
// LLVMIR: call ptr @shardlin_thread_context()
// LLVMIR: call i32 @shardlin_context_world_size(ptr
// LLVMIR: call i32 @shardlin_gemm(ptr
// LLVMIR: call float @llvm.exp.f32
// LLVMIR: call float @llvm.log.f32
// LLVMIR: fcmp ogt float
// LLVMIR: select i1
// LLVMIR: fmul float
// LLVMIR: call float @llvm.tanh.f32
// LLVMIR: call void @free(ptr
// The entry a launcher calls: the result descriptor, then the arguments'
// descriptors by pointer, the index by value.
// LLVMIR-LABEL: define void @_mlir_ciface_mixed(ptr %0, ptr %1, ptr %2, ptr %3, ptr %4, i64 %5)
// ACT-LABEL: define {{.*}} @mixed(
// ACT: call i32 @shardlin_all_to_all(ptr
// ACT: call i32 @shardlin_gemm(ptr
// ACT: call i32 @shardlin_reduce_scatter(ptr
// ACT: call i32 @shardlin_bias_add(ptr
// GATHER-LABEL: define {{.*}} @mixed(
// GATHER: call i32 @shardlin_all_gather(ptr
// GATHER: call i32 @shardlin_gemm(ptr
func.func @mixed(%x: tensor<4x9xf32>,
    %w: !shardlin.sharded<tensor<6x9xf32>, #shardlin.chunk<dim = 1, placements = [2, 0, 1]>>,
    %b: tensor<6xf32>, %m: tensor<6x6xf32>, %n: index) -> tensor<4x6xf32> {
  %y = shardlin.linear %x, %w, %b : (tensor<4x9xf32>, !shardlin.sharded<tensor<6x9xf32>, #shardlin.chunk<dim = 1, placements = [2, 0, 1]>>, tensor<6xf32>) -> tensor<4x6xf32>
  %e = tensor.empty() : tensor<4x6xf32>
  %s = linalg.softmax dimension(1) ins(%y : tensor<4x6xf32>) outs(%e : tensor<4x6xf32>) -> tensor<4x6xf32>
  %l = math.log1p %s : tensor<4x6xf32>
  %zero = arith.constant dense<0.0> : tensor<4x6xf32>
  %pos = arith.cmpf ogt, %y, %zero : tensor<4x6xf32>
  %sel = arith.select %pos, %l, %y : tensor<4x6xi1>, tensor<4x6xf32>
  %z = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<4x6xf32>
  %f = linalg.fill ins(%z : f32) outs(%e2 : tensor<4x6xf32>) -> tensor<4x6xf32>
  %mm = linalg.matmul ins(%sel, %m : tensor<4x6xf32>, tensor<6x6xf32>) outs(%f : tensor<4x6xf32>) -> tensor<4x6xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %mm) -> tensor<4x6xf32> {
    %t = math.tanh %acc : tensor<4x6xf32>
    %a = arith.addf %t, %y : tensor<4x6xf32>
    scf.yield %a : tensor<4x6xf32>
  }
  return %r : tensor<4x6xf32>
}

// f16 with a K split: f32 partial sums, reduced, biased and converted
// (moving activations), uneven chunks and a 3-D input.
// LLVMIR-LABEL: define {{.*}} @partial_sums_f16(
// ACT-LABEL: define {{.*}} @partial_sums_f16(
// ACT: call i32 @shardlin_context_rank(ptr
// ACT: call i32 @shardlin_all_to_all(ptr %{{.*}}, i32 0,
// ACT: call i32 @shardlin_gemm(ptr %{{.*}}, i32 0, ptr %{{.*}}, ptr %{{.*}}, ptr null, i32 2,
// ACT: call i32 @shardlin_reduce_scatter(ptr %{{.*}}, i32 2,
// ACT: call i32 @shardlin_convert(ptr %{{.*}}, ptr %{{.*}}, i32 0, ptr %{{.*}}, i32 2)
// ACT: call i32 @shardlin_bias_add(ptr %{{.*}}, i32 2,
// ACT: call i32 @shardlin_convert(ptr %{{.*}}, ptr %{{.*}}, i32 2, ptr %{{.*}}, i32 0)
func.func @partial_sums_f16(%x: tensor<2x3x7xf16>,
    %w: !shardlin.sharded<tensor<5x7xf16>, #shardlin.chunk<dim = 1, placements = [1, 0]>>,
    %b: tensor<5xf16>) -> tensor<2x3x5xf16> {
  %y = shardlin.linear %x, %w, %b : (tensor<2x3x7xf16>, !shardlin.sharded<tensor<5x7xf16>, #shardlin.chunk<dim = 1, placements = [1, 0]>>, tensor<5xf16>) -> tensor<2x3x5xf16>
  return %y : tensor<2x3x5xf16>
}

// A fused MLP block with GELU (erf: a libm call) on bf16 rows of a 1-D
// input, then a residual add.
// LLVMIR-LABEL: define {{.*}} @mlp_block(
// ACT-LABEL: define {{.*}} @mlp_block(
// ACT: call i32 @shardlin_all_gather(ptr %{{.*}}, i32 1,
// ACT: call i32 @shardlin_gemm(ptr
// ACT: call float @erff(float
// ACT: call i32 @shardlin_gemm(ptr
// ACT: call i32 @shardlin_reduce_scatter(ptr %{{.*}}, i32 2,
// ACT-NOT: @shardlin_all_to_all
// ACT: define {{.*}} @_mlir_ciface_mlp_block(
func.func @mlp_block(%x: tensor<4xbf16>,
    %w1: !shardlin.sharded<tensor<10x4xbf16>, #shardlin.chunk<dim = 0, placements = [2, 0, 1]>>, %b1: tensor<10xbf16>,
    %w2: !shardlin.sharded<tensor<4x10xbf16>, #shardlin.chunk<dim = 1, placements = [2, 0, 1]>>, %b2: tensor<4xbf16>) -> tensor<4xbf16> {
  %h = shardlin.linear %x, %w1, %b1 : (tensor<4xbf16>, !shardlin.sharded<tensor<10x4xbf16>, #shardlin.chunk<dim = 0, placements = [2, 0, 1]>>, tensor<10xbf16>) -> tensor<10xbf16>
  %e = tensor.empty() : tensor<10xbf16>
  %g = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%h : tensor<10xbf16>) outs(%e : tensor<10xbf16>) {
  ^bb0(%v: bf16, %o: bf16):
    %half = arith.constant 0.5 : bf16
    %one = arith.constant 1.0 : bf16
    %rs = arith.constant 0.70710678 : bf16
    %t = arith.mulf %v, %rs : bf16
    %er = math.erf %t : bf16
    %p = arith.addf %er, %one : bf16
    %q = arith.mulf %v, %p : bf16
    %r = arith.mulf %q, %half : bf16
    linalg.yield %r : bf16
  } -> tensor<10xbf16>
  %y = shardlin.linear %g, %w2, %b2 : (tensor<10xbf16>, !shardlin.sharded<tensor<4x10xbf16>, #shardlin.chunk<dim = 1, placements = [2, 0, 1]>>, tensor<4xbf16>) -> tensor<4xbf16>
  %res = arith.addf %y, %x : tensor<4xbf16>
  return %res : tensor<4xbf16>
}

// One rank: one GEMM, no collective, no world-size check beyond the
// context's; f64.
// LLVMIR-LABEL: define {{.*}} @one_rank(
// LLVMIR: call i32 @shardlin_gemm(ptr %{{.*}}, i32 3,
// LLVMIR-NOT: @shardlin_all
// LLVMIR: ret
func.func @one_rank(%x: tensor<3x4xf64>,
    %w: !shardlin.sharded<tensor<2x4xf64>, #shardlin.chunk<dim = 0, placements = [0]>>) -> tensor<3x2xf64> {
  %y = shardlin.linear %x, %w : (tensor<3x4xf64>, !shardlin.sharded<tensor<2x4xf64>, #shardlin.chunk<dim = 0, placements = [0]>>) -> tensor<3x2xf64>
  return %y : tensor<3x2xf64>
}
