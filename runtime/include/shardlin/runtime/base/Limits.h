//===- Limits.h - The runtime's limits the compiler checks too ---*- C++ -*-===//
//
// Bounds that the runtime enforces on a program and that the compiler's
// options are checked against before they reach it: one definition, read by
// both (the compiler sees this header through Shardlin::ChunkLayout).
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_RUNTIME_BASE_LIMITS_H
#define SHARDLIN_RUNTIME_BASE_LIMITS_H

namespace shardlin::rt {

/// The most row chunks an all_gather's `overlap` asks for.
constexpr int kMaxOverlapChunks = 64;

} // namespace shardlin::rt

#endif // SHARDLIN_RUNTIME_BASE_LIMITS_H
