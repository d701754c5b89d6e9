//===- MpiCommunicator.h - One rank per MPI process -------------*- C++ -*-===//
//
// Available when the runtime is built with MPI (SHARDLIN_HAVE_MPI). Uses the
// MPI v-collectives for uneven sizes; f16/bf16 reductions are staged
// through f32 (MpiCommunicator.cpp says why not a user-defined MPI_Op).
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_RUNTIME_MPICOMMUNICATOR_H
#define SHARDLIN_RUNTIME_MPICOMMUNICATOR_H

#include "shardlin/runtime/comm/Communicator.h"

#include <memory>

namespace shardlin::rt {

/// True if this build of the runtime has the MPI backend.
bool mpiAvailable();

/// Owns MPI initialization for a process: initializes MPI (thread level
/// MPI_THREAD_FUNNELED) if it is not initialized yet, and finalizes it on
/// destruction if it initialized it. If a collective of this process timed
/// out and may still be pending (a peer died or never joined), the
/// destructor ends the whole job with MPI_Abort(MPI_COMM_WORLD, 1) instead:
/// MPI_Finalize would wait for the collective forever, and MPI may still
/// write the buffers its caller has freed. Callers print their error first.
class MpiSession {
public:
  static Status create(int *argc, char ***argv,
                       std::unique_ptr<MpiSession> &out);
  ~MpiSession();
  int rank() const { return rank_; }
  int worldSize() const { return worldSize_; }

private:
  MpiSession() = default;
  bool ownsInit_ = false;
  int rank_ = 0;
  int worldSize_ = 1;
};

/// A communicator over a duplicate of MPI_COMM_WORLD. Requires a live
/// MpiSession.
Status createMpiCommunicator(const CommOptions &options,
                             std::unique_ptr<Communicator> &out);

/// True if the process looks like it was started by mpirun/mpiexec (Open MPI,
/// MPICH or PMI environment variables), without initializing MPI.
bool launchedByMpi();

} // namespace shardlin::rt

#endif // SHARDLIN_RUNTIME_MPICOMMUNICATOR_H
