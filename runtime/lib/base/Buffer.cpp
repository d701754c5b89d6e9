//===- Buffer.cpp - Host allocation and checked sizes ---------------------===//

#include "shardlin/runtime/base/Buffer.h"

#include <cerrno>
#include <cstdlib>
#include <limits>
#include <string>
#include <system_error>

namespace shardlin::rt {

std::string deviceName(Device d) {
  switch (d.kind) {
  case DeviceKind::Host:
    return "host";
  case DeviceKind::Cuda:
    return "cuda:" + std::to_string(d.index);
  }
  return "<invalid device kind " + std::to_string(static_cast<int>(d.kind)) +
         ">";
}

namespace {

std::string shapeString(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

} // namespace

Status checkedNumElements(const std::vector<int64_t> &shape, int64_t &result,
                          size_t elementSize) {
  // Negative dims first, so the message names the real culprit even when a
  // later dim would also overflow.
  for (size_t i = 0; i < shape.size(); ++i)
    if (shape[i] < 0)
      return Status::invalidArgument("dim " + std::to_string(i) + " of shape " +
                           shapeString(shape) + " is negative (" +
                           std::to_string(shape[i]) + ")");

  // A zero dim makes the product zero however large the other dims are, and
  // multiplying in order could overflow before reaching it.
  for (int64_t d : shape)
    if (d == 0) {
      result = 0;
      return Status::ok();
    }

  constexpr int64_t maxI64 = std::numeric_limits<int64_t>::max();
  int64_t n = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (n > maxI64 / shape[i])
      return Status::invalidArgument("the number of elements of shape " +
                           shapeString(shape) + " overflows int64 (at dim " +
                           std::to_string(i) + ")");
    n *= shape[i];
  }

  if (elementSize != 0) {
    // The byte count must be representable both as a size_t (allocation,
    // memcpy) and as an int64 (offsets computed in signed arithmetic).
    constexpr uint64_t maxBytes =
        std::numeric_limits<size_t>::max() < uint64_t(maxI64)
            ? uint64_t(std::numeric_limits<size_t>::max())
            : uint64_t(maxI64);
    if (uint64_t(elementSize) > maxBytes ||
        uint64_t(n) > maxBytes / uint64_t(elementSize))
      return Status::invalidArgument("the byte size of shape " + shapeString(shape) +
                           " with " + std::to_string(elementSize) +
                           "-byte elements overflows (" + std::to_string(n) +
                           " elements)");
  }
  result = n;
  return Status::ok();
}

namespace {

/// 64 bytes: a cache line, and the alignment AVX-512 loads prefer; OpenBLAS
/// and the collectives copy faster from it.
constexpr size_t hostAlignment = 64;

class HostAllocator final : public Allocator {
public:
  Device device() const override { return Device{DeviceKind::Host, 0}; }

  Status allocate(size_t bytes, void **ptr) override {
    if (!ptr)
      return Status::resourceExhausted("host allocation of " + std::to_string(bytes) +
                           " bytes: null output pointer");
    *ptr = nullptr;
    // A zero-byte request owns no memory; deallocate(nullptr) is a no-op.
    if (bytes == 0)
      return Status::ok();
    // posix_memalign rather than std::aligned_alloc: it has no requirement
    // that `bytes` be a multiple of the alignment, so no rounding up (and no
    // overflow check for it) is needed.
    void *p = nullptr;
    int rc = posix_memalign(&p, hostAlignment, bytes);
    if (rc != 0 || !p)
      return Status::resourceExhausted(
          "host allocation of " + std::to_string(bytes) + " bytes (" +
          std::to_string(hostAlignment) + "-byte aligned) failed: " +
          std::error_code(rc ? rc : ENOMEM, std::generic_category()).message());
    *ptr = p;
    return Status::ok();
  }

  void deallocate(void *ptr) override { std::free(ptr); }
};

} // namespace

Allocator &hostAllocator() {
  // Stateless, so sharing one instance between threads and communicators is
  // safe; a function-local static avoids initialisation-order problems.
  static HostAllocator allocator;
  return allocator;
}

} // namespace shardlin::rt
