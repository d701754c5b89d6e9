//===- Signals.cpp - Cleanup of staged outputs when a signal ends a tool --===//
//
// The handlers of Signals.h and the lock-free state they read
// (CleanupRegistry.h). Everything a handler touches is an atomic or a
// fixed-size table, and it calls only async-signal-safe functions (unlink,
// sigaction, raise).
//
//===----------------------------------------------------------------------===//

#include "shardlin/runtime/tooling/Signals.h"

#include "tooling/CleanupRegistry.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <mutex>

namespace shardlin::rt {
namespace detail {
namespace {

constexpr int kCleanupSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
constexpr int kNumCleanupSignals =
    static_cast<int>(sizeof kCleanupSignals / sizeof kCleanupSignals[0]);

/// The names of the temporaries that exist now.
constexpr int kTempSlots = 1024;
std::atomic<const char *> liveTemps[kTempSlots];

/// How many CommitSections are alive, and the first signal that arrived
/// while one was (or that is being acted on).
std::atomic<int> commitsInProgress{0};
std::atomic<int> heldSignal{0};

std::atomic<bool> installed{false};
/// Written once, before the handlers are installed; read by the handlers.
struct sigaction previousActions[kNumCleanupSignals];

void removeLiveTemps() {
  for (std::atomic<const char *> &slot : liveTemps)
    if (const char *name = slot.load())
      ::unlink(name);
}

/// Removes the temporaries, then does what would have happened without
/// these handlers: the previous handler (LLVM's, in shardlin-run, removes
/// its own files and re-raises), or the default action, which ends the
/// process with this signal. The signal is blocked while its handler runs,
/// so the raise takes effect when the handler returns.
void endBySignal(int sig, siginfo_t *info, void *context) {
  removeLiveTemps();
  for (int i = 0; i < kNumCleanupSignals; ++i) {
    if (kCleanupSignals[i] != sig)
      continue;
    const struct sigaction &prev = previousActions[i];
    ::sigaction(sig, &prev, nullptr);
    if (prev.sa_handler != SIG_DFL && prev.sa_handler != SIG_IGN) {
      if (prev.sa_flags & SA_SIGINFO)
        prev.sa_sigaction(sig, info, context);
      else
        prev.sa_handler(sig);
    }
  }
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

void onSignal(int sig, siginfo_t *info, void *context) {
  const int savedErrno = errno;
  int none = 0;
  heldSignal.compare_exchange_strong(none, sig);
  // The store above and this load pair with CommitSection's increment and
  // its interrupted(): either the commit sees the signal before it renames
  // anything more, or this handler sees the commit and leaves the signal
  // to it (both may happen; neither can miss the other).
  if (commitsInProgress.load() > 0) {
    errno = savedErrno;
    return;
  }
  endBySignal(sig, info, context);
  errno = savedErrno;
}

} // namespace

int registerTemp(const char *name) {
  for (int i = 0; i < kTempSlots; ++i) {
    const char *expected = nullptr;
    if (liveTemps[i].compare_exchange_strong(expected, name))
      return i;
  }
  return -1;
}

void unregisterTemp(int slot) {
  if (slot >= 0)
    liveTemps[slot].store(nullptr);
}

CommitSection::CommitSection() { commitsInProgress.fetch_add(1); }

CommitSection::~CommitSection() {
  if (commitsInProgress.fetch_sub(1) != 1)
    return;
  // The last commit is over, its files kept or put back: a signal held
  // meanwhile now ends the process, through the handler.
  if (const int sig = heldSignal.load(); sig != 0 && installed.load())
    ::raise(sig);
}

int CommitSection::interrupted() const { return heldSignal.load(); }

} // namespace detail

void installOutputSignalHandlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    using namespace detail;
    // While one of them is handled the others wait: the cleanup is not
    // interrupted half-way by a second signal.
    sigset_t all;
    sigemptyset(&all);
    for (int sig : kCleanupSignals)
      sigaddset(&all, sig);
    for (int i = 0; i < kNumCleanupSignals; ++i) {
      struct sigaction current;
      if (::sigaction(kCleanupSignals[i], nullptr, &current) != 0 ||
          current.sa_handler == SIG_IGN)
        continue;
      previousActions[i] = current;
      struct sigaction action;
      std::memset(&action, 0, sizeof action);
      action.sa_sigaction = onSignal;
      action.sa_flags = SA_SIGINFO | SA_RESTART;
      action.sa_mask = all;
      ::sigaction(kCleanupSignals[i], &action, nullptr);
    }
    installed.store(true);
  });
}

bool outputSignalHandlersInstalled() { return detail::installed.load(); }

} // namespace shardlin::rt
