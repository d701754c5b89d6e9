//===- Contexts.cpp - Contexts: options, backends, C++ callers' contexts --===//
//
// A context is made from what the backend registry's connector of the named
// backend hands out (BackendInfo::connect: its launch rules, the world size,
// the BLAS threads of the ranks on this host), with a host device prepared
// for its rank. The C ABI chooses no backend itself: the functions that name
// none name the registry's entry. The options arrive in the caller's
// versioned struct (shardlin_options), read here up to the caller's size.
//
//===----------------------------------------------------------------------===//

#include "capi/Context.h"
#include "capi/Entries.h"
#include "capi/Errors.h"
#include "shardlin/runtime/backends/Host.h"
#include "shardlin/runtime/backends/Registry.h"
#include "shardlin/runtime/capi/CApi.h"
#include "shardlin/runtime/tooling/Flags.h"
#include "shardlin/runtime/tooling/Process.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstring>
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

/// The fields every version of shardlin_options starts with: size, magic
/// and version.
constexpr size_t kOptionsHeader =
    offsetof(shardlin_options, version) + sizeof(uint32_t);

struct Options {
  CommOptions comm;
  int blasThreads = 0;
};

/// Copies the field at `offset` of the caller's struct of `size` bytes into
/// `out` if the field lies wholly within it; else `out` keeps its default.
template <typename T>
void readField(const char *raw, size_t size, size_t offset, T &out) {
  if (offset + sizeof(T) <= size)
    std::memcpy(&out, raw + offset, sizeof(T));
}

std::string hex(uint32_t v) {
  char text[16];
  std::snprintf(text, sizeof text, "0x%08x", v);
  return text;
}

/// The caller's struct, read as bytes: it may be an older, smaller one
/// than this runtime's (only its header is in every version).
Status readOptionsStruct(const shardlin_options *given, shardlin_options &o) {
  const char *raw = reinterpret_cast<const char *>(given);
  size_t size = 0;
  uint32_t magic = 0, version = 0;
  std::memcpy(&size, raw + offsetof(shardlin_options, size), sizeof size);
  std::memcpy(&magic, raw + offsetof(shardlin_options, magic), sizeof magic);
  std::memcpy(&version, raw + offsetof(shardlin_options, version),
              sizeof version);
  if (magic != SHARDLIN_OPTIONS_MAGIC)
    return invalid("options->magic is " + hex(magic) +
                   ", not SHARDLIN_OPTIONS_MAGIC (" +
                   hex(SHARDLIN_OPTIONS_MAGIC) +
                   "): initialize the options with SHARDLIN_OPTIONS_INIT or "
                   "shardlin_default_options()");
  if (version < 1 || version > SHARDLIN_OPTIONS_VERSION)
    return invalid(
        "options->version is " + str(version) +
        "; this runtime reads versions 1 to " + str(SHARDLIN_OPTIONS_VERSION) +
        (version > SHARDLIN_OPTIONS_VERSION
             ? " (the caller was compiled with a newer shardlin-c/Runtime.h "
               "than this runtime's)"
             : ""));
  if (size < kOptionsHeader || size > sizeof(shardlin_options))
    return invalid("options->size is " + str(static_cast<int64_t>(size)) +
                   "; it must be in [" + str(kOptionsHeader) + ", " +
                   str(sizeof(shardlin_options)) +
                   "] (from the size, magic and version fields to this "
                   "runtime's whole shardlin_options)");
  // Version 1. A field added later is read here the same way; a caller's
  // struct that ends before it leaves it at its default.
  readField(raw, size, offsetof(shardlin_options, timeout_seconds),
            o.timeout_seconds);
  readField(raw, size, offsetof(shardlin_options, blas_threads),
            o.blas_threads);
  return Status::ok();
}

Status readOptions(const shardlin_options *given, Options &out) {
  shardlin_options o = shardlin_default_options();
  if (given)
    SHARDLIN_RETURN_IF_ERROR(readOptionsStruct(given, o));
  if (std::isnan(o.timeout_seconds))
    return invalid("options->timeout_seconds is NaN");
  out.comm.timeoutSeconds = o.timeout_seconds <= 0 ? 300.0 : o.timeout_seconds;
  if (o.blas_threads < 0)
    return invalid("options->blas_threads is " + str(o.blas_threads) +
                   "; it must be >= 0 (0: the cores / the ranks per host)");
  out.blasThreads = o.blas_threads;
  return Status::ok();
}

