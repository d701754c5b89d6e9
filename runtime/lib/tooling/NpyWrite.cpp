//===- NpyWrite.cpp - Writing .npy files, staged until every rank is done -===//
//
// An output is staged before it appears: a regular file (or the file a
// symlink ends at) is written whole under a temporary name next to it and
// renamed over it on commit; a destination written in place (a device, a
// FIFO) keeps its bytes in memory until then. OutputFile.h has the files'
// mechanics, NpyFormat.h the header.
//
//===----------------------------------------------------------------------===//

#include "shardlin/runtime/tooling/Npy.h"

#include "shardlin/runtime/base/Buffer.h"

#include "tooling/NpyFormat.h"
#include "tooling/OutputFile.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <memory>
#include <string>
#include <vector>

namespace shardlin::rt {

using namespace detail;

namespace {

/// A file written but not yet visible under its name: a complete temporary
/// next to the target, renamed at commit; or, for a target written in place,
/// the bytes, written at commit.
struct StagedNpy {
  OutputTarget target;
  TempFile file;
  std::string header;
  std::vector<unsigned char> data;

  Status commit() {
    if (!target.inPlace)
      return file.commit(target.path);
    // No O_CREAT, no O_TRUNC: the device or FIFO stays what it is.
    // O_NONBLOCK: a FIFO nobody reads fails (ENXIO) instead of blocking.
    const int fd =
        ::open(target.path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
      return Status::ioError(
          "cannot open " + quotedName(target.path) + ": " +
          (errno == ENXIO ? std::string("no process reads this FIFO")
                          : errnoMessage(errno)));
    const int flags = ::fcntl(fd, F_GETFL);
    Status s = flags >= 0 && ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) == 0
                   ? Status::ok()
                   : Status::ioError("cannot clear O_NONBLOCK: " +
                                     errnoMessage(errno));
    if (s)
      s = writeAll(fd, header.data(), header.size());
    if (s)
      s = writeAll(fd, data.data(), data.size());
    if (::close(fd) != 0 && s)
      s = Status::ioError("closing " + quotedName(target.path) +
                          " failed: " + errnoMessage(errno));
    return s;
  }
};

/// Prepares writing `path`: the whole file under a temporary name next to
/// its target, or its bytes for a target written in place. Nothing is
/// visible under the target's name until commit.
Status stageNpyImpl(const std::string &path, DType dtype,
                    const std::vector<int64_t> &shape, const void *data,
                    StagedNpy &staged) {
  if (path.empty())
    return Status::invalidArgument("empty path");
  if (dtype != DType::F16 && dtype != DType::BF16 && dtype != DType::F32 &&
      dtype != DType::F64)
    return Status::invalidArgument("invalid dtype value " +
                                   std::to_string(static_cast<int>(dtype)));
  int64_t numElements = 0;
  SHARDLIN_RETURN_IF_ERROR(
      checkedNumElements(shape, numElements, dtypeSize(dtype))
          .withCode(StatusCode::InvalidArgument));
  const size_t dataBytes = size_t(numElements) * dtypeSize(dtype);
  if (dataBytes > 0 && !data)
    return Status::invalidArgument("data is null but the shape has " +
                                   std::to_string(numElements) + " elements");
  const std::string header = buildNpyHeader(npyDescr(dtype), shape);
  SHARDLIN_RETURN_IF_ERROR(resolveOutputTarget(path, staged.target));
  if (staged.target.inPlace) {
    const auto *bytes = static_cast<const unsigned char *>(data);
    staged.header = header;
    if (dataBytes > 0)
      staged.data.assign(bytes, bytes + dataBytes);
    return Status::ok();
  }

  TempFile &tmp = staged.file;
  SHARDLIN_RETURN_IF_ERROR(tmp.create(staged.target.path));
  SHARDLIN_RETURN_IF_ERROR(writeAll(tmp.fd(), header.data(), header.size())
                               .withContext(quotedName(tmp.name())));
  SHARDLIN_RETURN_IF_ERROR(
      writeAll(tmp.fd(), data, dataBytes).withContext(quotedName(tmp.name())));
  // No fsync: the rename makes the file appear complete or not at all to
  // readers and survives a crash of this process; durability across power
  // loss is not worth an fsync per tensor.
  return tmp.close();
}
} // namespace

Status writeNpy(const std::string &path, DType dtype,
                const std::vector<int64_t> &shape, const void *data) {
  StagedNpy staged;
  Status s = stageNpyImpl(path, dtype, shape, data, staged);
  if (s)
    s = staged.commit();
  return s.withContext("writing " + quotedName(path));
}

struct PendingNpy::Temp {
  StagedNpy staged;
};

PendingNpy::PendingNpy() = default;
PendingNpy::~PendingNpy() = default;

Status PendingNpy::stage(const std::string &path, DType dtype,
                         const std::vector<int64_t> &shape, const void *data,
                         std::unique_ptr<PendingNpy> &out) {
  std::unique_ptr<PendingNpy> pending(new PendingNpy());
  pending->path_ = path;
  pending->temp_ = std::make_unique<Temp>();
  SHARDLIN_RETURN_IF_ERROR(
      stageNpyImpl(path, dtype, shape, data, pending->temp_->staged)
          .withContext("writing " + quotedName(path)));
  out = std::move(pending);
  return Status::ok();
}

Status PendingNpy::commit() {
  if (!temp_)
    return Status::ioError("writing " + quotedName(path_) +
                         ": already committed");
  Status s = temp_->staged.commit();
  temp_.reset();
  return s.withContext("writing " + quotedName(path_));
}

} // namespace shardlin::rt
