//===- Arguments.cpp - The rules the C ABI's ops share --------------------===//

#include "capi/Arguments.h"

#include "capi/Errors.h"
#include "shardlin/runtime/base/ChunkLayout.h"

#include <string>

namespace shardlin::rt::capi {

Status readPlacements(const int64_t *placements, const char *name,
                      int worldSize, std::vector<int64_t> &out) {
  if (!placements)
    return invalid(std::string(name) + " is null (expected the " +
                   str(worldSize) + " ranks' placements)");
  out.assign(placements, placements + worldSize);
  const std::string problem = checkPlacements(out);
  if (!problem.empty())
    return invalid(std::string(name) + ": " + problem);
  return Status::ok();
}

void readBounds(const int64_t *bounds, int worldSize,
                std::vector<int64_t> &out) {
  out.clear();
  if (bounds)
    out.assign(bounds, bounds + worldSize + 1);
}

Status checkDim(int64_t dim, const char *name, const View &v) {
  if (dim < 0 || dim >= v.rank())
    return invalid(std::string(name) + " " + str(dim) +
                   " is out of range for " + v.name + " of rank " +
                   str(v.rank()));
  return Status::ok();
}

Status checkSameRank(const View &a, const View &b) {
  if (a.rank() != b.rank())
    return invalid(a.name + " " + a.shape() + " has rank " + str(a.rank()) +
                   " but " + b.name + " " + b.shape() + " has rank " +
                   str(b.rank()));
  return Status::ok();
}

Status checkSameDims(const View &a, const View &b, int64_t skip1,
                     int64_t skip2) {
  SHARDLIN_RETURN_IF_ERROR(checkSameRank(a, b));
  for (int64_t i = 0; i < a.rank(); ++i)
    if (i != skip1 && i != skip2 && a.sizes[i] != b.sizes[i])
      return invalid(a.name + " " + a.shape() + " and " + b.name + " " +
                     b.shape() + " differ in dim " + str(i));
  return Status::ok();
}

Status checkOutput(const View &out, std::initializer_list<const View *> ins) {
  SHARDLIN_RETURN_IF_ERROR(checkOneAddressPerElement(out));
  for (const View *in : ins)
    SHARDLIN_RETURN_IF_ERROR(checkDisjoint(out, *in));
  return Status::ok();
}

} // namespace shardlin::rt::capi
