//===- Status.h - Error values for the shardlin runtime ---------*- C++ -*-===//
//
// The runtime reports failures as values, not exceptions: every call that can
// fail returns a Status that names the failing call, the rank and the reason.
// This keeps the runtime usable from code built without exceptions (MLIR's
// libraries are) and makes errors cross thread boundaries explicitly.
//
// A failed Status carries a code, so that callers and tests branch on what
// kind of failure it is and leave the message to people. Every error states
// its code (there is no error without one): the user's fault
// (InvalidArgument, NotFound), the machine's (ResourceExhausted, IoError,
// Unavailable, DeadlineExceeded), another rank's (Aborted) or shardlin's
// own (Internal). Messages use the runtime's words, not a tool's flags:
// the tools say which of their options a value came from.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_RUNTIME_BASE_STATUS_H
#define SHARDLIN_RUNTIME_BASE_STATUS_H

#include <string>
#include <utility>

namespace shardlin::rt {

/// What kind of failure a Status reports.
enum class StatusCode {
  Ok,
  /// The caller's input is wrong: a count, a shape, a dtype, a file's content,
  /// an option's value.
  InvalidArgument,
  /// Something the caller named does not exist: a file, a backend's device,
  /// an entry function.
  NotFound,
  /// Memory (host or device) or another finite resource ran out; the input
  /// may be fine on a larger machine.
  ResourceExhausted,
  /// A wait on other ranks passed its deadline (the run's timeout).
  DeadlineExceeded,
  /// This rank stopped because another rank failed first; the root cause is
  /// that rank's status, not this one.
  Aborted,
  /// Reading or writing a file failed.
  IoError,
  /// A backend or device that the run needs is not available in this build or
  /// on this machine.
  Unavailable,
  /// A library call (MPI, NCCL, CUDA, BLAS) failed for a reason that is not
  /// one of the above, or an invariant of the runtime itself does not hold:
  /// shardlin's own fault, never the user's input.
  Internal,
};

/// The code's name as written in messages and tests: "invalid argument".
const char *statusCodeName(StatusCode code);

class [[nodiscard]] Status {
public:
  Status() = default;
  static Status ok() { return Status(); }
  static Status error(StatusCode code, std::string message) {
    Status s;
    s.code_ = code == StatusCode::Ok ? StatusCode::Internal : code;
    s.message_ = std::move(message);
    return s;
  }
  static Status invalidArgument(std::string message) {
    return error(StatusCode::InvalidArgument, std::move(message));
  }
  static Status notFound(std::string message) {
    return error(StatusCode::NotFound, std::move(message));
  }
  static Status resourceExhausted(std::string message) {
    return error(StatusCode::ResourceExhausted, std::move(message));
  }
  static Status deadlineExceeded(std::string message) {
    return error(StatusCode::DeadlineExceeded, std::move(message));
  }
  static Status aborted(std::string message) {
    return error(StatusCode::Aborted, std::move(message));
  }
  static Status ioError(std::string message) {
    return error(StatusCode::IoError, std::move(message));
  }
  static Status unavailable(std::string message) {
    return error(StatusCode::Unavailable, std::move(message));
  }
  static Status internal(std::string message) {
    return error(StatusCode::Internal, std::move(message));
  }

  bool isOk() const { return code_ == StatusCode::Ok; }
  explicit operator bool() const { return isOk(); }
  StatusCode code() const { return code_; }
  const std::string &message() const { return message_; }

  /// The caller's option the error is about, by its name in the runtime's
  /// API (RunOptions' fields: "worldSize", "device", "blasThreads",
  /// "timeout", "backend"), or "": a tool that took the value from a flag
  /// names the flag (tooling/Flags.h).
  const std::string &subject() const { return subject_; }

  /// Returns this status with `prefix: ` prepended to its message; the code
  /// and subject are kept.
  Status withContext(const std::string &prefix) const {
    if (isOk())
      return *this;
    Status s = error(code_, prefix + ": " + message_);
    s.subject_ = subject_;
    return s;
  }

  /// Returns this status with its code replaced (no-op on success).
  Status withCode(StatusCode code) const {
    if (isOk())
      return *this;
    Status s = error(code, message_);
    s.subject_ = subject_;
    return s;
  }

  /// Returns this status about the caller's option `subject` (no-op on
  /// success).
  Status withSubject(std::string subject) const {
    if (isOk())
      return *this;
    Status s = *this;
    s.subject_ = std::move(subject);
    return s;
  }

private:
  StatusCode code_ = StatusCode::Ok;
  std::string message_;
  std::string subject_;
};

} // namespace shardlin::rt

#define SHARDLIN_RETURN_IF_ERROR(expr)                                         \
  do {                                                                         \
    ::shardlin::rt::Status shardlinStatus_ = (expr);                           \
    if (!shardlinStatus_.isOk())                                               \
      return shardlinStatus_;                                                  \
  } while (false)

#endif // SHARDLIN_RUNTIME_BASE_STATUS_H
