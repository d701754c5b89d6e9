//===- ThreadsBackend.cpp - The threads backend ---------------------------===//
//
// W ranks as threads of this process, on host memory: one in-process group
// of communicators (ThreadsCommunicator.cpp), a host device per rank, and
// the thread launcher (exec/ThreadLauncher.h).
//
//===----------------------------------------------------------------------===//

#include "backends/Backends.h"
#include "backends/LaunchEnv.h"
#include "exec/ThreadLauncher.h"
#include "shardlin/runtime/backends/Host.h"


namespace shardlin::rt {

namespace detail {

Status checkThreadsLaunch(const char *backend) {
  // Every process of an mpirun job would run all W ranks and write the same
  // outputs: a mistake, not a way to scale out.
  const LaunchEnvironment env = launchEnvironment();
  if (env.worldSize > 1)
    return Status::invalidArgument(
        std::string("the ") + backend +
        " backend runs all ranks as threads of one process, but the "
        "launcher started " +
        std::to_string(env.worldSize) +
        " processes; under mpirun use a backend with one process per rank "
        "(mpi, or nccl for GPUs)");
  return Status::ok();
}

Status runThreads(const SharedProgram &program, const RunOptions &options,
                  const RankCallbacks &callbacks,
                  std::vector<RankResult> &ranks) {
  SHARDLIN_RETURN_IF_ERROR(checkThreadsLaunch("threads"));
  int w = 0;
  SHARDLIN_RETURN_IF_ERROR(resolveLaunchedRanks(program.program(), options, 0, w));
  std::vector<std::unique_ptr<Communicator>> comms;
  SHARDLIN_RETURN_IF_ERROR(
      connectThreads(w, options.comm, options.blasThreads, comms));
  if (options.wrapCommunicator)
    for (std::unique_ptr<Communicator> &c : comms)
      c = options.wrapCommunicator(std::move(c));
  return runRanksOnThreads(program, options, callbacks,
                           ThreadRanks{std::move(comms),
                                       {},
                                       createHostDevice,
                                       /*reuseThreads=*/true},
                           ranks);
}

Status connectThreads(int worldSize, const CommOptions &options,
                      int blasThreads,
                      std::vector<std::unique_ptr<Communicator>> &comms) {
  SHARDLIN_RETURN_IF_ERROR(checkThreadsLaunch("threads"));
  SHARDLIN_RETURN_IF_ERROR(checkWorldSizeRange(worldSize));
  comms = createThreadsGroup(worldSize, options);
  // The count is the caller's policy (the tools': tooling/Process.h); 0
  // leaves OpenBLAS as it is.
  if (blasThreads > 0)
    setBlasThreads(blasThreads);
  return Status::ok();
}

} // namespace detail
} // namespace shardlin::rt
