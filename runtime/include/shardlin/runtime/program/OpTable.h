//===- OpTable.h - One description per runtime op ---------------*- C++ -*-===//
//
// Every op of a Program is described once, here and in
// runtime/lib/program/OpTable.cpp: its mnemonic, the IR ops it is translated
// from, its operand range, its attributes (their names in the dialect's ODS,
// their keywords in the program text and the Instr fields that hold them),
// and the function that verifies it. The program text form
// (ProgramText.cpp), Program::validate, the translator from IR
// (lib/Execution/ProgramBuilder.cpp) and, through them, the fuzzers read
// this table; none of them lists the ops again. How each op resolves its
// sizes and runs on a rank is the executor's: its kernel entry
// (runtime/lib/exec/OpKernels.h), kept apart so that programs are read and
// checked without the executor.
//
// Adding an op: an OpCode, one OpInfo entry in OpTable.cpp with its verify
// function, one OpKernel entry with its resolve and execute functions in
// exec/ops/, and its device kernels (LocalOps, or a collective or GEMM
// backend). See docs/runtime.md, "Adding an op".
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_RUNTIME_PROGRAM_OPTABLE_H
#define SHARDLIN_RUNTIME_PROGRAM_OPTABLE_H

#include "shardlin/runtime/program/Program.h"

#include <optional>
#include <string>
#include <vector>

namespace shardlin::rt {

/// One attribute of an op as the program text writes it: a keyword followed
/// by a chunk spec (`chunk D N p0 ... pN-1 [bounds b0 ... bN]`), by 0/1
/// flags (`trans 0 1`), by an expression program (`expr N node...`, see
/// docs/runtime.md), by a list of integers (`perm N i0 ... iN-1`) or by
/// one real number (`scale 0x1p-3`: a double in the hex form of
/// expression constants, formatExprConstant, so it reads back exactly).
/// Each field is one attribute of the dialect's op, named as in its ODS.
struct OpAttribute {
  enum class Kind { Chunks, Flags, Expr, Ints, Real };
  struct Field {
    /// The attribute's name in the dialect's ODS (`along`, `transpose_lhs`).
    /// Kind::Expr has no ODS attribute (the translator builds the program
    /// from a chain of IR ops); its name is only for messages.
    const char *odsName;
    /// Kind::Chunks: the Instr field that holds it.
    ChunkSpec Instr::*chunks = nullptr;
    /// Kind::Flags: the Instr field that holds it (a UnitAttr or BoolAttr).
    bool Instr::*flag = nullptr;
    /// Kind::Expr: the Instr field that holds it.
    ExprProgram Instr::*expr = nullptr;
    /// Kind::Ints: the Instr field that holds it (a DenseI64ArrayAttr).
    std::vector<int64_t> Instr::*ints = nullptr;
    /// Kind::Real: the Instr field that holds it (an F64Attr).
    double Instr::*real = nullptr;
  };
  Kind kind;
  /// The keyword that introduces it in the program text.
  const char *keyword;
  /// Kind::Chunks, Kind::Expr, Kind::Ints and Kind::Real: exactly one
  /// field;
  /// Kind::Flags: one or more, written in this order after the keyword.
  std::vector<Field> fields;
};

struct OpInfo {
  OpCode op;
  /// The op's name in the program text; the dialect's op of the same name
  /// (`shardlin.<mnemonic>`) translates to it unless irOps says otherwise.
  const char *mnemonic;
  /// The IR ops (full names) the translator maps to this op one to one;
  /// empty for an op the translator builds otherwise (elementwise, from a
  /// chain of IR ops).
  std::vector<const char *> irOps;
  /// Operand count range; a program whose instruction has another count is
  /// invalid.
  size_t minOperands, maxOperands;
  /// In text order.
  std::vector<OpAttribute> attributes;
  /// The op's own checks in Program::validate, after the checks every op
  /// gets (operand count, defined operands, one element type unless
  /// `ownElementTypes`, a fresh result). `what` names the instruction for
  /// messages.
  Status (*verify)(const Program &program, const Instr &in,
                   const std::string &what);
  /// Whether `verify` checks the element types itself (gemm's f32 result of
  /// f16/bf16 operands, convert); otherwise the operands and the result
  /// have one element type.
  bool ownElementTypes;
};

/// For verify functions: checks a chunk spec of `program` that applies to a
/// value of rank `rankOf`: its placements, its chunk count against the
/// program's world size, its dim, and its explicit bounds if any (W + 1
/// non-decreasing values from 0: checkBounds).
Status checkChunkSpec(const Program &program, const ChunkSpec &spec,
                      size_t rankOf, const std::string &what);
/// The same for a value of shape `shape`, whose size along the spec's dim,
/// where it is static, is also where explicit bounds must end.
Status checkChunkSpec(const Program &program, const ChunkSpec &spec,
                      const std::vector<int64_t> &shape,
                      const std::string &what);

/// An elementwise op's operand of rank `operandRank` is a row vector
/// (broadcast over the rows) when the result has rank >= 2 and the operand
/// rank 1; every other operand is full (a rank-1 result's operands are all
/// full).
inline bool isRowVectorOperand(size_t operandRank, size_t resultRank) {
  return resultRank >= 2 && operandRank == 1;
}

/// An elementwise op's operand of the result's rank whose last dim is 1
/// while the result's is not is a column (one value per row, broadcast
/// along the row: a norm's R x 1 statistics); where the result's last dim
/// is dynamic, the executor decides with the rank's sizes (a result of one
/// column reads the operand the same either way).
inline bool isColumnOperand(const std::vector<int64_t> &operand,
                            const std::vector<int64_t> &result) {
  return operand.size() == result.size() && operand.size() >= 2 &&
         operand.back() == 1 && result.back() != 1;
}

/// reduce_last's combination: the op of an expression of exactly three
/// nodes `input 0` (the element of x), `input 1` (the accumulator) and
/// `add`, `maximum` or `maxnum` of them (either order); nullopt otherwise.
std::optional<ExprOp> reduceLastCombiner(const ExprProgram &expr);

/// fill's operands: where the result type has dynamic dims, operand 0 is
/// the value whose dims of the same index give them; the operands from
/// here on are the expression's inputs, row vectors of the result's last
/// dim (broadcast over the rows).
inline size_t fillInputsBegin(const ValueType &result) {
  return hasDynamicDim(result.shape) ? 1 : 0;
}

/// Every op, indexed by OpCode.
const std::vector<OpInfo> &opTable();
const OpInfo &opInfo(OpCode op);
/// nullptr if no op has that mnemonic.
const OpInfo *findOpByMnemonic(const std::string &mnemonic);
/// The largest maxOperands of any op (what the text form reads at most).
size_t maxOperandsOfAnyOp();

} // namespace shardlin::rt

#endif // SHARDLIN_RUNTIME_PROGRAM_OPTABLE_H
