//===- Backends.cpp - The backend registry and the CPU backends -----------===//
//
// Adding a backend: one entry in registry() below (name, summary, device
// kind, whether it is built, its launch rules and its runner), the runner
// (usually runRanksOnThreads or one runRank over a communicator of the
// backend), and the communicator itself. Tools, help texts, runProgram and
// the file runner pick it up from here; see docs/runtime.md.
//
//===----------------------------------------------------------------------===//

#include "Backends.h"

#include "mpi/LaunchEnv.h"
#include "shardlin/runtime/GpuModule.h"
#include "shardlin/runtime/MpiCommunicator.h"
#include "shardlin/runtime/ThreadsCommunicator.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>

namespace shardlin::rt {
namespace detail {

namespace {

/// What the rank threads of one run share with the thread that waits for
/// them. Owned jointly, so that a rank given up on (RunOptions::
/// abandonLateRanks) keeps what it uses alive after runProgram returned.
struct ThreadsRun {
  Program program;
  RankCallbacks callbacks;
  std::vector<std::unique_ptr<Communicator>> comms, agree;
  std::function<std::unique_ptr<RankDevice>()> makeDevice;

  std::mutex mutex;
  std::condition_variable changed;
  std::vector<RankResult> ranks;
  std::vector<char> done;
  /// Which callback each rank is in (argShapes, bind or finish: outside the
  /// runtime's timed waits), or null: in the runtime, whose waits are
  /// collectives with the timeout.
  std::vector<const char *> outside;
};

/// The callbacks of rank threads, reporting where each rank is.
RankCallbacks trackedCallbacks(const std::shared_ptr<ThreadsRun> &run) {
  RankCallbacks c = run->callbacks;
  // Only a weak reference: the callbacks are a member of `run`.
  std::weak_ptr<ThreadsRun> weak = run;
  auto mark = [weak](int rank, const char *where) {
    if (std::shared_ptr<ThreadsRun> r = weak.lock()) {
      std::lock_guard<std::mutex> lock(r->mutex);
      r->outside[size_t(rank)] = where;
    }
  };
  if (run->callbacks.argShapes)
    c.argShapes = [mark, shapesOf = run->callbacks.argShapes](
                      int rank, std::vector<std::vector<int64_t>> &shapes,
                      std::vector<std::string> &names) {
      mark(rank, "reading its inputs' shapes (argShapes)");
      Status s = shapesOf(rank, shapes, names);
      mark(rank, nullptr);
      return s;
    };
  if (run->callbacks.bind)
    c.bind = [mark, bind = run->callbacks.bind](const Plan &plan,
                                                RankDevice &device,
                                                RankBuffers &buffers) {
      mark(plan.rank(), "loading its inputs (bind)");
      Status s = bind(plan, device, buffers);
      mark(plan.rank(), nullptr);
      return s;
    };
  if (run->callbacks.finish)
    c.finish = [mark, finish = run->callbacks.finish](
                   const Plan &plan, RankDevice &device,
                   const RankBuffers &buffers, Communicator &agree) {
      mark(plan.rank(), "writing its outputs (finish)");
      Status s = finish(plan, device, buffers, agree);
      mark(plan.rank(), nullptr);
      return s;
    };
  return c;
}

} // namespace

Status runRanksOnThreads(
    const Program &program, const RunOptions &options,
    const RankCallbacks &callbacks,
    std::vector<std::unique_ptr<Communicator>> comms,
    std::vector<std::unique_ptr<Communicator>> agree,
    std::function<std::unique_ptr<RankDevice>()> makeDevice,
    std::vector<RankResult> &ranks) {
  const size_t w = comms.size();
  auto run = std::make_shared<ThreadsRun>();
  run->program = program;
  run->callbacks = callbacks;
  run->comms = std::move(comms);
  run->agree = std::move(agree);
  run->makeDevice = std::move(makeDevice);
  run->ranks.assign(w, RankResult());
  run->done.assign(w, 0);
  run->outside.assign(w, nullptr);
  const RankCallbacks tracked = trackedCallbacks(run);
  std::vector<std::thread> threads;
  for (size_t r = 0; r < w; ++r)
    threads.emplace_back([run, tracked, r] {
      std::unique_ptr<RankDevice> device = run->makeDevice();
      RankResult result =
          runRank(run->program, *run->comms[r], *device, tracked,
                  run->agree.empty() ? nullptr : run->agree[r].get());
      device.reset();
      std::lock_guard<std::mutex> lock(run->mutex);
      run->ranks[r] = std::move(result);
      run->done[r] = 1;
      run->outside[r] = nullptr;
      run->changed.notify_all();
    });

  // Wait for every rank; but once one has failed, the ranks still out of
  // the runtime's reach (in a callback, e.g. reading an input that never
  // comes) get a grace period, then are given up on if the caller allows.
  const double grace = std::min(options.comm.timeoutSeconds, 2.0);
  std::vector<size_t> late;
  {
    std::unique_lock<std::mutex> lock(run->mutex);
    auto allDone = [&] {
      return std::all_of(run->done.begin(), run->done.end(),
                         [](char d) { return d != 0; });
    };
    auto anyFailed = [&] {
      for (size_t r = 0; r < w; ++r)
        if (run->done[r] && !run->ranks[r].status)
          return true;
      return false;
    };
    run->changed.wait(lock, [&] { return allDone() || anyFailed(); });
    if (!allDone() && options.abandonLateRanks) {
      run->changed.wait_for(
          lock, std::chrono::duration<double>(grace), allDone);
      // Only ranks in a callback: one in a collective fails within its
      // timeout, and its own computation ends.
      for (size_t r = 0; r < w; ++r)
        if (!run->done[r] && run->outside[r])
          late.push_back(r);
    }
    run->changed.wait(lock, [&] {
      for (size_t r = 0; r < w; ++r)
        if (!run->done[r] &&
            std::find(late.begin(), late.end(), r) == late.end())
          return false;
      return true;
    });
    ranks = run->ranks;
    char limit[32];
    std::snprintf(limit, sizeof limit, "%g", grace);
    for (size_t r : late) {
      const char *where = run->outside[r];
      ranks[r].rank = static_cast<int>(r);
      ranks[r].status = Status::deadlineExceeded(
          "rank " + std::to_string(r) + ": still " + where + " " + limit +
          " s after another rank failed; given up on (its thread is left "
          "running and ends with the process)");
    }
  }
  for (size_t r = 0; r < w; ++r) {
    if (std::find(late.begin(), late.end(), r) != late.end())
      threads[r].detach();
    else
      threads[r].join();
  }
  return rootCause(ranks);
}

Status checkThreadsLaunch(const std::string &useMpi) {
  // Every process of an mpirun job would run all W ranks and write the same
  // outputs: a mistake, not a way to scale out.
  const LaunchEnvironment env = launchEnvironment();
  if (env.worldSize > 1)
    return Status::invalidArgument(
        "the threads backend runs all ranks as threads of one process, but "
        "the launcher started " +
        std::to_string(env.worldSize) + " processes; under mpirun use " +
        useMpi + " (one process per rank)");
  return Status::ok();
}

int autoBlasThreads(int ranksPerHost) {
  unsigned cores = std::thread::hardware_concurrency();
  if (cores == 0)
    cores = 1;
  return std::max(1, static_cast<int>(cores) / std::max(1, ranksPerHost));
}

} // namespace detail

namespace {

bool always() { return true; }
bool never() { return false; }
bool launched() { return detail::launchEnvironment().launched; }

/// threads: W ranks as threads of this process, on host memory.
Status runThreads(const Program &program, const RunOptions &options,
                  const RankCallbacks &callbacks,
                  std::vector<RankResult> &ranks) {
  SHARDLIN_RETURN_IF_ERROR(detail::checkThreadsLaunch("--backend=mpi"));
  int w = 0;
  SHARDLIN_RETURN_IF_ERROR(
      resolveWorldSize(program, options.worldSize, 0, w));
  setBlasThreads(options.blasThreads > 0 ? options.blasThreads
                                         : detail::autoBlasThreads(w));
  std::vector<std::unique_ptr<Communicator>> comms =
      createThreadsGroup(w, options.comm);
  if (options.wrapCommunicator)
    for (std::unique_ptr<Communicator> &c : comms)
      c = options.wrapCommunicator(std::move(c));
  return detail::runRanksOnThreads(program, options, callbacks,
                                   std::move(comms), {}, createHostDevice,
                                   ranks);
}

/// mpi: this process is one rank of an MPI job, on host memory.
Status runMpi(const Program &program, const RunOptions &options,
              const RankCallbacks &callbacks, std::vector<RankResult> &ranks) {
  std::unique_ptr<Communicator> comm;
  SHARDLIN_RETURN_IF_ERROR(createMpiCommunicator(options.comm, comm));
  if (options.wrapCommunicator)
    comm = options.wrapCommunicator(std::move(comm));
  int w = 0;
  SHARDLIN_RETURN_IF_ERROR(
      resolveWorldSize(program, options.worldSize, comm->worldSize(), w));
  const int local = detail::launchEnvironment().localSize;
  setBlasThreads(options.blasThreads > 0
                     ? options.blasThreads
                     : detail::autoBlasThreads(std::max(1, local)));
  std::unique_ptr<RankDevice> device = createHostDevice();
  ranks.push_back(runRank(program, *comm, *device, callbacks));
  return ranks.back().status;
}

#if defined(SHARDLIN_GPU_MODULE)
/// The GPU backends' runners: load the GPU module (GpuModule.cpp) on the
/// first call and run its runner.
Status gpuModuleMissing(const char *backend, const std::string &why) {
  return Status::unavailable(std::string("the ") + backend +
                             " backend needs the runtime's GPU module: " +
                             why);
}

Status runCudaLocalFromModule(const Program &program,
                              const RunOptions &options,
                              const RankCallbacks &callbacks,
                              std::vector<RankResult> &ranks) {
  std::string why;
  const detail::GpuModuleEntries *m = detail::gpuModule(why);
  if (!m)
    return gpuModuleMissing("cuda-local", why);
  return m->runCudaLocal(program, options, callbacks, ranks);
}

Status runNcclFromModule(const Program &program, const RunOptions &options,
                         const RankCallbacks &callbacks,
                         std::vector<RankResult> &ranks) {
  std::string why;
  const detail::GpuModuleEntries *m = detail::gpuModule(why);
  if (!m)
    return gpuModuleMissing("nccl", why);
  return m->runNccl(program, options, callbacks, ranks);
}
#else
Status notBuilt(const Program &, const RunOptions &, const RankCallbacks &,
                std::vector<RankResult> &) {
  return Status::unavailable("this backend is not built into this runtime");
}
#endif

std::vector<BackendInfo> makeRegistry() {
  std::vector<BackendInfo> r;
  r.push_back({"threads", "W ranks as threads of one process",
               DeviceKind::Host, true, "", never, runThreads});
  r.push_back({"mpi", "one process per rank under mpirun", DeviceKind::Host,
               mpiAvailable(), "it needs an MPI library at configure time",
               always, runMpi});
  // The GPU backends are "built" when the GPU module is: whether it can be
  // loaded here (the file, CUDA's libraries, a driver) shows when one is
  // run, so that listing them loads nothing.
#if defined(SHARDLIN_GPU_MODULE)
  r.push_back({"cuda-local", "W ranks on one GPU", DeviceKind::Cuda, true, "",
               never, runCudaLocalFromModule});
#if defined(SHARDLIN_GPU_MODULE_HAS_NCCL)
  const bool nccl = true;
#else
  const bool nccl = false;
#endif
  r.push_back({"nccl", "one GPU per rank", DeviceKind::Cuda, nccl,
               "NCCL was not found at configure time", launched,
               runNcclFromModule});
#else
  const char *noCuda = "it needs the CUDA toolkit at configure time";
  r.push_back({"cuda-local", "W ranks on one GPU", DeviceKind::Cuda, false,
               noCuda, never, notBuilt});
  r.push_back({"nccl", "one GPU per rank", DeviceKind::Cuda, false, noCuda,
               launched, notBuilt});
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

} // namespace shardlin::rt
