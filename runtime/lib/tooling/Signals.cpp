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
#include <csignal>
#include <cstring>
#include <mutex>

namespace shardlin::rt {
namespace detail {
namespace {

constexpr int kCleanupSignals[] = {SIGINT, SIGTERM, SIGHUP};
constexpr int kNumCleanupSignals =
    static_cast<int>(sizeof kCleanupSignals / sizeof kCleanupSignals[0]);

/// The names of the temporaries that exist now.
constexpr int kTempSlots = 1024;
std::atomic<const char *> liveTemps[kTempSlots];

std::atomic<bool> installed{false};
/// Written once, before the handlers are installed; read by the handlers.
struct sigaction previousActions[kNumCleanupSignals];

/// Removes the temporaries, then does what would have happened without
/// these handlers: the previous handler (LLVM's, in shardlin-run, removes
/// its own files and re-raises), or the default action, which ends the
/// process with this signal. The signal is blocked while its handler runs,
/// so the raise takes effect when the handler returns.
void removeTempsAndReraise(int sig, siginfo_t *info, void *context) {
  for (std::atomic<const char *> &slot : liveTemps)
    if (const char *name = slot.load())
      ::unlink(name);
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

} // namespace detail

void installOutputSignalHandlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    using namespace detail;
    for (int i = 0; i < kNumCleanupSignals; ++i) {
      struct sigaction current;
      if (::sigaction(kCleanupSignals[i], nullptr, &current) != 0 ||
          current.sa_handler == SIG_IGN)
        continue;
      previousActions[i] = current;
      struct sigaction action;
      std::memset(&action, 0, sizeof action);
      action.sa_sigaction = removeTempsAndReraise;
      action.sa_flags = SA_SIGINFO;
      sigemptyset(&action.sa_mask);
      ::sigaction(kCleanupSignals[i], &action, nullptr);
    }
    installed.store(true);
  });
}

bool outputSignalHandlersInstalled() { return detail::installed.load(); }

} // namespace shardlin::rt
