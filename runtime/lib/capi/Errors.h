//===- Errors.h - The C ABI's statuses and messages -------------*- C++ -*-===//
//
// Internal to the C ABI. The C codes of shardlin-c/Runtime.h and the C++
// runtime's StatusCode, one pair each; the thread's last error message; and
// the C boundary's rule that no C++ exception leaves it (guarded, and
// fromException for whoever catches one).
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_RUNTIME_LIB_CAPI_ERRORS_H
#define SHARDLIN_RUNTIME_LIB_CAPI_ERRORS_H

#include "shardlin-c/Runtime.h"
#include "shardlin/runtime/base/Status.h"

#include <cstdint>
#include <string>

namespace shardlin::rt::capi {

shardlin_status toC(StatusCode code);
StatusCode fromC(shardlin_status status);

/// "ok", "invalid argument", ... ("unknown" for a value that is no code).
const char *statusName(shardlin_status status);

/// The message of the last call on this thread that failed ("" if none).
const char *lastErrorMessage();

/// Sets it. Never throws: a message that cannot be stored is dropped.
void setLastError(const std::string &message) noexcept;

/// Records `st`'s message as this thread's last error (if it failed) and
/// returns its code.
shardlin_status finish(const Status &st) noexcept;

/// The status of the exception being handled (call it in a catch block),
/// for the C function `fn`: ResourceExhausted for std::bad_alloc, else
/// Internal with what() if there is one.
Status fromException(const char *fn);

/// Runs a function without a context: its status, exceptions caught.
template <typename Body> shardlin_status guarded(const char *fn, Body body) {
  try {
    return finish(body());
  } catch (...) {
    try {
      return finish(fromException(fn));
    } catch (...) {
      return SHARDLIN_INTERNAL;
    }
  }
}

/// The pieces of the C ABI's messages.
inline std::string str(int64_t v) { return std::to_string(v); }
inline Status invalid(const std::string &message) {
  return Status::invalidArgument(message);
}

} // namespace shardlin::rt::capi

#endif // SHARDLIN_RUNTIME_LIB_CAPI_ERRORS_H
