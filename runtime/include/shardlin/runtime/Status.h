//===- Status.h - Error values for the shardlin runtime ---------*- C++ -*-===//
//
// The runtime reports failures as values, not exceptions: every call that can
// fail returns a Status that names the failing call, the rank and the reason.
// This keeps the runtime usable from code built without exceptions (MLIR's
// libraries are) and makes errors cross thread boundaries explicitly.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_RUNTIME_STATUS_H
#define SHARDLIN_RUNTIME_STATUS_H

#include <string>
#include <utility>

namespace shardlin::rt {

class [[nodiscard]] Status {
public:
  Status() = default;
  static Status ok() { return Status(); }
  static Status error(std::string message) {
    Status s;
    s.failed_ = true;
    s.message_ = std::move(message);
    return s;
  }

  bool isOk() const { return !failed_; }
  explicit operator bool() const { return !failed_; }
  const std::string &message() const { return message_; }

  /// Returns this status with `prefix: ` prepended to its message.
  Status withContext(const std::string &prefix) const {
    if (!failed_)
      return *this;
    return error(prefix + ": " + message_);
  }

private:
  bool failed_ = false;
  std::string message_;
};

} // namespace shardlin::rt

#define SHARDLIN_RETURN_IF_ERROR(expr)                                         \
  do {                                                                         \
    ::shardlin::rt::Status shardlinStatus_ = (expr);                           \
    if (!shardlinStatus_.isOk())                                               \
      return shardlinStatus_;                                                  \
  } while (false)

#endif // SHARDLIN_RUNTIME_STATUS_H
