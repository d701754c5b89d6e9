//===- OutputFile.cpp - Writing an output file safely ---------------------===//

#include "tooling/OutputFile.h"

#include "tooling/CleanupRegistry.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <system_error>
#include <vector>

namespace shardlin::rt::detail {

std::string errnoMessage(int err) {
  return std::error_code(err, std::generic_category()).message();
}

std::string quotedName(const std::string &s) { return "'" + s + "'"; }

Status writeAll(int fd, const void *data, size_t len) {
  const auto *p = static_cast<const unsigned char *>(data);
  // Some kernels cap one write() near 2 GiB; stay below it.
  constexpr size_t maxChunk = size_t(1) << 30;
  while (len > 0) {
    const size_t chunk = len < maxChunk ? len : maxChunk;
    const ssize_t n = ::write(fd, p, chunk);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return Status::ioError("write failed: " + errnoMessage(errno));
    }
    if (n == 0)
      return Status::ioError("write made no progress");
    p += n;
    len -= size_t(n);
  }
  return Status::ok();
}

TempFile::~TempFile() {
  if (fd_ >= 0)
    ::close(fd_);
  if (!name_.empty())
    ::unlink(name_.c_str());
  unregisterTemp(slot_);
}

Status TempFile::create(const std::string &base) {
  const std::string prefix =
      base + ".tmp." + std::to_string(static_cast<long>(::getpid())) + ".";
  constexpr int maxAttempts = 1000;
  for (int n = 0; n < maxAttempts; ++n) {
    std::string name = prefix + std::to_string(n);
    const int fd =
        ::open(name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) {
      fd_ = fd;
      name_ = std::move(name);
      slot_ = registerTemp(name_.c_str());
      return Status::ok();
    }
    if (errno == EINTR || errno == EEXIST)
      continue;
    return Status::ioError("cannot create the temporary file " +
                           quotedName(name) + ": " + errnoMessage(errno));
  }
  return Status::ioError(
      "cannot create a temporary file " + quotedName(prefix) +
      "*: " + std::to_string(maxAttempts) + " names are taken");
}

Status TempFile::close() {
  const int fd = fd_;
  fd_ = -1;
  // Linux releases the descriptor even when close() reports an error, so it
  // must not be retried; the error (e.g. a deferred ENOSPC on NFS) still
  // means the data may be incomplete.
  if (::close(fd) != 0)
    return Status::ioError("closing " + quotedName(name_) +
                           " failed: " + errnoMessage(errno));
  return Status::ok();
}

Status TempFile::commit(const std::string &path) {
  if (::rename(name_.c_str(), path.c_str()) != 0)
    return Status::ioError("renaming " + quotedName(name_) +
                           " to the target failed: " + errnoMessage(errno));
  unregisterTemp(slot_);
  slot_ = -1;
  name_.clear();
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// Where a path's bytes go
//===----------------------------------------------------------------------===//

namespace {

/// Whether the directory holding `path` is in /proc: its symlinks are then
/// the kernel's links to open files (fd/N), whose text ("pipe:[123]", or a
/// file's name as another mount namespace sees it) is not a path to follow.
bool inProcFs(const std::string &path) {
  const size_t slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "."
                          : slash == 0               ? "/"
                                                     : path.substr(0, slash);
  struct statfs fs;
  constexpr long procSuperMagic = 0x9fa0; // linux/magic.h's PROC_SUPER_MAGIC
  return ::statfs(dir.c_str(), &fs) == 0 &&
         static_cast<long>(fs.f_type) == procSuperMagic;
}

const char *inPlaceKind(mode_t mode, bool viaDescriptor) {
  if (S_ISFIFO(mode))
    return viaDescriptor ? "pipe" : "FIFO";
  if (S_ISCHR(mode))
    return "character device";
  if (S_ISBLK(mode))
    return "block device";
  return "file";
}

/// A link of /proc that names an open file (/proc/self/fd/1, what
/// /dev/stdout and /dev/fd/1 lead to).
Status resolveDescriptor(const std::string &path, OutputTarget &out) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    return Status::ioError("cannot stat " + quotedName(path) + ": " +
                           errnoMessage(errno));
  if (S_ISDIR(st.st_mode))
    return Status::ioError("is a directory");
  if (S_ISSOCK(st.st_mode))
    return Status::ioError(quotedName(path) +
                           " is a socket, which cannot be opened as a file; "
                           "write to a file, a FIFO or a pipe");
  out.path = path;
  if (!S_ISREG(st.st_mode)) {
    out.inPlace = true;
    out.kind = inPlaceKind(st.st_mode, /*viaDescriptor=*/true);
    return Status::ok();
  }
  // A regular file the shell opened (`--out=/dev/stdout > y.npy`): replaced
  // like any file when the link's text is its name (the same inode there),
  // so that it too changes only when the whole run succeeds.
  std::vector<char> buf(4096 + 1);
  const ssize_t n = ::readlink(path.c_str(), buf.data(), buf.size() - 1);
  struct stat named;
  if (n > 0 && buf[0] == '/') {
    const std::string name(buf.data(), size_t(n));
    if (::stat(name.c_str(), &named) == 0 && named.st_dev == st.st_dev &&
        named.st_ino == st.st_ino && S_ISREG(named.st_mode)) {
      out.path = name;
      return Status::ok();
    }
  }
  // Deleted, or named in another mount namespace: only the descriptor
  // reaches it.
  out.inPlace = true;
  out.truncate = true;
  out.kind = "file";
  return Status::ok();
}

} // namespace