/// Writes `value` into the field at `offset` of the caller's struct of
/// `size` bytes; false when the field lies beyond it (an older struct).
template <typename T>
bool writeField(char *raw, size_t size, size_t offset, const T &value) {
  if (offset + sizeof(T) > size)
    return false;
  std::memcpy(raw + offset, &value, sizeof(T));
  return true;
}

/// The run flags a context takes, for messages: "blas-threads, timeout".
std::string contextFlagNames() {
  std::string names;
  for (const RunFlag &flag : runFlags())
    if (flag.notInContext.empty())
      names += (names.empty() ? "" : ", ") + std::string(flag.name);
  return names;
}

} // namespace

Status setOption(shardlin_options *options, const char *name,
                 const char *value) {
  if (!options)
    return invalid("options is null");
  if (!name || !value)
    return invalid(std::string(name ? "value" : "name") + " is null");
  // The tools' table says which flags there are and which a context takes.
  const RunFlag *flag = findRunFlag(name);
  if (!flag)
    return Status::notFound(std::string("no run option '") + name +
                            "'; a context takes " + contextFlagNames() +
                            " (the names of shardlin-run's flags, without "
                            "dashes)");
  if (!flag->notInContext.empty())
    return invalid("'" + std::string(name) +
                   "' is a run option of the tools that a context has no "
                   "use for: " +
                   std::string(flag->notInContext));
  shardlin_options o = shardlin_default_options();
  SHARDLIN_RETURN_IF_ERROR(readOptionsStruct(options, o));
  // The struct's fields as the RunConfig fields the flags set; a timeout
  // that means the default is the default, so that setting another option
  // does not fail on it.
  RunConfig before;
  before.comm.timeoutSeconds =
      o.timeout_seconds > 0 ? o.timeout_seconds : CommOptions().timeoutSeconds;
  before.blasThreads = o.blas_threads;
  RunConfig after = before;
  SHARDLIN_RETURN_IF_ERROR(applyRunFlag(*flag, value, after));
  if (Status s = checkRunOptions(after); !s)
    return invalid(std::string(name) + "=" + value + ": " + s.message());
  // Only what the flag changed is written, and only within the caller's
  // struct.
  char *raw = reinterpret_cast<char *>(options);
  const size_t size = options->size;
  bool written = true;
  if (after.comm.timeoutSeconds != before.comm.timeoutSeconds)
    written = writeField(raw, size, offsetof(shardlin_options, timeout_seconds),
                         after.comm.timeoutSeconds) &&
              written;
  if (after.blasThreads != before.blasThreads)
    written = writeField(raw, size, offsetof(shardlin_options, blas_threads),
                         after.blasThreads) &&
              written;
  if (!written)
    return invalid("options->size is " + str(static_cast<int64_t>(size)) +
                   ": the caller's shardlin_options (an older header's) "
                   "has no field for '" +
                   std::string(name) + "'");
  return Status::ok();
}

namespace {

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
  // blas_threads 0 is the tools' policy (tooling/Process.h), which the
  // backends leave to their callers: cores / the ranks on this host.
  const int blasThreads =
      o.blasThreads > 0
          ? o.blasThreads
          : blasThreadsPerRank(ranksPerHost(backend, std::max(1, worldSize)));
  std::vector<std::unique_ptr<Communicator>> comms;
  SHARDLIN_RETURN_IF_ERROR(
      info->connect(worldSize, o.comm, blasThreads, comms).withContext(f));
  std::vector<std::unique_ptr<shardlin_context>> made(comms.size());
  for (size_t r = 0; r < comms.size(); ++r)
    SHARDLIN_RETURN_IF_ERROR(
        makeContext(std::move(comms[r]), made[r]).withContext(f));
  for (size_t r = 0; r < made.size(); ++r)
    contexts[r] = made[r].release();
  return Status::ok();
}

Status splitContext(shardlin_context *context, int color, int key,
                    shardlin_context **out) {
  std::unique_ptr<Communicator> comm;
  SHARDLIN_RETURN_IF_ERROR(context->comm->split(color, key, comm));
  std::unique_ptr<shardlin_context> made;
  SHARDLIN_RETURN_IF_ERROR(makeContext(std::move(comm), made));
  *out = made.release();
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
    return Status::unavailable("the C ABI runs on host memory; rank " +
                               std::to_string(comm.rank()) + "'s device is " +
                               deviceName(comm.device()));
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
