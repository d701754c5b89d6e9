//===- OutputFile.h - Writing an output file safely -------------*- C++ -*-===//
//
// What writing an output needs besides its format (NpyWrite.cpp): where a
// path's bytes go (through symlinks to a file that is replaced; in place
// for FIFOs, pipes, devices and the descriptors /dev/stdout, /dev/fd/N,
// /proc/self/fd/N name), temporary files renamed over their targets as one
// set that can be undone, and in-place writes that end with an error, never
// a SIGPIPE, and within a deadline. The policy these serve is written down
// in docs/robustness.md ("Outputs").
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_RUNTIME_LIB_OUTPUTFILE_H
#define SHARDLIN_RUNTIME_LIB_OUTPUTFILE_H

#include "shardlin/runtime/base/Status.h"

#include <cstddef>
#include <string>
#include <vector>

namespace shardlin::rt::detail {

class CommitSection;

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

/// Where writing a path puts the bytes. A symlink is followed to the file it
/// ends at (the link stays a link). A regular file, or a name that does not
/// exist yet, is replaced (or created) by renaming a complete temporary file
/// over it. Anything else that exists is written in place: a FIFO, a pipe, a
/// character or block device, and what a descriptor link of /proc names
/// (/dev/stdout, /dev/fd/N, /proc/self/fd/N) unless that is a regular file
/// whose name is known, which is then replaced like any other.
struct OutputTarget {
  std::string path;
  bool inPlace = false;
  /// For messages: "FIFO", "pipe", "character device", "block device", or
  /// "file" for a regular file behind a descriptor whose name is not known
  /// (deleted, or in another mount namespace), written in place from its
  /// start.
  const char *kind = "file";
  /// Open with O_TRUNC (the regular file behind a descriptor, above).
  bool truncate = false;
};

/// Resolves `path` as above. A directory, a socket, or a symlink chain
/// longer than Linux's is an error.
Status resolveOutputTarget(const std::string &path, OutputTarget &out);

/// Writes `header`, then `len` bytes of `data`, to an in-place target. The
/// target is opened without O_CREAT (a device or FIFO stays what it is) and
/// non-blocking: a FIFO or pipe that no process reads fails at once, and a
/// reader that stops taking data fails the write once `timeoutSeconds` have
/// passed since it began (0: no limit). A reader that closes its end is an
/// IoError saying how much it took (EPIPE): SIGPIPE is blocked in this
/// thread while writing, and the one the write raised is consumed.
Status writeInPlace(const OutputTarget &target, const std::string &header,
                    const void *data, size_t len, double timeoutSeconds);

/// Temporaries renamed over their targets as one set: renameAll renames
/// each, keeping a file it replaces under a backup name (a hard link beside
/// it, or the file itself moved aside where the file system has no hard
/// links) until keep() drops the backups or undo() puts every replaced
/// file back and removes every new one. A rename that fails, or a signal
/// held by the CommitSection, undoes the renames already made. Destroying
/// the set undoes it unless it was kept.
class RenameSet {
public:
  RenameSet() = default;
  RenameSet(const RenameSet &) = delete;
  RenameSet &operator=(const RenameSet &) = delete;
  ~RenameSet();

  /// `file` is closed and outlives the set.
  void add(TempFile &file, const std::string &target);
  Status renameAll(const CommitSection &section);
  /// Returns the first failure to put a file back (the others are still
  /// tried).
  Status undo();
  void keep();

private:
  struct Entry {
    TempFile *file = nullptr;
    std::string target;
    /// The replaced file's backup, if the target existed.
    std::string backup;
    /// Whether the backup is the file itself, moved aside (no hard links).
    bool movedAside = false;
    bool renamed = false;
  };
  std::vector<Entry> entries_;
  bool settled_ = false;
};

} // namespace shardlin::rt::detail

#endif // SHARDLIN_RUNTIME_LIB_OUTPUTFILE_H
