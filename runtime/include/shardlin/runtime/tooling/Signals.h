//===- Signals.h - Cleanup of staged outputs when a signal ends a tool -*- C++ -*-===//
//
// The file runner (Runner.h) stages its outputs under temporary names and
// renames them over their targets only once every rank wrote everything
// (docs/robustness.md, "Outputs"). What happens to those temporaries when a
// signal ends the process is the program's choice, not the library's: the
// tools (shardlin-run, shardlin-exec) ask for the handlers below; a program
// that embeds the runtime and calls runProgramWithFiles gets no handler
// unless it calls installOutputSignalHandlers itself, so its own handling of
// SIGINT, SIGTERM, SIGHUP and SIGPIPE is left alone.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_RUNTIME_TOOLING_SIGNALS_H
#define SHARDLIN_RUNTIME_TOOLING_SIGNALS_H

namespace shardlin::rt {

/// Installs process-wide handlers for SIGINT, SIGTERM, SIGHUP and SIGPIPE
/// that remove every staged temporary output still there, then end the
/// process by the signal as it would have ended without them: through the
/// handler that was installed before (LLVM's, in shardlin-run), or the
/// default action. While a run renames its outputs into place, a signal is
/// held until the ranks have either renamed all of them or put every
/// replaced file back (the run's commit, Runner.h): it never leaves some
/// outputs new and others old. A signal ignored at the time of the call (a
/// run under nohup ignores SIGHUP) stays ignored.
///
/// The first call installs them; later calls do nothing. Call it from the
/// main thread before starting any thread (sigaction is process-wide, but a
/// handler installed while other threads run may miss a signal already on
/// its way to them).
void installOutputSignalHandlers();

/// Whether installOutputSignalHandlers has run in this process.
bool outputSignalHandlersInstalled();

} // namespace shardlin::rt

#endif // SHARDLIN_RUNTIME_TOOLING_SIGNALS_H
