//===- CommChecks.h - What every communicator checks --------------*- C++ -*-===//
//
// Internal to the runtime. The checks that Communicator.cpp makes on every
// call of every backend, and that the GPU local ops reuse, so that errors
// read the same whatever the backend; the check and the printing of
// CommOptions::timeoutSeconds; and the byte arithmetic of element offsets
// that every communicator does.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_RUNTIME_LIB_COMM_COMMCHECKS_H
#define SHARDLIN_RUNTIME_LIB_COMM_COMMCHECKS_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace shardlin::rt::detail {

/// "30", "0.5", "inf": a timeout as messages print it.
std::string formatSeconds(double s);

/// Checks CommOptions::timeoutSeconds: "" if it is > 0 (inf allowed, NaN
/// not), else the message. Sets `effective` to the timeout clamped to 1e9 s,
/// so that now() + timeout cannot overflow the clock (more than 30 years:
/// "never" for a collective), or inf.
std::string checkTimeoutSeconds(double timeoutSeconds, double &effective);

/// "" if `count` elements of `elemSize` bytes are a valid count, else what is
/// wrong (negative, or a byte count that overflows).
std::string checkCount(const char *name, int64_t count, size_t elemSize);

/// Checks a counts/displs table pair of W entries: non-negative, and every
/// block's end (in bytes) representable. Sets `extent` to the largest block
/// end in elements.
std::string checkTables(const char *countsName,
                        const std::vector<int64_t> &counts,
                        const char *displsName,
                        const std::vector<int64_t> &displs, int worldSize,
                        size_t elemSize, int64_t &extent);

/// `p` advanced by `elems` elements of `elemSize` bytes.
inline const void *offsetBytes(const void *p, int64_t elems, size_t elemSize) {
  return static_cast<const unsigned char *>(p) + elems * elemSize;
}
inline void *offsetBytes(void *p, int64_t elems, size_t elemSize) {
  return static_cast<unsigned char *>(p) + elems * elemSize;
}

} // namespace shardlin::rt::detail

#endif // SHARDLIN_RUNTIME_LIB_COMM_COMMCHECKS_H
