//===- NoMpi.cpp - The MPI entry points of a build without MPI ------------===//
//
// Keeps the MPI API linkable when MPI was not found, so callers need no
// #ifdef: they ask mpiAvailable(), or get a Status that says why not.
//
//===----------------------------------------------------------------------===//

#include "shardlin/runtime/backends/Mpi.h"

#include "backends/LaunchEnv.h"

namespace shardlin::rt {

static const char kNoMpi[] =
    "shardlin was built without MPI (reconfigure with SHARDLIN_ENABLE_MPI=ON "
    "on a machine where CMake finds MPI)";

bool mpiAvailable() { return false; }

Status MpiSession::create(int *, char ***, std::unique_ptr<MpiSession> &out) {
  out.reset();
  return Status::unavailable(std::string("MpiSession::create: ") + kNoMpi);
}

MpiSession::~MpiSession() = default;

Status createMpiCommunicator(const CommOptions &,
                             std::unique_ptr<Communicator> &out) {
  out.reset();
  return Status::unavailable(std::string("createMpiCommunicator: ") + kNoMpi);
}

bool launchedByMpi() { return detail::launchedByMpiEnvironment(); }

} // namespace shardlin::rt
