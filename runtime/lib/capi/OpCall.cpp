//===- OpCall.cpp - The sticky rule, and failing ranks in collectives -----===//
//
// A context remembers its first failure: every later op returns it without
// doing anything. A rank whose collective fails before it reaches the
// communicator (bad views, or a context that failed earlier) still takes
// part in the collective through Communicator::failCollective: on the
// threads backend every rank then fails at once, naming this rank and why,
// instead of waiting for it until the timeout. MPI cannot tell the other
// ranks; they fail when the timeout passes.
//
//===----------------------------------------------------------------------===//

#include "capi/Context.h"
#include "capi/Errors.h"

namespace shardlin::rt::capi {

namespace {

/// Records a failure on `ctx` (the first one sticks) and returns the
/// context's status.
shardlin_status record(shardlin_context *ctx, const Status &st) noexcept {
  if (st.isOk())
    return SHARDLIN_OK;
  if (ctx->status == SHARDLIN_OK) {
    ctx->status = toC(st.code());
    try {
      ctx->message = st.message();
    } catch (...) {
      ctx->message.clear();
    }
  }
  finish(st);
  return ctx->status;
}

/// "shardlin_gemm (rank 1 of 4)"
std::string where(const shardlin_context *ctx, const char *fn) {
  return std::string(fn) + " (rank " + str(ctx->comm->rank()) + " of " +
         str(ctx->comm->worldSize()) + ")";
}

} // namespace

bool OpCall::mayRun() noexcept {
  if (!ctx_)
    return false;
  if (ctx_->status == SHARDLIN_OK)
    return true;
  try {
    why_ = "rank " + str(ctx_->comm->rank()) +
           "'s context failed earlier: " + ctx_->message;
  } catch (...) {
    threw();
  }
  return false;
}

void OpCall::ran(Status st) noexcept {
  if (st.isOk())
    return;
  try {
    st_ = st.withContext(where(ctx_, fn_));
    why_ = st_.message();
  } catch (...) {
    threw();
  }
}

void OpCall::threw() noexcept {
  try {
    st_ = fromException(fn_);
    why_ = "rank " + str(ctx_->comm->rank()) + " failed: " + st_.message();
  } catch (...) {
    noMemory_ = true;
  }
}

shardlin_status OpCall::end() noexcept {
  if (!ctx_) {
    try {
      return finish(invalid(std::string(fn_) + ": context is null"));
    } catch (...) {
      return SHARDLIN_INVALID_ARGUMENT;
    }
  }
  if (noMemory_) {
    if (ctx_->status == SHARDLIN_OK)
      ctx_->status = SHARDLIN_INTERNAL;
    return ctx_->status;
  }
  if (kind_ && !joined && !why_.empty()) {
    try {
      DType t = DType::F32;
      (void)toDType(dtypeValue_, "dtype", t);
      (void)ctx_->comm->failCollective(*kind_, t, why_);
    } catch (...) {
    }
  }
  if (ctx_->status != SHARDLIN_OK) {
    setLastError(ctx_->message);
    return ctx_->status;
  }
  return record(ctx_, st_);
}

} // namespace shardlin::rt::capi
