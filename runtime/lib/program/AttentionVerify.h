//===- AttentionVerify.h - attention's and rope's checks --------*- C++ -*-===//
//
// Internal to the runtime: the op table's verify functions of attention,
// attention_grad and rope (OpTable.cpp lists them; AttentionVerify.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_RUNTIME_LIB_PROGRAM_ATTENTIONVERIFY_H
#define SHARDLIN_RUNTIME_LIB_PROGRAM_ATTENTIONVERIFY_H

#include "shardlin/runtime/program/Program.h"

#include <string>

namespace shardlin::rt {

/// attention (operands q, k, v[, mask]) and attention_grad (q, k, v, dO[,
/// mask]; the result is the gradient `wrt` names).
Status verifyAttention(const Program &p, const Instr &in,
                       const std::string &what);
/// rope (operands x, cos, sin).
Status verifyRope(const Program &p, const Instr &in, const std::string &what);

} // namespace shardlin::rt

#endif // SHARDLIN_RUNTIME_LIB_PROGRAM_ATTENTIONVERIFY_H
