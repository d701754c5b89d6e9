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
#include "shardlin/runtime/backends/Host.h"

#include <unistd.h>

#include <cstdlib>
#include <string>

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

} // namespace shardlin::rt
