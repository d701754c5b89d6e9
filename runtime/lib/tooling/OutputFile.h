//===- OutputFile.h - Writing an output file safely -------------*- C++ -*-===//
//
// What writing an output needs besides its format (NpyWrite.cpp): whole
// writes, a temporary file renamed over its target (registered for the
// signal handlers of Signals.h, if the program installed them), and where a
// path's bytes go (through symlinks; in place for devices and FIFOs).
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_RUNTIME_LIB_OUTPUTFILE_H
#define SHARDLIN_RUNTIME_LIB_OUTPUTFILE_H

#include "shardlin/runtime/base/Status.h"

#include <cstddef>
#include <string>

namespace shardlin::rt::detail {

/// strerror's text for an errno value.
std::string errnoMessage(int err);
/// Quotes a path or caller-supplied name in full: it came from the caller,
/// not a file, and truncating it would make the message ambiguous.
std::string quotedName(const std::string &s);

/// Writes all of `len` bytes, retrying short writes and EINTR.
Status writeAll(int fd, const void *data, size_t len);

/// A temporary file that is closed and removed unless committed by rename,
/// and removed if a signal ends the process meanwhile (Signals.h, when its
/// handlers are installed).
class TempFile {
public:
  TempFile() = default;
  TempFile(const TempFile &) = delete;
  TempFile &operator=(const TempFile &) = delete;
  ~TempFile();

  /// Creates `base.tmp.<pid>.<n>` with the first n that is free. O_EXCL
  /// makes the choice race-free between threads and processes without any
  /// shared counter.
  Status create(const std::string &base);
  int fd() const { return fd_; }
  const std::string &name() const { return name_; }
  Status close();
  /// Renames over `path`; on success the destructor has nothing to remove.
  Status commit(const std::string &path);

private:
  int fd_ = -1;
  int slot_ = -1;
  std::string name_;
};

/// Where writing a path puts the bytes: a symlink is followed to the file
/// it ends at (the link stays a link), an existing file that is not regular
/// (a device, a FIFO) is written in place, and anything else is replaced
/// (or created) by renaming a complete temporary file over it.
struct OutputTarget {
  std::string path;
  bool inPlace = false;
};

Status resolveOutputTarget(const std::string &path, OutputTarget &out);

} // namespace shardlin::rt::detail

#endif // SHARDLIN_RUNTIME_LIB_OUTPUTFILE_H
