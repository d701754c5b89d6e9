//===- BlockTesting.h - Transformer blocks for tests and the bench -*- C++ -*-===//
//
// One description of a tensor-parallel block (an MLP, linear -> activation
// -> linear, or a SwiGLU, down(silu(gate(x)) * up(x)), optionally with a
// residual add and chained), its MLIR text in the forms producers write
// (arith/math ops on tensors, one linalg.generic, linalg.elementwise named
// ops), its random data and its float64 reference with an error bound. The
// end-to-end tests and the benchmark share it, as they share LinearTesting.h.
//
// Shapes: x is (batch..., H) on every rank (each rank its own rows); the
// first linear(s) have weights (F, H) split on dim 0 (col-wise), the last
// one (H, F) split on dim 1 (row-wise).
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_BENCH_TESTING_BLOCKTESTING_H
#define SHARDLIN_BENCH_TESTING_BLOCKTESTING_H

#include "LinearTesting.h"
#include "shardlin/runtime/backends/Registry.h"
#include "shardlin/runtime/base/DType.h"
#include "shardlin/runtime/exec/Execute.h"
#include "shardlin/runtime/program/Program.h"
#include "shardlin/runtime/base/Status.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace shardlin::testkit {

enum class BlockKind { Mlp, SwiGlu };
/// The MLP's activation (a SwiGLU always uses SiLU on its gate).
enum class Activation { Relu, GeluTanh, GeluErf, Silu };
/// How the elementwise part is written.
enum class OpForm {
  /// arith and math ops on tensors, constants as dense splats.
  Arith,
  /// One linalg.generic per elementwise step, scalar constants in its body
  /// (ReLU as cmpf + select); the first bias, if any, is added inside the
  /// generic as a vector broadcast along the last dim.
  LinalgGeneric,
  /// linalg.elementwise named ops on tensor.empty inits, splat constants
  /// (ReLU as arith.cmpf + the `select` kind).
  LinalgElementwise,
};

const char *blockKindName(BlockKind k);
const char *activationName(Activation a);
const char *opFormName(OpForm f);

/// A block: ShardedSpec's placements are the col-wise weights'. With
/// dynamic batch dims the elementwise ops' tensor.empty inits take their
/// sizes from tensor.dim of the input, and splat constants become
/// linalg.fill.
struct BlockSpec : ShardedSpec {
  BlockKind kind = BlockKind::Mlp;
  Activation activation = Activation::GeluTanh;
  OpForm form = OpForm::Arith;
  int64_t h = 8;
  int64_t f = 20;
  /// The row-wise weight's placements; empty = the same as `placements`.
  std::vector<int64_t> rowPlacements;
  /// Bias of the col-wise linear(s) and of the row-wise one.
  bool colBias = true;
  bool rowBias = true;
  /// y = x + block(x).
  bool residual = false;
  /// Blocks chained one after the other (each with its own weights).
  int blocks = 1;
  /// An MLP's activation applied this many times in a row (a long
  /// elementwise chain between its two linears: GELU-tanh is 9 ops, so 8
  /// give a chain of 72 and 17 one of 153).
  int repeat = 1;
  /// The pass's fuse-blocks option (false: each linear lowered alone).
  bool fuse = true;

  const std::vector<int64_t> &rowWeightPlacements() const {
    return rowPlacements.empty() ? placements : rowPlacements;
  }
  /// The input's type (rt::kDynamic for dynamic dims), and rank r's.
  std::vector<int64_t> inputShape() const { return shapeOf(-1, h); }
  std::vector<int64_t> inputShapeOf(int rank) const { return shapeOf(rank, h); }
  /// Col-wise weights per block (1 for an MLP, 2 for a SwiGLU).
  int colLinears() const { return kind == BlockKind::SwiGlu ? 2 : 1; }
  /// A readable, unique gtest-safe name.
  std::string name() const;
};

/// One argument of the block's function, in order.
struct BlockArgument {
  enum class Role { Input, ColWeight, ColBias, RowWeight, RowBias } role;
  int block = 0;
  /// For a SwiGLU's col-wise weights and biases: 0 gate, 1 up.
  int which = 0;
  std::vector<int64_t> shape;
  /// Sharded weights: dim and placements.
  bool sharded = false;
  int64_t dim = 0;
  std::vector<int64_t> placements;
};
std::vector<BlockArgument> blockArguments(const BlockSpec &spec);
/// The index in `args` of the argument of that role, block and `which`; -1
/// if there is none.
int findBlockArgument(const std::vector<BlockArgument> &args,
                      BlockArgument::Role role, int block, int which);

std::string blockMlir(const BlockSpec &spec);