Status resolveOutputTarget(const std::string &path, OutputTarget &out) {
  out = OutputTarget();
  std::string p = path;
  constexpr int maxLinks = 40; // Linux's own limit (ELOOP).
  for (int links = 0; links <= maxLinks; ++links) {
    struct stat st;
    if (::lstat(p.c_str(), &st) != 0) {
      if (errno != ENOENT)
        return Status::ioError("cannot stat " + quotedName(p) + ": " +
                               errnoMessage(errno));
      out.path = p; // A new file, or a dangling link's target.
      return Status::ok();
    }
    if (S_ISLNK(st.st_mode)) {
      if (inProcFs(p))
        return resolveDescriptor(p, out);
      std::vector<char> buf(size_t(st.st_size > 0 ? st.st_size : 0) + 4096);
      const ssize_t n = ::readlink(p.c_str(), buf.data(), buf.size());
      if (n < 0)
        return Status::ioError("cannot read the symlink " + quotedName(p) +
                               ": " + errnoMessage(errno));
      std::string target(buf.data(), size_t(n));
      const size_t slash = p.find_last_of('/');
      if (target.empty() || target[0] != '/')
        target = (slash == std::string::npos ? std::string()
                                             : p.substr(0, slash + 1)) +
                 target;
      p = target;
      continue;
    }
    if (S_ISDIR(st.st_mode))
      return Status::ioError("is a directory");
    if (S_ISSOCK(st.st_mode))
      return Status::ioError(quotedName(p) +
                             " is a socket, which cannot be opened as a "
                             "file; write to a file, a FIFO or a pipe");
    out.path = p;
    out.inPlace = !S_ISREG(st.st_mode);
    out.kind = inPlaceKind(st.st_mode, /*viaDescriptor=*/false);
    return Status::ok();
  }
  return Status::ioError("more than " + std::to_string(maxLinks) +
                         " symbolic links");
}

//===----------------------------------------------------------------------===//
// Writing in place
//===----------------------------------------------------------------------===//

namespace {

/// Blocks SIGPIPE in this thread for its lifetime, so that a write to a
/// pipe whose reader is gone fails with EPIPE instead of ending the process;
/// the SIGPIPE such a write leaves pending for this thread is then consumed
/// (one that was pending before is left alone).
class SigpipeBlock {
public:
  SigpipeBlock() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    sigset_t pending;
    wasPending_ = ::sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE);
    blocked_ = ::pthread_sigmask(SIG_BLOCK, &pipe_, &previous_) == 0;
  }
  ~SigpipeBlock() {
    if (!blocked_)
      return;
    sigset_t pending;
    if (!wasPending_ && ::sigpending(&pending) == 0 &&
        sigismember(&pending, SIGPIPE)) {
      const struct timespec now = {0, 0};
      while (::sigtimedwait(&pipe_, nullptr, &now) < 0 && errno == EINTR) {
      }
    }
    ::pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
  }
  SigpipeBlock(const SigpipeBlock &) = delete;
  SigpipeBlock &operator=(const SigpipeBlock &) = delete;

