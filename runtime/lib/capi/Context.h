//===- Context.h - A C ABI context and how an op runs on it -----*- C++ -*-===//
//
// Internal to the C ABI. A context is one rank: its communicator, its host
// device (OpenBLAS GEMM, host local ops, host allocator), its sticky status
// and the scratch buffers its ops pack strided views into. runOp is how
// every op runs on one: the sticky rule, the rank in the message, no C++
// exception out, and a rank that fails before its collective still taking
// part in it (OpCall.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_RUNTIME_LIB_CAPI_CONTEXT_H
#define SHARDLIN_RUNTIME_LIB_CAPI_CONTEXT_H

#include "capi/Views.h"
#include "shardlin-c/Runtime.h"
#include "shardlin/runtime/base/Buffer.h"
#include "shardlin/runtime/base/Status.h"
#include "shardlin/runtime/comm/Communicator.h"
#include "shardlin/runtime/exec/Device.h"

#include <memory>
#include <optional>
#include <string>

namespace shardlin::rt::capi {

/// The scratch buffers of one context, one per role in an op, so that an
/// op's packed copies never alias each other.
enum class Slot {
  InDense,
  SendStage,
  RecvStage,
  OutDense,
  Lhs,
  Rhs,
  Bias,
  /// attention_grad's dout.
  Cotangent,
  /// attention's scores and widened copies (attentionScratchBytes).
  Work,
  Count
};

/// Host buffers kept across calls; each only grows, so a program that
/// repeats its ops allocates once.
class Scratch {
public:
  /// A buffer of at least `bytes` for `slot` (null if bytes is 0).
  Status get(Slot slot, int64_t bytes, char *&p);

private:
  Buffer buffers_[static_cast<size_t>(Slot::Count)];
};

} // namespace shardlin::rt::capi

struct shardlin_context {
  /// The rank's communicator and its (prepared) device: the context's own
  /// when the C ABI created it, else borrowed from a C++ caller that keeps
  /// them alive longer (shardlin::rt::wrapContext, CApi.h).
  shardlin::rt::Communicator *comm = nullptr;
  shardlin::rt::RankDevice *device = nullptr;
  std::unique_ptr<shardlin::rt::Communicator> ownedComm;
  std::unique_ptr<shardlin::rt::RankDevice> ownedDevice;
  shardlin_status status = SHARDLIN_OK;
  std::string message;
  shardlin::rt::capi::Scratch scratch;
};

namespace shardlin::rt::capi {

/// The view's elements in row-major order: its own memory if dense, else
/// packed into `slot`.
Status denseInput(shardlin_context *ctx, const View &v, Slot slot,
                  const char *&p);

/// Where an op writes the view's elements in row-major order: its own
/// memory if dense, else `slot` (copied out by finishOutput).
Status denseOutput(shardlin_context *ctx, const View &v, Slot slot, char *&p);
void finishOutput(const View &v, const char *dense);

/// One call of an op on a context (runOp): the sticky rule, the message's
/// prefix ("shardlin_gemm (rank 1 of 4)"), and, for a collective, a rank
/// that fails before reaching the communicator taking part in it anyway
/// through Communicator::failCollective, so that on the threads backend
/// every rank fails at once, naming this one, instead of waiting for it
/// until the timeout. Nothing in it throws.
class OpCall {
public:
  OpCall(shardlin_context *ctx, const char *fn,
         std::optional<CollectiveKind> kind, int dtypeValue)
      : ctx_(ctx), fn_(fn), kind_(kind), dtypeValue_(dtypeValue) {}

  /// Whether the op may run: not with a null context or one that failed
  /// earlier.
  bool mayRun() noexcept;
  /// The op's status.
  void ran(Status st) noexcept;
  /// The op threw; call it in the catch block.
  void threw() noexcept;
  /// Records the outcome on the context and returns the call's status.
  shardlin_status end() noexcept;

  /// Set by the op right before it calls the communicator.
  bool joined = false;

private:
  shardlin_context *ctx_;
  const char *fn_;
  std::optional<CollectiveKind> kind_;
  int dtypeValue_;
  Status st_;
  /// Why this rank fails its collective, for the other ranks.
  std::string why_;
  /// Not even a message fitted in memory: the code alone.
  bool noMemory_ = false;
};

/// Runs `body(joined)` for the C function `fn` on `ctx` as an OpCall. For a
/// collective, `kind` is its kind and `body` sets `joined` right before it
/// calls the communicator; `dtypeValue` is the caller's dtype, which
/// failCollective states.
template <typename Body>
shardlin_status runOp(shardlin_context *ctx, const char *fn,
                      std::optional<CollectiveKind> kind, int dtypeValue,
                      Body body) {
  OpCall call(ctx, fn, kind, dtypeValue);
  if (call.mayRun()) {
    try {
      call.ran(body(call.joined));
    } catch (...) {
      call.threw();
    }
  }
  return call.end();
}

} // namespace shardlin::rt::capi

#endif // SHARDLIN_RUNTIME_LIB_CAPI_CONTEXT_H
