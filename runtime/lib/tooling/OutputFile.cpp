//===- OutputFile.cpp - Writing an output file safely ---------------------===//

#include "tooling/OutputFile.h"

#include "tooling/CleanupRegistry.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
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

Status resolveOutputTarget(const std::string &path, OutputTarget &out) {
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
    out.path = p;
    out.inPlace = !S_ISREG(st.st_mode);
    return Status::ok();
  }
  return Status::ioError("more than " + std::to_string(maxLinks) +
                         " symbolic links");
}

} // namespace shardlin::rt::detail
