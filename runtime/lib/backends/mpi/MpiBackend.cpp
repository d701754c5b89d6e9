//===- MpiBackend.cpp - The mpi backend -----------------------------------===//
//
// This process is one rank of an MPI job, on host memory: the MPI
// communicator (MpiCommunicator.cpp, or NoMpi.cpp's refusals in a build
// without MPI) and the host device.
//
//===----------------------------------------------------------------------===//

#include "backends/Backends.h"
#include "shardlin/runtime/backends/Host.h"
#include "shardlin/runtime/backends/Mpi.h"

#include <mutex>

namespace shardlin::rt::detail {

namespace {

/// The OpenBLAS threads the caller chose (the tools' policy,
/// tooling/Process.h, counts the ranks the launcher put on this host); 0
/// leaves OpenBLAS as it is.
void setHostBlasThreads(int blasThreads) {
  if (blasThreads > 0)
    setBlasThreads(blasThreads);
}

/// The process's MPI session for embedders (connectMpi): created with the
/// first MPI communicator (MPI is initialized then, unless the caller did),
/// destroyed at exit (which finalizes MPI if the session initialized it, or
/// ends the job with MPI_Abort if a collective timed out and may still be
/// pending; see MpiSession).
Status embedderSession() {
  static std::mutex mutex;
  static std::unique_ptr<MpiSession> session;
  std::lock_guard<std::mutex> lock(mutex);
  if (session)
    return Status::ok();
  return MpiSession::create(nullptr, nullptr, session);
}

} // namespace

Status runMpi(const SharedProgram &program, const RunOptions &options,
              const RankCallbacks &callbacks, std::vector<RankResult> &ranks) {
  std::unique_ptr<Communicator> comm;
  SHARDLIN_RETURN_IF_ERROR(createMpiCommunicator(options.comm, comm));
  if (options.wrapCommunicator)
    comm = options.wrapCommunicator(std::move(comm));
  int w = 0;
  SHARDLIN_RETURN_IF_ERROR(
      resolveLaunchedRanks(program.program(), options, comm->worldSize(), w));
  setHostBlasThreads(options.blasThreads);
  std::unique_ptr<RankDevice> device = createHostDevice();
  // The file runner's callbacks may wait up to the timeout for a file (an
  // input FIFO): its agreements wait a grace longer, so that a rank whose
  // wait failed still joins them and every rank names it, instead of all
  // timing out together (issue 27).
  std::unique_ptr<Communicator> agree;
  if (options.abandonLateRanks) {
    CommOptions longer = options.comm;
    longer.timeoutSeconds += lateRankGraceSeconds(options.comm);
    SHARDLIN_RETURN_IF_ERROR(createMpiCommunicator(longer, agree));
  }
  ranks.push_back(runWorldRank(program, options.replicas, *comm, *device,
                               callbacks, agree.get()));
  return ranks.back().status;
}

Status connectMpi(int worldSize, const CommOptions &options, int blasThreads,
                  std::vector<std::unique_ptr<Communicator>> &comms) {
  if (worldSize < 0)
    return Status::invalidArgument(
        "the world size is " + std::to_string(worldSize) +
        "; for mpi it is 0 or the MPI job's size");
  SHARDLIN_RETURN_IF_ERROR(embedderSession());
  std::unique_ptr<Communicator> comm;
  SHARDLIN_RETURN_IF_ERROR(createMpiCommunicator(options, comm));
  if (worldSize != 0 && worldSize != comm->worldSize())
    return Status::invalidArgument(
        "the world size " + std::to_string(worldSize) +
        " does not match the MPI job's " + std::to_string(comm->worldSize()) +
        " processes (0 takes the job's size)");
  setHostBlasThreads(blasThreads);
  comms.clear();
  comms.push_back(std::move(comm));
  return Status::ok();
}

} // namespace shardlin::rt::detail
