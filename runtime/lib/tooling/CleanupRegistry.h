//===- CleanupRegistry.h - What the signal handlers clean up ----*- C++ -*-===//
//
// The state the handlers of Signals.h share with the code that writes
// outputs (OutputFile.cpp): the names of the temporaries that exist now, and
// whether a commit (the renames of a run's outputs) is in progress. Both are
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

/// A commit in progress on this thread: the renames that put a run's staged
/// outputs into place, and the agreement that keeps or undoes them. While
/// any CommitSection lives, SIGINT, SIGTERM, SIGHUP and SIGPIPE (if their
/// handlers are installed) are held instead of acted on: a handler that
/// removed temporaries in the middle of the renames would leave some
/// outputs new and others old. The commit asks interrupted() between steps
/// and undoes its renames if a signal came; the last section to end then
/// raises the held signal, which ends the process as it would have.
class CommitSection {
public:
  CommitSection();
  ~CommitSection();
  CommitSection(const CommitSection &) = delete;
  CommitSection &operator=(const CommitSection &) = delete;

  /// The signal held since the section began (or one that arrived just
  /// before and was not yet acted on), or 0.
  int interrupted() const;
};

} // namespace shardlin::rt::detail

#endif // SHARDLIN_RUNTIME_LIB_TOOLING_CLEANUPREGISTRY_H
