//===- Program.h - The runtime's form of a lowered shardlin program -*- C++ -*-===//
//
// A Program is the lowered SPMD function in a form the runtime executes
// without MLIR: a list of instructions over numbered values, each value with
// an element type and a shape in which rank-dependent dims are kDynamic. The
// executor translates lowered IR into a Program; a Plan (exec/Plan.h)
// resolves it for one rank. Its text form is in ProgramText.h.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_RUNTIME_PROGRAM_PROGRAM_H
#define SHARDLIN_RUNTIME_PROGRAM_PROGRAM_H

#include "shardlin/runtime/base/ChunkLayout.h"
#include "shardlin/runtime/base/Limits.h"
#include "shardlin/runtime/base/DType.h"
#include "shardlin/runtime/base/Expr.h"
#include "shardlin/runtime/base/Status.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace shardlin::rt {

/// A dim whose size depends on the rank (MLIR's `?`).
constexpr int64_t kDynamic = INT64_MIN;

struct ValueType {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
};

/// The runtime's ops. Each is described once, operands and attributes
/// included, in the op table (OpTable.h).
enum class OpCode : uint8_t {
  LocalShard,
  LocalChunk,
  AllGather,
  AllToAll,
  ReduceScatter,
  Gemm,
  BiasAdd,
  Reshape,
  Elementwise,
  Convert,
  SumRows,
  AllReduce,
  FromLocal,
  Transpose,
  Fill,
  Constant,
  ReduceLast,
  Attention,
  AttentionGrad,
  Rope,
  LocalSlice,
  LocalPlace,
};
/// One past the last OpCode: a new op goes above and renames this one's
/// operand.
constexpr size_t kNumOpCodes = static_cast<size_t>(OpCode::LocalPlace) + 1;

/// The op's mnemonic in the program text ("all_gather").
const char *opCodeName(OpCode op);

struct Instr {
  OpCode op = OpCode::Reshape;
  std::vector<int> operands;
  int result = -1;
  /// local_chunk, all_gather, reduce_scatter: the dim and chunks the op
  /// takes, gathers or scatters along (the dialect's `along`). from_local:
  /// the chunks of the sharded tensor its result is this rank's chunk of,
  /// with its bounds always explicit (they say the dim's global size).
  ChunkSpec along;
  /// all_to_all: how the input is split into the pieces sent to each rank,
  /// and how the received pieces are concatenated.
  ChunkSpec split;
  ChunkSpec concat;
  /// gemm: whether lhs and rhs are used transposed.
  bool transposeLhs = false;
  bool transposeRhs = false;
  /// elementwise: the fused chain, over the operands in order (Expr.h).
  /// fill: the value of every element, of constants and row vectors
  /// (fillInputsBegin, OpTable.h).
  ExprProgram expr;
  /// transpose: result dim i is operand dim permutation[i].
  std::vector<int64_t> permutation;
  /// constant: one element, the index of its entry in Program::constants;
  /// the result is this rank's part of it (text `index 1 K`).
  std::vector<int64_t> constantIndex;
  /// The lowering strategy that produced this op ("activations",
  /// "gather-weight", "local": the compiler's `shardlin.lowering` attribute),
  /// or empty. Informational: running does not read it.
  std::string strategy;
  /// all_gather: the number of row chunks in which the executor pipelines
  /// the fused block this all_gather starts (its gather, the row-local
  /// GEMMs and elementwise ops after it, and the reduce_scatter that ends
  /// it), each chunk's collectives on a communication lane beside the
  /// previous chunk's GEMMs (docs/runtime.md, "Overlapping communication
  /// with the GEMMs"). 0: none (the compiler's `overlap_chunks` in
  /// `shardlin.lowering`; text `overlap N`, 1 <= N <= kMaxOverlapChunks).
  int overlapChunks = 0;
  /// reshape: its reassociation, for each dim of the side of higher rank
  /// the dim of the other side whose group it is in (an expand_shape's
  /// result dims, a collapse_shape's operand dims). Expanding, a dynamic
  /// result dim whose group's other dims are static is its operand dim over
  /// their product; collapsing, a result dim is the product of its group's
  /// operand dims. Empty: none (text `groups N g0 ... gN-1`, written only
  /// when not empty).
  std::vector<int64_t> reshapeGroups;
  /// attention, attention_grad, rope: the head size D, one element (text
  /// `head_dim 1 D`). attention, attention_grad: the query heads per kv
  /// head g (`group 1 g`); each rank's global query heads [b, e) and kv
  /// heads, one pair per rank (`q_heads 2W b0 e0 ...`, `kv_heads 2W ...`);
  /// the scores' scale and the causal mask. attention_grad: the gradient
  /// it computes, 0 dq, 1 dk, 2 dv (`wrt 1 K`). rope: whether it rotates
  /// by -theta (its backward). docs/runtime.md, "Attention and RoPE".
  std::vector<int64_t> headDim;
  std::vector<int64_t> group;
  std::vector<int64_t> qHeads;
  std::vector<int64_t> kvHeads;
  std::vector<int64_t> wrt;
  double scale = 1.0;
  bool causal = false;
  bool inverse = false;
  /// local_slice: the dim (one element, text `dim 1 d`) and, per rank r,
  /// the range [b_r, e_r) of it that rank r takes from a value every rank
  /// holds whole (`ranges 2W b0 e0 ...`); ranges may overlap or be empty.
  /// local_place: the same fields, rank r's operand placed at [b_r, e_r)
  /// of the dim of a zero result.
  std::vector<int64_t> sliceDim;
  std::vector<int64_t> ranges;
  /// Where the op came from (file:line:col), for error messages.
  std::string location;
};

