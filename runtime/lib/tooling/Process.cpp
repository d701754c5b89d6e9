//===- Process.cpp - What a tool's main does to its own process -----------===//
//
// OpenBLAS built with DYNAMIC_ARCH picks its kernels once, when it is
// loaded; OPENBLAS_CORETYPE overrides the choice only in the environment it
// is loaded with (BlasKernels.cpp says why the choice can be wrong). So a
// tool that finds the fallback re-executes itself with it set: a decision
// about the whole process, which only a tool's main can make.
//
//===----------------------------------------------------------------------===//

#include "shardlin/runtime/tooling/Process.h"
#include "backends/LaunchEnv.h"
#include "shardlin/runtime/backends/Host.h"
#include "shardlin/runtime/backends/Registry.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <thread>

namespace shardlin::rt {

void reexecForBlasKernels(char **argv) {
  const std::string core = suggestedBlasCoreType();
  if (core.empty() || !argv || !argv[0])
    return;
  // Set even if the exec fails: a second attempt would fail alike.
  if (::setenv("OPENBLAS_CORETYPE", core.c_str(), 1) != 0)
    return;
  ::execv("/proc/self/exe", argv);
  // Still here: carry on with the kernels OpenBLAS chose.
}

int blasThreadsPerRank(int ranksPerHost) {
  unsigned cores = std::thread::hardware_concurrency();
  if (cores == 0)
    cores = 1;
  return std::max(1, static_cast<int>(cores) / std::max(1, ranksPerHost));
}

int ranksPerHost(const std::string &backend, int inProcessRanks) {
  const BackendInfo *info = findBackend(backend);
  if (info && info->needsMpiSession && info->needsMpiSession())
    return std::max(1, detail::launchEnvironment().localSize);
  return std::max(1, inProcessRanks);
}

int defaultBlasThreads(const RunOptions &options, const Program &program) {
  if (options.blasThreads > 0)
    return options.blasThreads;
  const int64_t w = options.worldSize > 0    ? options.worldSize
                    : program.worldSize > 0 ? program.worldSize
                                            : 1;
  const int64_t ranks = std::min<int64_t>(w * std::max(1, options.replicas),
                                          kMaxWorldSize);
  return blasThreadsPerRank(ranksPerHost(options.backend, int(ranks)));
}

} // namespace shardlin::rt
