//===- SafetensorsFuzzer.cpp - libFuzzer target: the safetensors header ---===//
//
// parseSafetensors on arbitrary bytes must fail with a message or return
// tensors whose byte ranges lie inside the data, match their shapes and
// dtypes, and do not overlap. A huge header length or shape must be
// rejected before anything is allocated (run with -malloc_limit_mb).
//
//===----------------------------------------------------------------------===//

#include "FuzzSupport.h"

#include "shardlin/runtime/base/Buffer.h"
#include "shardlin/runtime/tooling/Safetensors.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace rt = shardlin::rt;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::vector<rt::SafetensorsTensor> tensors;
  rt::Status s = rt::parseSafetensors(data, size, "fuzz.safetensors", tensors);
  if (!s) {
    if (s.message().empty())
      shardlin::fuzz::fail("parseSafetensors failed without a message");
    return 0;
  }
  const uint64_t dataStart = 8 + rt::safetensorsHeaderLength(data);
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  for (const rt::SafetensorsTensor &t : tensors) {
    int64_t n = 0;
    const size_t item = rt::dtypeSize(t.dtype);
    if (!rt::checkedNumElements(t.shape, n, item))
      shardlin::fuzz::fail("accepted a shape whose size overflows");
    if (t.begin < dataStart || t.begin > t.end || t.end > size)
      shardlin::fuzz::fail("accepted the tensor '" + t.name +
                           "' whose bytes lie outside the data");
    if (t.end - t.begin != uint64_t(n) * item)
      shardlin::fuzz::fail("accepted the tensor '" + t.name +
                           "' whose size is not its shape's");
    ranges.push_back({t.begin, t.end});
  }
  std::sort(ranges.begin(), ranges.end());
  for (size_t i = 1; i < ranges.size(); ++i)
    if (ranges[i].first < ranges[i - 1].second)
      shardlin::fuzz::fail("accepted overlapping tensors");
  return 0;
}
