//===- AttentionHeads.h - The head tables of attention ops ------*- C++ -*-===//
//
// attention and attention_grad (docs/runtime.md, "Attention and RoPE") hold
// per-rank tables of GLOBAL head indices: rank r's query tensor holds the
// query heads [qHeads[2r], qHeads[2r+1]), its key and value tensors the kv
// heads [kvHeads[2r], kvHeads[2r+1]). With g query heads per kv head,
// global query head h attends with global kv head h / g, which is local kv
// head h / g - kvHeads[2r] on rank r. The verifier (OpTable.cpp) and the
// plan (exec/ops/AttentionOps.cpp) read the tables through these helpers.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_RUNTIME_PROGRAM_ATTENTIONHEADS_H
#define SHARDLIN_RUNTIME_PROGRAM_ATTENTIONHEADS_H

#include "shardlin/runtime/program/Program.h"

#include <cstdint>
#include <string>
#include <vector>

namespace shardlin::rt {

/// Global heads [begin, end).
struct HeadRange {
  int64_t begin = 0, end = 0;
  int64_t size() const { return end - begin; }
};

/// Rank r's pair of a head table (the table has a pair for r: checked by
/// checkHeadTables).
inline HeadRange headsOf(const std::vector<int64_t> &table, int64_t r) {
  return {table[size_t(2 * r)], table[size_t(2 * r + 1)]};
}

/// The attention's geometry on one rank, from its instruction's attributes.
struct AttentionHeads {
  int64_t headDim = 0, group = 1;
  HeadRange q, kv;
  /// The local kv head of local query head j.
  int64_t kvOf(int64_t j) const { return (q.begin + j) / group - kv.begin; }
};

/// Checks an attention instruction's head attributes: one head_dim D > 0,
/// one group g > 0, tables of one pair [b, e) per rank (0 <= b <= e; W
/// pairs where the program has a world size W, any number >= 1 otherwise;
/// D, g and e at most 2^24, so that no size the kernels form overflows)
/// whose query heads all map to a local kv head; a finite scale; and wrt in
/// {0, 1, 2} for attention_grad. `what` names the instruction.
Status checkHeadTables(const Program &program, const Instr &in,
                       const std::string &what);

/// Rank r's geometry (after checkHeadTables; r < the table's pairs).
AttentionHeads attentionHeadsOf(const Instr &in, int64_t r);

} // namespace shardlin::rt

#endif // SHARDLIN_RUNTIME_PROGRAM_ATTENTIONHEADS_H
