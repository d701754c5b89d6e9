//===- Registry.cpp - The backends, and running a program on one ----------===//
//
// Adding a backend: one entry in makeRegistry() below (name, summary, device
// kind, whether it is built, its launch rules, its runner and its
// connector), the runner and connector (usually runRanksOnThreads or one
// runRank over a communicator of the backend: see host/ThreadsBackend.cpp
// and mpi/MpiBackend.cpp), and the communicator itself. runProgram, the
// tools, their help texts and the C ABI pick it up from here; see
// docs/runtime.md.
//
//===----------------------------------------------------------------------===//

#include "backends/Backends.h"
#include "backends/LaunchEnv.h"
#include "shardlin/runtime/backends/Mpi.h"

namespace shardlin::rt {

namespace {

bool always() { return true; }
bool never() { return false; }
bool launched() { return detail::launchEnvironment().launched; }

#if !defined(SHARDLIN_GPU_MODULE)
Status notBuilt(const SharedProgram &, const RunOptions &,
                const RankCallbacks &,
                std::vector<RankResult> &) {
  return Status::unavailable("this backend is not built into this runtime");
}
#endif

std::vector<BackendInfo> makeRegistry() {
  std::vector<BackendInfo> r;
  r.push_back({"threads", "W ranks as threads of one process",
               DeviceKind::Host, true, "", never, detail::runThreads,
               detail::connectThreads});
  r.push_back({"mpi", "one process per rank under mpirun", DeviceKind::Host,
               mpiAvailable(), "it needs an MPI library at configure time",
               always, detail::runMpi, detail::connectMpi});
  // The GPU backends are "built" when the GPU module is: whether it can be
  // loaded here (the file, CUDA's libraries, a driver) shows when one is
  // run, so that listing them loads nothing. Embedders cannot connect to
  // them (no connector): GPU programs run through runProgram.
#if defined(SHARDLIN_GPU_MODULE)
  r.push_back({"cuda-local", "W ranks on one GPU", DeviceKind::Cuda, true, "",
               never, detail::runCudaLocalFromModule, nullptr});
#if defined(SHARDLIN_GPU_MODULE_HAS_NCCL)
  const bool nccl = true;
#else
  const bool nccl = false;
#endif
  r.push_back({"nccl", "one GPU per rank", DeviceKind::Cuda, nccl,
               "NCCL was not found at configure time", launched,
               detail::runNcclFromModule, nullptr});
#else
  const char *noCuda = "it needs the CUDA toolkit at configure time";
  r.push_back({"cuda-local", "W ranks on one GPU", DeviceKind::Cuda, false,
               noCuda, never, notBuilt, nullptr});
  r.push_back({"nccl", "one GPU per rank", DeviceKind::Cuda, false, noCuda,
               launched, notBuilt, nullptr});
#endif
  return r;
}

} // namespace

const std::vector<BackendInfo> &backendRegistry() {
  static const std::vector<BackendInfo> registry = makeRegistry();
  return registry;
}

const BackendInfo *findBackend(const std::string &name) {
  for (const BackendInfo &b : backendRegistry())
    if (name == b.name)
      return &b;
  return nullptr;
}

Status lookupBackend(const std::string &name, const BackendInfo *&out) {
  out = findBackend(name);
  if (!out)
    return Status::invalidArgument("unknown backend '" + name +
                                   "' (available: " + availableBackends() +
                                   ")");
  if (!out->built) {
    Status s = Status::unavailable(
        "backend '" + name + "' is not built into this runtime (" +
        out->missing + "; available: " + availableBackends() + ")");
    out = nullptr;
    return s;
  }
  return Status::ok();
}

std::string availableBackends() {
  std::string s;
  for (const BackendInfo &b : backendRegistry())
    if (b.built)
      s += (s.empty() ? "" : ", ") + std::string(b.name);
  return s;
}

std::string backendNames() {
  std::string s;
  for (const BackendInfo &b : backendRegistry())
    s += (s.empty() ? "" : "|") + std::string(b.name);
  return s;
}

std::string describeBackends() {
  const std::vector<BackendInfo> &all = backendRegistry();
  std::string s;
  for (size_t i = 0; i < all.size(); ++i) {
    if (i > 0)
      s += i + 1 == all.size() ? " or " : ", ";
    s += std::string(all[i].name) + " (" + all[i].summary + ")";
  }
  return s;
}

std::string availableGemmBackends() {
#if defined(SHARDLIN_GPU_MODULE)
  return "openblas, cublas";
#else
  return "openblas";
#endif
}

std::string describeGpuModule() {
#if defined(SHARDLIN_GPU_MODULE)
  std::string why;
  const std::string path = detail::findGpuModule(why);
  if (path.empty())
    return "module missing (" + why + ")";
  return "module " + path + " (not loaded; shardlin-exec --gpus lists the "
         "devices)";
#else
  return "not built with CUDA";
#endif
}

std::string describeGpus() {
#if defined(SHARDLIN_GPU_MODULE)
  std::string why;
  const detail::GpuModuleEntries *m = detail::gpuModule(why);
  if (!m)
    return "none (" + why + ")";
  return m->describeDevices();
#else
  return "not built with CUDA";
#endif
}

Status runProgram(const Program &program, const RunOptions &options,
                  const RankCallbacks &callbacks,
                  std::vector<RankResult> *ranks) {
  // One copy and one digest for the run, shared by its ranks.
  return runProgram(SharedProgram(program), options, callbacks, ranks);
}

Status runProgram(const SharedProgram &program, const RunOptions &options,
                  const RankCallbacks &callbacks,
                  std::vector<RankResult> *ranks) {
  const BackendInfo *backend = nullptr;
  SHARDLIN_RETURN_IF_ERROR(
      lookupBackend(options.backend, backend).withSubject("backend"));
  SHARDLIN_RETURN_IF_ERROR(checkRunOptions(options));
  if (options.device >= 0 && backend->device == DeviceKind::Host) {
    std::string gpuBackends;
    for (const BackendInfo &b : backendRegistry())
      if (b.device != DeviceKind::Host)
        gpuBackends += (gpuBackends.empty() ? "" : ", ") + std::string(b.name);
    return Status::invalidArgument("a device number applies to the GPU "
                                   "backends (" +
                                   gpuBackends + "), not to '" +
                                   options.backend + "'")
        .withSubject("device");
  }
  std::vector<RankResult> local;
  std::vector<RankResult> &out = ranks ? *ranks : local;
  out.clear();
  if (options.checkReplicated)
    return backend->run(program, options, callbacks, out);
  // The ranks read the option with their callbacks (runRank).
  RankCallbacks unchecked = callbacks;
  unchecked.checkReplicated = false;
  if (callbacks.perReplica) {
    auto each = std::make_shared<std::vector<RankCallbacks>>(
        *callbacks.perReplica);
    for (RankCallbacks &c : *each)
      c.checkReplicated = false;
    unchecked.perReplica = std::move(each);
  }
  return backend->run(program, options, unchecked, out);
}

} // namespace shardlin::rt
