//===- Scratch.cpp - A context's scratch buffers and packed views ---------===//

#include "capi/Context.h"

#include "shardlin/runtime/base/Buffer.h"

namespace shardlin::rt::capi {

Status Scratch::get(Slot slot, int64_t bytes, char *&p) {
  Buffer &b = buffers_[static_cast<size_t>(slot)];
  if (b.bytes() < static_cast<size_t>(bytes))
    SHARDLIN_RETURN_IF_ERROR(
        Buffer::allocate(hostAllocator(), static_cast<size_t>(bytes), b));
  p = bytes == 0 ? nullptr : static_cast<char *>(b.data());
  return Status::ok();
}

Status denseInput(shardlin_context *ctx, const View &v, Slot slot,
                  const char *&p) {
  if (v.dense()) {
    p = v.data;
    return Status::ok();
  }
  char *dense = nullptr;
  SHARDLIN_RETURN_IF_ERROR(
      ctx->scratch.get(slot, v.elements * static_cast<int64_t>(v.elt), dense));
  copyViewToDense(v, dense);
  p = dense;
  return Status::ok();
}

Status denseOutput(shardlin_context *ctx, const View &v, Slot slot, char *&p) {
  if (v.dense()) {
    p = v.data;
    return Status::ok();
  }
  return ctx->scratch.get(slot, v.elements * static_cast<int64_t>(v.elt), p);
}

void finishOutput(const View &v, const char *dense) {
  if (!v.dense())
    copyDenseToView(dense, v);
}

} // namespace shardlin::rt::capi