struct Argument {
  /// The rank-local type (for a sharded argument: the local chunk's type,
  /// with kDynamic where chunks are uneven).
  ValueType type;
  bool sharded = false;
  /// For sharded arguments: the global shape and the chunk spec.
  std::vector<int64_t> globalShape;
  ChunkSpec sharding;
  /// A plain argument declared the same on every rank (the upstream
  /// import's replicated arguments: `shardlin.replicated` on the entry's
  /// argument). Before the first collective the ranks check that they all
  /// hold the same bytes (exec/Replicated.h; RunOptions::checkReplicated).
  /// A plain argument without it is rank-local: each rank its own value.
  bool replicated = false;
  /// The name of the parameter the argument holds (a weight kept outside
  /// the module: `shardlin.parameter` on the entry's argument, from
  /// --shardlin-externalize-parameters), or empty. A file runner given a
  /// parameters file binds it to the tensor of that name
  /// (RunConfig::paramsPath); one word: no spaces or control characters.
  std::string parameter;
  /// With `parameter`: the argument holds rows [offset, offset + size) of
  /// dim 0 of that tensor, not all of it (one of the three parts of a
  /// fused q/k/v weight: `shardlin.parameter_rows`, docs/attention.md,
  /// "Fused QKV"); size -1 when the argument is the whole tensor. The
  /// runner reads it as FILE.safetensors:NAME[B:E], so a rank reads only
  /// its chunk of those rows. In the program text, `rows B E` after `param
  /// NAME`.
  Range parameterRows{0, -1};
  bool hasParameterRows() const { return parameterRows.size >= 0; }
  /// Where the argument was declared (file:line:col, or its name), for
  /// error messages; may be empty.
  std::string location;
};

/// A constant the program holds (a weight or a bias a frontend wrote into
/// the module: shardlin.constant), read by a `constant` instruction. A split
/// one is, on each rank, its chunk under `sharding`: the plan copies only
/// that chunk out of `bytes`.
struct Constant {
  DType dtype = DType::F32;
  /// The global shape (static).
  std::vector<int64_t> shape;
  bool sharded = false;
  ChunkSpec sharding;
  /// The elements, row-major, little-endian, dtypeSize(dtype) bytes each.
  std::vector<char> bytes;
  /// Where it was defined (file:line:col), for messages; may be empty.
  std::string location;
};

/// How a result is spread over the ranks. Every rank returns its own local
/// value; a sharded result (an entry that returns a !shardlin.sharded
/// value) is, on each rank, that rank's chunk of one global tensor, which a
/// file runner can assemble (Runner.h).
struct ResultLayout {
  bool sharded = false;
  /// For sharded results: the global shape and the chunk spec.
  std::vector<int64_t> globalShape;
  ChunkSpec sharding;
};

struct Program {
  std::string name;
  /// Number of ranks the program was compiled for (the placements' length of
  /// every chunk spec); 0 if it has no sharded values (any W then).
  int64_t worldSize = 0;
  /// values[i] is the type of value i; values 0..args.size()-1 are the
  /// arguments.
  std::vector<ValueType> values;
  std::vector<Argument> args;
  std::vector<Instr> instrs;
  /// The constants the `constant` instructions read (text: `constant`
  /// lines, docs/runtime.md "Constants").
  std::vector<Constant> constants;
  std::vector<int> results;
  /// Parallel to results, or empty when no result is sharded (programs
  /// written before result layouts existed have none).
  std::vector<ResultLayout> resultLayouts;
  /// Empty for a program the plan executor runs. Otherwise the program's
  /// body is native code compiled from MLIR (shardlin-run --jit), and this
  /// Program is only its entry's signature: no instructions, and results
  /// are the values after the arguments, in order (a `?` in a result's
  /// shape is a size its run decides: RankBuffers::resultShapes). The
  /// string identifies the code (a hash of the module and the options it was
  /// compiled with): it is part of the text form, so the ranks' agreement
  /// also checks that they all run the same code. Such a program runs only
  /// through RankCallbacks::executor (Execute.h).
  std::string compiled;

  /// Checks that operand and result ids are in range, defined before use,
  /// and that every chunk spec is a permutation of 0..worldSize-1; for a
  /// compiled program, the form described above.
  Status validate() const;
};

/// "argument I" and, if known, " (LOCATION)": how errors name argument i.
std::string describeArgument(const Program &program, size_t i);

std::string formatShape(const std::vector<int64_t> &shape);

/// Whether `shape` has a `?` (kDynamic) dim.
bool hasDynamicDim(const std::vector<int64_t> &shape);

} // namespace shardlin::rt

#endif // SHARDLIN_RUNTIME_PROGRAM_PROGRAM_H
