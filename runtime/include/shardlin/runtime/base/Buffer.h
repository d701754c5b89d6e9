//===- Buffer.h - Typed memory owned by the runtime -------------*- C++ -*-===//
//
// Buffers carry their device, so nothing in the plan assumes host memory where
// a device pointer could stand. Host buffers are the only kind the CPU
// backends allocate; GPU backends provide their own allocator.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_RUNTIME_BUFFER_H
#define SHARDLIN_RUNTIME_BUFFER_H

#include "shardlin/runtime/base/DType.h"
#include "shardlin/runtime/base/Status.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace shardlin::rt {

enum class DeviceKind : uint8_t { Host, Cuda };

struct Device {
  DeviceKind kind = DeviceKind::Host;
  int index = 0;
  bool isHost() const { return kind == DeviceKind::Host; }
  bool operator==(const Device &o) const {
    return kind == o.kind && index == o.index;
  }
};

std::string deviceName(Device d);

/// Multiplies the dims of `shape`, failing (instead of wrapping) on overflow or
/// a negative dim. `elementSize`, when non-zero, also bounds the byte count.
Status checkedNumElements(const std::vector<int64_t> &shape, int64_t &result,
                          size_t elementSize = 0);

/// Allocates and frees memory on one device.
class Allocator {
public:
  virtual ~Allocator() = default;
  virtual Device device() const = 0;
  virtual Status allocate(size_t bytes, void **ptr) = 0;
  virtual void deallocate(void *ptr) = 0;
};

/// 64-byte aligned host memory.
Allocator &hostAllocator();

/// An owning, untyped allocation on one device.
class Buffer {
public:
  Buffer() = default;
  ~Buffer() { reset(); }
  Buffer(const Buffer &) = delete;
  Buffer &operator=(const Buffer &) = delete;
  Buffer(Buffer &&o) noexcept { *this = std::move(o); }
  Buffer &operator=(Buffer &&o) noexcept {
    if (this != &o) {
      reset();
      data_ = o.data_;
      bytes_ = o.bytes_;
      allocator_ = o.allocator_;
      o.data_ = nullptr;
      o.bytes_ = 0;
      o.allocator_ = nullptr;
    }
    return *this;
  }

  static Status allocate(Allocator &allocator, size_t bytes, Buffer &out) {
    out.reset();
    void *p = nullptr;
    if (bytes != 0)
      SHARDLIN_RETURN_IF_ERROR(allocator.allocate(bytes, &p));
    out.data_ = p;
    out.bytes_ = bytes;
    out.allocator_ = &allocator;
    return Status::ok();
  }

  void *data() const { return data_; }
  size_t bytes() const { return bytes_; }
  Device device() const { return allocator_ ? allocator_->device() : Device{}; }
  void reset() {
    if (data_ && allocator_)
      allocator_->deallocate(data_);
    data_ = nullptr;
    bytes_ = 0;
  }

private:
  void *data_ = nullptr;
  size_t bytes_ = 0;
  Allocator *allocator_ = nullptr;
};

} // namespace shardlin::rt

#endif // SHARDLIN_RUNTIME_BUFFER_H
