//===- BlasKernels.cpp - OpenBLAS's kernel set for this CPU ---------------===//
//
// OpenBLAS built with DYNAMIC_ARCH (Debian's) picks its kernels once, when
// it is loaded, from the CPU's vendor, family and model. Version 0.3.21
// (Debian 12) does not know newer or virtualised models (a VM's generic
// "Intel(R) Xeon(R) Processor", for one) and then falls back to Prescott's
// SSE3 kernels: measured here, 29 GFLOP/s for a 1024^3 sgemm on one core,
// against 108 with the SkylakeX kernels the CPU can run. OPENBLAS_CORETYPE
// overrides the choice, but only in the environment OpenBLAS is loaded
// with. This file only answers which kernels are in use and which would be
// better; re-executing the process with OPENBLAS_CORETYPE set is the tools'
// decision (reexecForBlasKernels, tooling/Process.h).
//
//===----------------------------------------------------------------------===//

#include "shardlin/runtime/backends/Host.h"
#include "shardlin/runtime/exec/Gemm.h"

#include <cblas.h>

#include <strings.h>

#include <cstdlib>
#include <string>

extern "C" char *openblas_get_corename(void);

namespace shardlin::rt {

std::string blasCoreName() {
  const char *name = openblas_get_corename();
  return name ? name : "";
}

std::string suggestedBlasCoreType() {
  if (std::getenv("OPENBLAS_CORETYPE"))
    return {};
  if (const char *keep = std::getenv("SHARDLIN_BLAS_CORETYPE"))
    if (std::string(keep) == "keep")
      return {};
#if defined(__x86_64__) && defined(__GNUC__)
  const std::string core = blasCoreName();
  auto is = [&](const char *name) {
    return strcasecmp(core.c_str(), name) == 0;
  };
  // The kernel sets of 0.3.21 that use AVX-512, and those that use AVX2.
  const bool avx512Core = is("SkylakeX") || is("CooperLake") ||
                          is("SapphireRapids");
  const bool avx2Core = avx512Core || is("Haswell") || is("Zen");
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
      !avx512Core && !is("Zen"))
    return "SkylakeX";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
      !avx2Core)
    return "Haswell";
#endif
  return {};
}

} // namespace shardlin::rt
