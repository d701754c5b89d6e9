//===- TargetClones.h - Loops compiled for several x86-64 levels -*- C++ -*-===//
//
// SHARDLIN_TARGET_CLONES on a function compiles it for x86-64-v4 (AVX-512),
// x86-64-v3 (AVX2 + FMA) and the baseline, chosen once at load time by the
// CPU (GCC's target_clones, on ELF x86-64 only). The host's vectorized
// loops (HostElementwise.cpp, HostReductions.cpp) use it. Not under
// ThreadSanitizer: the clones' resolvers run while the dynamic loader
// relocates the program, before TSan's runtime is up, and an instrumented
// resolver crashes there.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_RUNTIME_LIB_BACKENDS_HOST_TARGETCLONES_H
#define SHARDLIN_RUNTIME_LIB_BACKENDS_HOST_TARGETCLONES_H

#if defined(__x86_64__) && defined(__GNUC__) && defined(__ELF__) &&          \
    !defined(SHARDLIN_NO_TARGET_CLONES) && !defined(__SANITIZE_THREAD__)
#define SHARDLIN_TARGET_CLONES                                                 \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3",             \
                               "default")))
#else
#define SHARDLIN_TARGET_CLONES
#endif

#endif // SHARDLIN_RUNTIME_LIB_BACKENDS_HOST_TARGETCLONES_H
