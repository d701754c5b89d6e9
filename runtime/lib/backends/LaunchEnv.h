//===- LaunchEnv.h - What the launcher told this process --------*- C++ -*-===//
//
// Internal to the runtime: the one place that reads the variables launchers
// export (Open MPI's mpirun, MPICH's Hydra, PMI and PMIx launchers, Slurm).
// Reading them needs no MPI library, so the MPI backend, its stand-in for
// builds without MPI and the backends' runners all answer the same. It
// lives beside the backends, not in mpi/, because code that is not MPI's
// (the registry, the threads and CUDA backends, the file runner) reads it.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_RUNTIME_LIB_BACKENDS_LAUNCHENV_H
#define SHARDLIN_RUNTIME_LIB_BACKENDS_LAUNCHENV_H

#include <cstdlib>
#include <initializer_list>

namespace shardlin::rt::detail {

struct LaunchEnvironment {
  /// A launcher started this process: Open MPI (OMPI_COMM_WORLD_SIZE),
  /// PMI-1/PMI-2 launchers such as Hydra and Slurm (PMI_SIZE), PMIx
  /// launchers (PMIX_RANK) or Hydra (MPI_LOCALNRANKS).
  bool launched = false;
  /// The number of processes it started, or -1 if it does not say.
  int worldSize = -1;
  /// This process's rank among those on its node, or -1.
  int localRank = -1;
  /// The number of the job's processes on this node, or -1.
  int localSize = -1;
};

namespace launch_env_impl {
/// The first of `vars` that is set to an integer in [lo, hi), or -1.
inline int firstInteger(std::initializer_list<const char *> vars, long lo,
                        long hi) {
  for (const char *var : vars)
    if (const char *v = std::getenv(var)) {
      char *end = nullptr;
      long n = std::strtol(v, &end, 10);
      if (end != v && *end == '\0' && n >= lo && n < hi)
        return static_cast<int>(n);
    }
  return -1;
}
} // namespace launch_env_impl

/// Reads the environment (once per call; it does not change during a run).
inline LaunchEnvironment launchEnvironment() {
  using launch_env_impl::firstInteger;
  LaunchEnvironment env;
  for (const char *var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK",
                          "MPI_LOCALNRANKS"}) {
    const char *value = std::getenv(var);
    if (value != nullptr && value[0] != '\0')
      env.launched = true;
  }
  env.worldSize = firstInteger(
      {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "MPI_LOCALNRANKS"}, 1, 1 << 24);
  env.localRank = firstInteger(
      {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"}, 0,
      1 << 20);
  env.localSize = firstInteger(
      {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS"}, 1, 1 << 20);
  return env;
}

inline bool launchedByMpiEnvironment() { return launchEnvironment().launched; }

} // namespace shardlin::rt::detail

#endif // SHARDLIN_RUNTIME_LIB_BACKENDS_LAUNCHENV_H
