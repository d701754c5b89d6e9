//===- NpyFuzzer.cpp - libFuzzer target: the .npy reader ------------------===//
//
// parseNpy on arbitrary bytes must fail with a message or return an array
// whose data size is exactly what its shape and descr say. Huge shapes must
// be rejected before anything is allocated (run with -malloc_limit_mb).
//
//===----------------------------------------------------------------------===//

#include "FuzzSupport.h"

#include "shardlin/runtime/base/Buffer.h"
#include "shardlin/runtime/tooling/Npy.h"

#include <cstddef>
#include <cstdint>

namespace rt = shardlin::rt;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  rt::NpyArray array;
  rt::Status s = rt::parseNpy(data, size, "fuzz.npy", array);
  if (!s) {
    if (s.message().empty())
      shardlin::fuzz::fail("parseNpy failed without a message");
    return 0;
  }
  // The descr must hold one of the runtime's dtypes (bf16 in any of the
  // forms it reads: '<V2', '|V2', '<u2').
  size_t item = 0;
  for (rt::DType t :
       {rt::DType::F16, rt::DType::BF16, rt::DType::F32, rt::DType::F64})
    if (rt::npyDescrMatches(array.descr, t))
      item = rt::dtypeSize(t);
  if (item == 0)
    shardlin::fuzz::fail("parseNpy accepted the descr '" + array.descr + "'");
  int64_t n = 0;
  if (!rt::checkedNumElements(array.shape, n, item))
    shardlin::fuzz::fail("parseNpy accepted a shape whose size overflows");
  if (array.data.size() != static_cast<size_t>(n) * item)
    shardlin::fuzz::fail("parseNpy returned " +
                         std::to_string(array.data.size()) +
                         " data bytes for " + std::to_string(n) +
                         " elements of " + std::to_string(item) + " bytes");
  return 0;
}
