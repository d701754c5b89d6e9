//===- Exchange.cpp - A collective's tables and the packing of its pieces -===//

#include "exec/Exchange.h"

#include <numeric>
#include <utility>

namespace shardlin::rt {

int64_t Exchange::totalCount() const {
  return std::accumulate(counts.begin(), counts.end(), int64_t(0));
}

Exchange makeExchange(const DimSplit &view, std::vector<Range> ranges) {
  Exchange ex;
  ex.view = view;
  ex.staged = view.outer != 1;
  int64_t packed = 0;
  for (const Range &r : ranges) {
    int64_t count = view.outer * r.size * view.inner;
    ex.counts.push_back(count);
    ex.displs.push_back(ex.staged ? packed : r.offset * view.inner);
    packed += count;
  }
  ex.ranges = std::move(ranges);
  return ex;
}

Status movePieces(LocalOps &ops, const Exchange &ex, Direction direction,
                  const char *from, char *to, size_t elt) {
  const DimSplit &v = ex.view;
  for (size_t p = 0; p < ex.ranges.size(); ++p) {
    const Range &r = ex.ranges[p];
    // An empty piece copies nothing, and its buffers may be null: no
    // pointer arithmetic on them (an offset from null is undefined).
    if (v.outer == 0 || r.size == 0 || v.inner == 0)
      continue;
    const int64_t tensorOffset = r.offset * v.inner * elt;
    const int64_t tensorStride = v.n * v.inner * elt;
    const int64_t stagingOffset = ex.displs[p] * elt;
    const int64_t rowBytes = r.size * v.inner * elt;
    SHARDLIN_RETURN_IF_ERROR(
        direction == Direction::Pack
            ? ops.copyRows(from + tensorOffset, tensorStride,
                           to + stagingOffset, rowBytes, v.outer, rowBytes)
            : ops.copyRows(from + stagingOffset, rowBytes, to + tensorOffset,
                           tensorStride, v.outer, rowBytes));
  }
  return Status::ok();
}

} // namespace shardlin::rt