private:
  sigset_t pipe_, previous_;
  bool wasPending_ = false, blocked_ = false;
};

using Clock = std::chrono::steady_clock;

/// The in-place writer's state: how much of `total` bytes went out.
struct InPlaceWrite {
  const OutputTarget &target;
  int fd;
  double timeoutSeconds;
  Clock::time_point deadline;
  uint64_t done = 0, total = 0;

  std::string progress() const {
    return std::to_string(done) + " of " + std::to_string(total) + " bytes";
  }

  Status write(const void *data, size_t len) {
    const auto *p = static_cast<const unsigned char *>(data);
    constexpr size_t maxChunk = size_t(1) << 30;
    while (len > 0) {
      const ssize_t n = ::write(fd, p, std::min(len, maxChunk));
      if (n > 0) {
        p += n;
        len -= size_t(n);
        done += uint64_t(n);
        continue;
      }
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0 && errno == EPIPE)
        return Status::ioError("the reader closed the " +
                               std::string(target.kind) + " after " +
                               progress() + " (EPIPE)");
      if (n < 0 && errno != EAGAIN)
        return Status::ioError("write failed after " + progress() + ": " +
                               errnoMessage(errno));
      if (n == 0)
        return Status::ioError("write made no progress after " + progress());
      SHARDLIN_RETURN_IF_ERROR(waitWritable());
    }
    return Status::ok();
  }

  /// Waits until the target takes more data, or the deadline passes.
  Status waitWritable() {
    while (true) {
      int waitMs = 1000;
      if (timeoutSeconds > 0) {
        const Clock::duration left = deadline - Clock::now();
        if (left <= Clock::duration::zero()) {
          char limit[32];
          std::snprintf(limit, sizeof limit, "%g", timeoutSeconds);
          return Status::ioError(
              std::string("the reader of this ") + target.kind +
              " did not take the whole output within " + limit +
              " s (the timeout): " + progress() + " taken");
        }
        waitMs = static_cast<int>(std::min<int64_t>(
            waitMs,
            std::chrono::ceil<std::chrono::milliseconds>(left).count()));
      }
      struct pollfd pfd = {fd, POLLOUT, 0};
      const int ready = ::poll(&pfd, 1, waitMs);
      if (ready < 0 && errno != EINTR)
        return Status::ioError("poll failed: " + errnoMessage(errno));
      // POLLERR (the reader is gone) too: the next write says EPIPE.
      if (ready > 0)
        return Status::ok();
    }
  }
};

} // namespace

Status writeInPlace(const OutputTarget &target, const std::string &header,
                    const void *data, size_t len, double timeoutSeconds) {
  SigpipeBlock noSigpipe;
  // No O_CREAT: the device or FIFO stays what it is. O_NONBLOCK: a FIFO or
  // pipe that nobody reads fails (ENXIO) instead of blocking, and a reader
  // that stops taking data is waited for with poll, within the deadline.
  const int fd = ::open(target.path.c_str(),
                        O_WRONLY | O_NONBLOCK | O_CLOEXEC |
                            (target.truncate ? O_TRUNC : 0));
  if (fd < 0) {
    if (errno == ENXIO)
      return Status::ioError("cannot open " + quotedName(target.path) +
                             ": no process reads this " + target.kind);
    return Status::ioError("cannot open " + quotedName(target.path) + ": " +
                           errnoMessage(errno));
  }
  InPlaceWrite w{target, fd, timeoutSeconds,
                 Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                    std::chrono::duration<double>(
                                        timeoutSeconds > 0 ? timeoutSeconds
                                                           : 0))};
  w.total = header.size() + len;
  Status s = w.write(header.data(), header.size());
  if (s)
    s = w.write(data, len);
  if (::close(fd) != 0 && s)
    s = Status::ioError("closing " + quotedName(target.path) +
                        " failed: " + errnoMessage(errno));
  return s;
}

//===----------------------------------------------------------------------===//
// Renaming a set of temporaries into place
//===----------------------------------------------------------------------===//

