//===- CApi.h - The C ABI's C++ side ----------------------------*- C++ -*-===//
//
// For C++ launchers of compiled code (shardlin-run --jit): a C ABI context
// (shardlin-c/Runtime.h) over a rank that the C++ runtime already runs, so
// that the compiled code's collectives go through that run's communicator
// (its traffic counters, timeouts and fault handling) and its GEMMs through
// the rank's device. The C header stays plain C; this is its C++ companion,
// implemented in runtime/lib/capi/Contexts.cpp.
//
//   rt::ContextPtr ctx;
//   SHARDLIN_RETURN_IF_ERROR(rt::wrapContext(comm, device, ctx));
//   shardlin_set_thread_context(ctx.get());
//   entry(...);                              // the compiled code
//   shardlin_set_thread_context(nullptr);
//   SHARDLIN_RETURN_IF_ERROR(rt::contextStatus(ctx.get()));
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_RUNTIME_CAPI_H
#define SHARDLIN_RUNTIME_CAPI_H

#include "shardlin-c/Runtime.h"
#include "shardlin/runtime/backends/Registry.h"
#include "shardlin/runtime/comm/Communicator.h"
#include "shardlin/runtime/base/Status.h"

#include <memory>

namespace shardlin::rt {

/// Destroys a context with shardlin_context_destroy.
struct ContextDeleter {
  void operator()(shardlin_context *context) const;
};
using ContextPtr = std::unique_ptr<shardlin_context, ContextDeleter>;

/// A context for rank comm.rank() of comm.worldSize() that borrows `comm`
/// and `device` (prepared for that rank, on host memory: the C ABI's ops
/// read and write host pointers). Both must outlive the context; destroying
/// it leaves them alone. Its status, scratch buffers and message are its
/// own, as for a context the C ABI created.
Status wrapContext(Communicator &comm, RankDevice &device, ContextPtr &out);

/// The context's first failure as a Status (its code and message), or ok.
Status contextStatus(const shardlin_context *context);

} // namespace shardlin::rt

#endif // SHARDLIN_RUNTIME_CAPI_H
