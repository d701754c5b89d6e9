//===- CleanupRegistry.h - What the signal handlers clean up ----*- C++ -*-===//
//
// The state the handlers of Signals.h share with the code that writes
// outputs (OutputFile.cpp): the names of the temporaries that exist now,
// lock-free so that a handler can read them (async-signal-safe). Without the
// handlers installed the registry is kept all the same, and costs a few
// atomic operations per output.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_RUNTIME_LIB_TOOLING_CLEANUPREGISTRY_H
#define SHARDLIN_RUNTIME_LIB_TOOLING_CLEANUPREGISTRY_H

namespace shardlin::rt::detail {

/// Registers the name of a temporary file while it exists, for the handlers
/// to remove; returns its slot, or -1 when every slot is taken (the file is
/// then still removed on every path but a signal). `name` must stay valid
/// until unregisterTemp.
int registerTemp(const char *name);
void unregisterTemp(int slot);

} // namespace shardlin::rt::detail

#endif // SHARDLIN_RUNTIME_LIB_TOOLING_CLEANUPREGISTRY_H
