//===- LaunchEnv.h - Did mpirun start this process? -------------*- C++ -*-===//
//
// Internal to the runtime: shared by the MPI backend and its stand-in for
// builds without MPI, so launchedByMpi() answers the same in both.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_RUNTIME_LIB_MPI_LAUNCHENV_H
#define SHARDLIN_RUNTIME_LIB_MPI_LAUNCHENV_H

#include <cstdlib>

namespace shardlin::rt::detail {

/// Launchers export these before the program starts: Open MPI's mpirun
/// (OMPI_COMM_WORLD_SIZE), PMI-1/PMI-2 launchers such as MPICH's Hydra and
/// Slurm (PMI_SIZE), PMIx launchers (PMIX_RANK), and MPICH's Hydra
/// (MPI_LOCALNRANKS). Reading them needs no MPI library.
inline bool launchedByMpiEnvironment() {
  static const char *const kVars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE",
                                      "PMIX_RANK", "MPI_LOCALNRANKS"};
  for (const char *var : kVars) {
    const char *value = std::getenv(var);
    if (value != nullptr && value[0] != '\0')
      return true;
  }
  return false;
}

} // namespace shardlin::rt::detail

#endif // SHARDLIN_RUNTIME_LIB_MPI_LAUNCHENV_H