/// Compiles the block (lowering with spec.strategy) into a Program; errors
/// carry the diagnostics and the MLIR text.
rt::Status compileBlock(const BlockSpec &spec, rt::Program &out);

/// Random data: every global argument (weights whole, one input per rank),
/// exactly representable in the dtype, as doubles and as dtype bytes.
struct BlockData {
  using Tensor = HostTensor;
  /// Indexed like blockArguments(); for Role::Input, unused (see inputs).
  std::vector<Tensor> args;
  /// One per rank.
  std::vector<Tensor> inputs;
};
BlockData makeBlockData(const BlockSpec &spec, uint64_t seed = 1);

/// The float64 reference of rank `rank`'s output and, per element, the
/// magnitude its rounding errors scale with (the sums of absolute terms,
/// carried through the activation and the second GEMM).
using BlockReference = Reference;
BlockReference blockReference(const BlockSpec &spec, const BlockData &data,
                              int rank);

/// The bound on |y - ref| / scale for the dtype and W (BlockTesting.cpp
/// says why).
double blockErrorBound(const BlockSpec &spec);

/// Compares `output` (dtype bytes of the rank's result) with the reference;
/// returns the failures and appends up to 5 lines on them to `report`.
int64_t checkBlockOutput(const BlockSpec &spec, const BlockData &data,
                         int rank, const std::vector<uint8_t> &output,
                         std::string &report);

/// The end-to-end suite of blocks: every activation and op form, MLP and
/// SwiGLU, W = 1..8 with identity, rotated and scrambled placements, uneven
/// and empty chunks, every dtype, residuals and two chained blocks, 1-D to
/// 3-D inputs, the two weights placed differently, unfused lowerings and
/// every strategy. The threads suite (BlocksEndToEndTest.cpp) and the GPU
/// machine's suite (WriteBlockSuite.cpp) run the same list.
std::vector<BlockSpec> blockSuite();

/// Whether --lower-sharded-linear fuses each block of `spec`
/// (docs/lowering.md, "Blocks"): its weights' chunks match (the row-wise
/// weight's placements, given or not, equal the col-wise ones), its chain reads
/// no broadcast vector (the generic form adds the first bias by broadcast),
/// W > 1, and moving activations is forced or estimated cheaper than the
/// separate lowerings.
bool blockIsFused(const BlockSpec &spec);

/// The bytes each rank sends in one run of `spec`'s program, from the cost
/// model the pass decides with: the fused block's figure, or each linear's
/// under its forced or chosen strategy; times the number of blocks.
std::vector<uint64_t> expectedBlockBytes(const BlockSpec &spec);

/// Runs the compiled block through rt::runProgram with `options` (its
/// backend and W): each rank's arguments are its input and its chunks of
/// the weights, copied to the rank's device; outputs[r] receives rank r's
/// result bytes for the ranks this process runs (all of them for threads),
/// starting from NaN so that unwritten elements fail the check. `ranks`
/// receives every rank's outcome and traffic. `run`, if set, becomes the
/// ranks' RankCallbacks::run (the bench times the bound plan with it); the
/// outputs then hold the result of its last execution. With dynamic batch
/// dims each rank's input has spec.inputShapeOf(r); `plans`, if given,
/// keeps the plans for later runs (RankCallbacks::plans). For a program the
/// JIT compiled (JitTesting.h), `executor` is its executors.
rt::Status runBlock(const rt::Program &program, const BlockSpec &spec,
                    const BlockData &data, const rt::RunOptions &options,
                    std::vector<std::vector<uint8_t>> &outputs,
                    std::vector<rt::RankResult> &ranks,
                    const std::function<rt::Status(rt::RankRun &)> &run = {},
                    rt::PlanCache *plans = nullptr,
                    const rt::RankCallbacks::MakeExecutor &executor = {});

/// One run of a block with dynamic batch dims at given per-rank batch
/// sizes (runBlockAt): the spec run, its data and runBlock's results.
struct BlockBatchRun {
  BlockSpec spec;
  BlockData data;
  std::vector<std::vector<uint8_t>> outputs;
  std::vector<rt::RankResult> ranks;
};
/// Runs the compiled `program` of `base` with each rank's batch dims
/// `rankBatch` (out.spec: base with that rankBatch) on
/// makeBlockData(out.spec, seed), through runBlock with `options`, the
/// plans kept in `plans`.
rt::Status runBlockAt(const rt::Program &program, const BlockSpec &base,
                      const std::vector<std::vector<int64_t>> &rankBatch,
                      uint64_t seed, const rt::RunOptions &options,
                      rt::PlanCache &plans, BlockBatchRun &out);

} // namespace shardlin::testkit

#endif // SHARDLIN_BENCH_TESTING_BLOCKTESTING_H
