//===- Process.h - What a tool's main does to its own process ---*- C++ -*-===//
//
// Process control belongs to the tools, not to the runtime's core: a
// backend or kernel never re-executes the process or changes its
// environment. The policy a tool applies on top of the core's queries lives
// here too (the host backend only answers, suggestedBlasCoreType).
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_RUNTIME_TOOLING_PROCESS_H
#define SHARDLIN_RUNTIME_TOOLING_PROCESS_H

namespace shardlin::rt {

/// For a tool's main(), first thing (before threads or MPI): when
/// suggestedBlasCoreType() (Host.h) is not empty, re-executes the program
/// (/proc/self/exe, the same arguments) with OPENBLAS_CORETYPE set to it,
/// since OpenBLAS reads it only when it is loaded. Returns when there is
/// nothing to do or the exec fails (the run then goes on as chosen).
void reexecForBlasKernels(char **argv);

} // namespace shardlin::rt

#endif // SHARDLIN_RUNTIME_TOOLING_PROCESS_H
