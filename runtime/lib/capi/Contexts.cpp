//===- Contexts.cpp - Contexts: options, backends, C++ callers' contexts --===//
//
// A context is made from what the backend registry's connector of the named
// backend hands out (BackendInfo::connect: its launch rules, the world size,
// the BLAS threads of the ranks on this host), with a host device prepared
// for its rank. The C ABI chooses no backend itself: the functions that name
// none name the registry's entry.
//
//===----------------------------------------------------------------------===//

#include "capi/Context.h"
#include "capi/Entries.h"
#include "capi/Errors.h"
#include "shardlin/runtime/backends/Host.h"
#include "shardlin/runtime/backends/Registry.h"
#include "shardlin/runtime/capi/CApi.h"

#include <cmath>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace shardlin::rt::capi {

namespace {

thread_local shardlin_context *currentContext = nullptr;

//===----------------------------------------------------------------------===//
// Options
//===----------------------------------------------------------------------===//

struct Options {
  CommOptions comm;
  int blasThreads = 0;
};

Status readOptions(const shardlin_options *given, Options &out) {
  const shardlin_options o = given ? *given : shardlin_default_options();
  if (std::isnan(o.timeout_seconds))
    return invalid("options->timeout_seconds is NaN");
  out.comm.timeoutSeconds = o.timeout_seconds <= 0 ? 300.0 : o.timeout_seconds;
  if (o.blas_threads < 0)
    return invalid("options->blas_threads is " + str(o.blas_threads) +
                   "; it must be >= 0 (0: the cores / the ranks per host)");
  out.blasThreads = o.blas_threads;
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// Backends
//===----------------------------------------------------------------------===//

/// The backends the C ABI can connect to, for messages: "threads and mpi".
std::string connectableBackends() {
  std::vector<std::string> names;
  for (const BackendInfo &b : backendRegistry())
    if (b.connect)
      names.push_back(b.name);
  std::string s;
  for (size_t i = 0; i < names.size(); ++i)
    s += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
  return s;
}

/// The registry's backend `name` if this runtime has it and the C ABI can
/// connect to it: InvalidArgument for an unknown name, Unavailable for a
/// backend without a connector (the GPU backends) or not built.
Status findConnectable(const std::string &name, const BackendInfo *&out) {
  out = findBackend(name);
  if (!out)
    return invalid("unknown backend '" + name + "' (the C ABI has " +
                   connectableBackends() + "; this runtime has " +
                   availableBackends() + ")");
  if (!out->connect)
    return Status::unavailable(
        "the " + name + " backend is not available through the C ABI (it has " +
        connectableBackends() +
        ", whose ranks work on host memory); programs for " + name +
        " run with shardlin-run or shardlin-exec");
  return lookupBackend(name, out);
}

/// A context over `comm` with a host device prepared for its rank.
Status makeContext(std::unique_ptr<Communicator> comm,
                   std::unique_ptr<shardlin_context> &out) {
  auto ctx = std::make_unique<shardlin_context>();
  ctx->ownedDevice = createHostDevice();
  SHARDLIN_RETURN_IF_ERROR(ctx->ownedDevice->prepare(*comm));
  ctx->ownedComm = std::move(comm);
  ctx->comm = ctx->ownedComm.get();
  ctx->device = ctx->ownedDevice.get();
  out = std::move(ctx);
  return Status::ok();
}

} // namespace

Status createContexts(const char *fn, const char *outName, const char *backend,
                      int worldSize, const shardlin_options *options,
                      shardlin_context **contexts) {
  const std::string f = fn;
  if (!contexts)
    return invalid(f + ": " + outName + " is null");
  contexts[0] = nullptr;
  if (!backend)
    return invalid(f + ": backend is null");
  Options o;
  SHARDLIN_RETURN_IF_ERROR(readOptions(options, o).withContext(f));
  const BackendInfo *info = nullptr;
  SHARDLIN_RETURN_IF_ERROR(findConnectable(backend, info).withContext(f));
  std::vector<std::unique_ptr<Communicator>> comms;
  SHARDLIN_RETURN_IF_ERROR(
      info->connect(worldSize, o.comm, o.blasThreads, comms).withContext(f));
  std::vector<std::unique_ptr<shardlin_context>> made(comms.size());
  for (size_t r = 0; r < comms.size(); ++r)
    SHARDLIN_RETURN_IF_ERROR(
        makeContext(std::move(comms[r]), made[r]).withContext(f));
  for (size_t r = 0; r < made.size(); ++r)
    contexts[r] = made[r].release();
  return Status::ok();
}

void destroyContext(shardlin_context *context) {
  if (currentContext == context)
    currentContext = nullptr;
  // Destructors of the runtime do not throw; a terminate here would be a
  // runtime bug, not a caller's.
  delete context;
}

void setThreadContext(shardlin_context *context) { currentContext = context; }

shardlin_context *threadContext() { return currentContext; }

} // namespace shardlin::rt::capi

//===----------------------------------------------------------------------===//
// The C++ side (shardlin/runtime/capi/CApi.h)
//===----------------------------------------------------------------------===//

namespace shardlin::rt {

void ContextDeleter::operator()(shardlin_context *context) const {
  capi::destroyContext(context);
}

Status wrapContext(Communicator &comm, RankDevice &device, ContextPtr &out) {
  if (device.kind() != DeviceKind::Host)
    return Status::unavailable(
        "the C ABI runs on host memory; rank " + std::to_string(comm.rank()) +
        "'s device is " + deviceName(comm.device()));
  try {
    auto ctx = std::make_unique<shardlin_context>();
    ctx->comm = &comm;
    ctx->device = &device;
    out.reset(ctx.release());
  } catch (...) {
    return capi::fromException("shardlin::rt::wrapContext");
  }
  return Status::ok();
}

Status contextStatus(const shardlin_context *context) {
  if (!context)
    return Status::invalidArgument("the context is null");
  if (context->status == SHARDLIN_OK)
    return Status::ok();
  // INTERNAL without a message: not even the message fitted in memory.
  return Status::error(capi::fromC(context->status),
                       context->message.empty()
                           ? std::string(capi::statusName(context->status))
                           : context->message);
}

} // namespace shardlin::rt
