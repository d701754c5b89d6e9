//===- Arguments.h - The rules the C ABI's ops share ------------*- C++ -*-===//
//
// Internal to the C ABI. The checks of an op's arguments beyond one view's
// own (Views.h): chunk specs' placements, dims in range, views that must
// agree in rank and dims, and outputs. Each failure is InvalidArgument
// naming the argument with what was expected and what was given.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_RUNTIME_LIB_CAPI_ARGUMENTS_H
#define SHARDLIN_RUNTIME_LIB_CAPI_ARGUMENTS_H

#include "capi/Views.h"
#include "shardlin/runtime/base/Status.h"

#include <cstdint>
#include <initializer_list>
#include <vector>

namespace shardlin::rt::capi {

/// A chunk spec's placements: `worldSize` entries, a permutation.
Status readPlacements(const int64_t *placements, const char *name,
                      int worldSize, std::vector<int64_t> &out);

/// A chunk spec's explicit bounds: null for the ceil rule (`out` empty),
/// else `worldSize` + 1 values, which chunkPieces checks against the dim.
void readBounds(const int64_t *bounds, int worldSize,
                std::vector<int64_t> &out);

/// `dim` (the argument `name`) is a dim of `v`.
Status checkDim(int64_t dim, const char *name, const View &v);

Status checkSameRank(const View &a, const View &b);

/// Every dim of `a` but `skip1` and `skip2` (-1: none) equals b's.
Status checkSameDims(const View &a, const View &b, int64_t skip1,
                     int64_t skip2);

/// The checks every output gets: one address per element, no memory
/// shared with an input.
Status checkOutput(const View &out, std::initializer_list<const View *> ins);

} // namespace shardlin::rt::capi

#endif // SHARDLIN_RUNTIME_LIB_CAPI_ARGUMENTS_H