namespace {

/// Keeps the file at `target`, if there is one, under a new name beside it
/// (`backup`): a hard link, or, where the file system has none, the file
/// itself moved aside (never over an existing name).
Status keepBackup(const std::string &target, std::string &backup,
                  bool &movedAside) {
  // What the target is now (it was checked when it was staged, but the
  // file system may have changed since): a directory is never replaced,
  // nor moved aside.
  struct stat st;
  if (::lstat(target.c_str(), &st) != 0) {
    if (errno == ENOENT)
      return Status::ok(); // Nothing to keep: the target is new.
    return Status::ioError("cannot stat " + quotedName(target) + ": " +
                           errnoMessage(errno));
  }
  if (S_ISDIR(st.st_mode))
    return Status::ioError("renaming over " + quotedName(target) +
                           " failed: it is now a directory");
  const std::string prefix =
      target + ".bak." + std::to_string(static_cast<long>(::getpid())) + ".";
  constexpr int maxAttempts = 1000;
  for (int n = 0; n < maxAttempts; ++n) {
    const std::string name = prefix + std::to_string(n);
    if (::link(target.c_str(), name.c_str()) == 0) {
      backup = name;
      return Status::ok();
    }
    int error = errno;
    if (error == EPERM || error == EOPNOTSUPP || error == EMLINK ||
        error == ENOSYS) {
      if (::renameat2(AT_FDCWD, target.c_str(), AT_FDCWD, name.c_str(),
                      RENAME_NOREPLACE) == 0) {
        backup = name;
        movedAside = true;
        return Status::ok();
      }
      error = errno;
    }
    if (error == ENOENT)
      return Status::ok(); // Nothing to keep: the target is new.
    if (error == EEXIST || error == EINTR)
      continue;
    return Status::ioError("cannot keep the file it replaces as " +
                           quotedName(name) + ": " + errnoMessage(error));
  }
  return Status::ioError("cannot keep the file it replaces: " +
                         std::to_string(maxAttempts) + " names " +
                         quotedName(prefix) + "* are taken");
}

} // namespace

RenameSet::~RenameSet() {
  if (!settled_)
    (void)undo();
}

void RenameSet::add(TempFile &file, const std::string &target) {
  Entry e;
  e.file = &file;
  e.target = target;
  entries_.push_back(std::move(e));
}

Status RenameSet::renameAll(const CommitSection &section) {
  for (Entry &e : entries_) {
    if (const int sig = section.interrupted()) {
      SHARDLIN_RETURN_IF_ERROR(undo());
      return Status::aborted("interrupted by signal " + std::to_string(sig) +
                             " before every output was in place; every "
                             "output renamed so far was put back");
    }
    Status s = keepBackup(e.target, e.backup, e.movedAside);
    if (s)
      s = e.file->commit(e.target);
    if (!s) {
      Status undone = undo();
      s = s.withContext("writing " + quotedName(e.target));
      if (!undone)
        return Status::error(s.code(), s.message() + "; then " + undone.message());
      return s;
    }
    e.renamed = true;
  }
  return Status::ok();
}

Status RenameSet::undo() {
  settled_ = true;
  Status first = Status::ok();
  auto note = [&](const std::string &what) {
    if (first)
      first = Status::ioError(what + ": " + errnoMessage(errno));
  };
  for (auto it = entries_.rbegin(); it != entries_.rend(); ++it) {
    Entry &e = *it;
    if (e.renamed && e.backup.empty()) {
      if (::unlink(e.target.c_str()) != 0)
        note("removing the new " + quotedName(e.target) + " failed");
    } else if (!e.renamed && !e.movedAside && !e.backup.empty()) {
      // The target is still the file the backup links to (rename() of two
      // links to one file would do nothing): only the backup goes.
      ::unlink(e.backup.c_str());
    } else if (!e.backup.empty()) {
      // The replaced file, moved aside or under a second link: renaming it
      // back restores the target.
      if (::rename(e.backup.c_str(), e.target.c_str()) != 0)
        note("putting back " + quotedName(e.target) + " from " +
             quotedName(e.backup) + " failed");
    }
    e.renamed = e.movedAside = false;
    e.backup.clear();
  }
  return first;
}

void RenameSet::keep() {
  settled_ = true;
  for (Entry &e : entries_)
    if (!e.backup.empty())
      ::unlink(e.backup.c_str());
  entries_.clear();
}

} // namespace shardlin::rt::detail
