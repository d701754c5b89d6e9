//===- NpyRead.cpp - Reading .npy files, whole or one rank's slice --------===//
//
// Where an array's bytes come from: a regular file, read with pread at the
// offsets the header implies (whole, or only one slice along a dim), or a
// FIFO or pipe, read whole within a deadline so that a writer that never
// comes cannot hold a rank forever. The format's checks are NpyFormat.cpp's.
//
//===----------------------------------------------------------------------===//

#include "shardlin/runtime/tooling/Npy.h"

#include "tooling/NpyFormat.h"
#include "tooling/OutputFile.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace shardlin::rt {

using namespace detail;

namespace {

/// Reads exactly `len` bytes at `offset` of `fd` (retrying short reads and
/// EINTR). The sizes come from fstat, so an early end means the file shrank
/// while being read.
Status preadExactly(int fd, void *dst, size_t len, uint64_t offset,
                    const char *what) {
  auto *p = static_cast<uint8_t *>(dst);
  size_t done = 0;
  while (done < len) {
    const ssize_t n = ::pread(fd, p + done, len - done,
                              static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return Status::ioError(std::string("read error in ") + what + ": " +
                             errnoMessage(errno));
    if (n == 0)
      return Status::ioError(std::string("file ended early in ") + what +
                             " (read " + std::to_string(done) + " of " +
                             std::to_string(len) +
                             " bytes; was it modified while being read?)");
    done += size_t(n);
  }
  return Status::ok();
}

/// Reads from a FIFO or pipe `fd` (opened O_NONBLOCK) until `out` holds
/// `want` bytes, the writer closes it, or `deadline` passes. Returns the
/// bytes appended; `ended` says whether the stream ended (every writer
/// closed it after at least one opened it).
using Clock = std::chrono::steady_clock;
Status readStream(int fd, size_t want, Clock::time_point deadline,
                  double timeoutSeconds, std::vector<uint8_t> &out,
                  bool &ended) {
  ended = false;
  uint8_t chunk[1 << 16];
  while (out.size() < want) {
    const ssize_t n = ::read(fd, chunk, std::min(sizeof chunk, want - out.size()));
    if (n > 0) {
      out.insert(out.end(), chunk, chunk + n);
      continue;
    }
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 && errno != EAGAIN)
      return Status::ioError("read error: " + errnoMessage(errno));
    // n == 0 is the end of the stream once a writer has come and gone;
    // before any writer opened the FIFO it only means "no writer yet", so
    // wait for data or a hang-up either way (Linux reports POLLHUP only
    // for a writer that closed after this reader opened).
    const Clock::duration left = deadline - Clock::now();
    if (left <= Clock::duration::zero()) {
      char limit[32];
      std::snprintf(limit, sizeof limit, "%g", timeoutSeconds);
      // An input that did not arrive: the rank's own I/O failure (the
      // other ranks' timeouts waiting for it are DeadlineExceeded).
      return Status::ioError(
          std::string("no complete .npy arrived on this FIFO within ") +
          limit + " s (the timeout): " + std::to_string(out.size()) +
          " bytes came" + (n == 0 && out.empty() ? ", no writer opened it"
                                                 : ""));
    }
    struct pollfd p = {fd, POLLIN, 0};
    // Whole milliseconds, rounded up: the deadline is never cut short.
    const int64_t ms =
        std::chrono::ceil<std::chrono::milliseconds>(left).count();
    const int ready = ::poll(&p, 1, int(std::min<int64_t>(ms, 1000)));
    if (ready < 0 && errno != EINTR)
      return Status::ioError("poll error: " + errnoMessage(errno));
    if (ready > 0 && (p.revents & POLLHUP) && !(p.revents & POLLIN)) {
      ended = true;
      return Status::ok();
    }
  }
  return Status::ok();
}

/// The stream form of openNpyImpl: reads a whole .npy from a FIFO or pipe
/// (`fd`, O_NONBLOCK) within `timeoutSeconds`, checks it as a file is
/// checked, and returns its data in `data`.
Status readNpyStream(int fd, double timeoutSeconds, NpyHeader &header,
                     std::vector<uint8_t> &data) {
  const Clock::time_point deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>(timeoutSeconds));
  std::vector<uint8_t> bytes;
  bool ended = false;
  SHARDLIN_RETURN_IF_ERROR(
      readStream(fd, kNpyMaxPreambleLen, deadline, timeoutSeconds, bytes, ended));
  // Until the stream ends its size is unknown: the preamble's checks
  // against the file size see "at least this much".
  constexpr uint64_t unknown = std::numeric_limits<uint64_t>::max() / 2;
  NpyPreamble pre;
  SHARDLIN_RETURN_IF_ERROR(parseNpyPreamble(bytes.data(), bytes.size(),
                                         ended ? bytes.size() : unknown, pre));
  // NumPy's reader refuses headers over 10000 bytes by default; a stream
  // has no size to bound the allocation, so bound it here.
  constexpr size_t maxStreamHeader = size_t(1) << 20;
  if (pre.headerLen > maxStreamHeader)
    return Status::invalidArgument(
        "header length " + std::to_string(pre.headerLen) +
        " is over the 1 MiB a stream's header may have");
  const size_t headerEnd = pre.headerStart + pre.headerLen;
  SHARDLIN_RETURN_IF_ERROR(
      readStream(fd, headerEnd, deadline, timeoutSeconds, bytes, ended));
  if (bytes.size() < headerEnd)
    return Status::invalidArgument(
        "the stream ended inside the header (" + std::to_string(bytes.size()) +
        " of " + std::to_string(headerEnd) + " bytes)");
  SHARDLIN_RETURN_IF_ERROR(parseNpyHeader(
      reinterpret_cast<const char *>(bytes.data()) + pre.headerStart,
      pre.headerLen, header));
  uint64_t dataBytes = 0;
  SHARDLIN_RETURN_IF_ERROR(checkNpyHeader(header, dataBytes));
  // One byte more than the data, to see a writer that sends too much; then
  // the end of the stream.
  const size_t end = headerEnd + size_t(dataBytes);
  SHARDLIN_RETURN_IF_ERROR(
      readStream(fd, end + 1, deadline, timeoutSeconds, bytes, ended));
  if (bytes.size() == end && !ended)
    SHARDLIN_RETURN_IF_ERROR(
        readStream(fd, end + 1, deadline, timeoutSeconds, bytes, ended));
  SHARDLIN_RETURN_IF_ERROR(
      checkNpyDataSize(dataBytes, std::min(bytes.size(), end + 1) - headerEnd));
  data.assign(bytes.begin() + headerEnd, bytes.end());
  return Status::ok();
}

/// Opens `path` for reading into `fdOut` (which the NpyFile closes, also on
/// failure) and stats it; refuses a directory. O_NONBLOCK: opening a FIFO
/// that nobody writes would otherwise block this rank forever, out of reach
/// of any timeout; the caller reads a FIFO with a deadline (readStream) or
/// refuses it like every file that is not regular.
Status openInput(const std::string &path, int &fdOut, struct stat &st) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    const int error = errno;
    const std::string why = "cannot open: " + errnoMessage(error);
    return error == ENOENT ? Status::notFound(why) : Status::ioError(why);
  }
  fdOut = fd;
  if (::fstat(fd, &st) != 0)
    return Status::ioError("cannot stat: " + errnoMessage(errno));
  if (S_ISDIR(st.st_mode))
    return Status::invalidArgument("is a directory");
  return Status::ok();
}

/// Opens `path` and checks its header; the data is left for NpyFile's
/// reads, except from a FIFO or pipe (accepted if `streamTimeoutSeconds` >
/// 0), which is read whole into `streamed`. Messages do not name the file
/// (the caller adds it).
Status openNpyImpl(const std::string &path, double streamTimeoutSeconds,
                   int &fdOut, NpyHeader &header, uint64_t &dataStart,
                   uint64_t &dataBytes, std::vector<uint8_t> &streamed,
                   bool &isStream) {
  struct stat st;
  SHARDLIN_RETURN_IF_ERROR(openInput(path, fdOut, st));
  const int fd = fdOut;
  isStream = S_ISFIFO(st.st_mode);
  if (isStream && streamTimeoutSeconds > 0) {
    dataStart = 0;
    SHARDLIN_RETURN_IF_ERROR(
        readNpyStream(fd, streamTimeoutSeconds, header, streamed));
    dataBytes = streamed.size();
    return Status::ok();
  }
  if (!S_ISREG(st.st_mode))
    return Status::invalidArgument(isStream
                                       ? "a FIFO or pipe, which this reader "
                                         "does not wait on"
                                       : "not a regular file");
  const uint64_t fileSize = uint64_t(st.st_size);

  uint8_t prefix[kNpyMaxPreambleLen];
  const size_t prefixLen =
      fileSize < kNpyMaxPreambleLen ? size_t(fileSize) : kNpyMaxPreambleLen;
  SHARDLIN_RETURN_IF_ERROR(
      preadExactly(fd, prefix, prefixLen, 0, "the preamble"));
  NpyPreamble pre;
  SHARDLIN_RETURN_IF_ERROR(parseNpyPreamble(prefix, prefixLen, fileSize, pre));

  // The header length was checked against the file size, so this allocation
  // is bounded by the bytes on disk.
  std::string text(pre.headerLen, '\0');
  SHARDLIN_RETURN_IF_ERROR(preadExactly(fd, text.data(), text.size(),
                                        pre.headerStart, "the header"));
  SHARDLIN_RETURN_IF_ERROR(parseNpyHeader(text.data(), text.size(), header));
  SHARDLIN_RETURN_IF_ERROR(checkNpyHeader(header, dataBytes));
  dataStart = pre.headerStart + pre.headerLen;
  return checkNpyDataSize(dataBytes, fileSize - dataStart);
}

} // namespace

Status NpyFile::open(const std::string &path, std::unique_ptr<NpyFile> &out,
                     double streamTimeoutSeconds) {
  std::unique_ptr<NpyFile> f(new NpyFile());
  f->path_ = path;
  NpyHeader header;
  SHARDLIN_RETURN_IF_ERROR(
      openNpyImpl(path, streamTimeoutSeconds, f->fd_, header, f->dataStart_,
                  f->dataBytes_, f->streamed_, f->isStream_)
          .withContext(quotedName(path)));
  f->descr_ = std::move(header.descr);
  f->shape_ = std::move(header.shape);
  f->itemSize_ = itemSizeOfDescr(f->descr_);
  out = std::move(f);
  return Status::ok();
}

/// Opens `path` as a safetensors file and reads its header with pread (the
/// length first, then only the JSON), checked whole.
static Status openSafetensorsHeader(const std::string &path, int &fdOut,
                                    std::vector<SafetensorsTensor> &tensors) {
  struct stat st;
  SHARDLIN_RETURN_IF_ERROR(openInput(path, fdOut, st));
  const int fd = fdOut;
  if (!S_ISREG(st.st_mode))
    return Status::invalidArgument(
        "not a regular file (a safetensors checkpoint is read at its "
        "tensors' offsets, so it cannot come from a FIFO or pipe)");
  const uint64_t fileSize = uint64_t(st.st_size);
  std::vector<uint8_t> header(fileSize < 8 ? size_t(fileSize) : 8);
  SHARDLIN_RETURN_IF_ERROR(
      preadExactly(fd, header.data(), header.size(), 0, "the header length"));
  if (header.size() == 8) {
    const uint64_t n = safetensorsHeaderLength(header.data());
    // Checked against the limit and the file's size before allocating.
    if (n <= kSafetensorsMaxHeader && n <= fileSize - 8) {
      header.resize(8 + size_t(n));
      SHARDLIN_RETURN_IF_ERROR(
          preadExactly(fd, header.data() + 8, size_t(n), 8, "the header"));
    }
  }
  return parseSafetensorsHeader(header.data(), header.size(), fileSize,
                                tensors);
}

/// Opens `path` as a safetensors file and finds `tensor`, whose bytes are
/// left for NpyFile's reads. A `tensor` NAME[B:E] that no tensor is named
/// is rows [B, E) of NAME (splitSafetensorsRows): `found` is then those
/// rows, as if they were a tensor of their own.
static Status openSafetensorsImpl(const std::string &path,
                                  const std::string &tensor, int &fdOut,
                                  SafetensorsTensor &found) {
  std::vector<SafetensorsTensor> tensors;
  SHARDLIN_RETURN_IF_ERROR(openSafetensorsHeader(path, fdOut, tensors));
  const SafetensorsTensor *t = nullptr;
  std::string name;
  int64_t begin = 0, end = 0;
  const bool literal =
      std::any_of(tensors.begin(), tensors.end(),
                  [&](const SafetensorsTensor &s) { return s.name == tensor; });
  const bool rows = !literal && splitSafetensorsRows(tensor, name, begin, end);
  SHARDLIN_RETURN_IF_ERROR(
      findSafetensor(tensors, rows ? name : tensor, path, t));
  found = *t;
  if (!rows)
    return Status::ok();
  if (found.shape.empty() || end > found.shape[0])
    return Status::invalidArgument(
        "rows [" + std::to_string(begin) + ", " + std::to_string(end) +
        ") of '" + name + "' are outside its " +
        (found.shape.empty() ? std::string("0-D shape")
                             : std::to_string(found.shape[0]) + " rows") +
        " (" + quotedName(tensor) + ")");
  // The header's checks bound every size: none of these overflows.
  const uint64_t rowBytes =
      found.shape[0] ? (found.end - found.begin) / uint64_t(found.shape[0]) : 0;
  found.begin += uint64_t(begin) * rowBytes;
  found.end = found.begin + uint64_t(end - begin) * rowBytes;
  found.shape[0] = end - begin;
  return Status::ok();
}

Status NpyFile::openSafetensors(const std::string &path,
                                const std::string &tensor,
                                std::unique_ptr<NpyFile> &out) {
  std::unique_ptr<NpyFile> f(new NpyFile());
  f->path_ = path + ":" + tensor;
  SafetensorsTensor t;
  Status s = openSafetensorsImpl(path, tensor, f->fd_, t);
  if (!s)
    return s.code() == StatusCode::NotFound && f->fd_ >= 0
               ? s // findSafetensor's message names the file already
               : s.withContext(quotedName(path));
  f->descr_ = safetensorsDtypeName(t.dtype);
  f->shape_ = std::move(t.shape);
  f->itemSize_ = dtypeSize(t.dtype);
  f->dataStart_ = t.begin;
  f->dataBytes_ = t.end - t.begin;
  f->bounded_ = true;
  out = std::move(f);
  return Status::ok();
}

/// A path that names a whole safetensors file (FILE.safetensors, no
/// :NAME) where one array is read: an error that says to name a tensor and
/// which there are, instead of the .npy reader's "bad magic".
static Status refuseWholeSafetensors(const std::string &path) {
  if (!isSafetensorsFileName(path))
    return Status::ok();
  int fd = -1;
  std::vector<SafetensorsTensor> tensors;
  Status header = openSafetensorsHeader(path, fd, tensors);
  if (fd >= 0)
    ::close(fd);
  if (!header)
    return header.withContext(quotedName(path));
  return Status::invalidArgument(
      quotedName(path) + " is a safetensors file: name the tensor to read, " +
      "as " + quotedName(path + ":NAME") + " (" +
      describeSafetensors(tensors) + ")");
}

Status NpyFile::openSpec(const std::string &spec, std::unique_ptr<NpyFile> &out,
                         double streamTimeoutSeconds) {
  std::string file, tensor;
  if (splitSafetensorsSpec(spec, file, tensor))
    return openSafetensors(file, tensor, out);
  SHARDLIN_RETURN_IF_ERROR(refuseWholeSafetensors(spec));
  return open(spec, out, streamTimeoutSeconds);
}

NpyFile::~NpyFile() {
  if (fd_ >= 0)
    ::close(fd_);
}

Status NpyFile::preadAll(void *dst, size_t len, uint64_t offset) {
  if (isStream_) {
    // Read whole when opened; the offsets were checked against its size.
    if (len)
      std::memcpy(dst, streamed_.data() + offset, len);
    bytesRead_ += len;
    return Status::ok();
  }
  SHARDLIN_RETURN_IF_ERROR(
      preadExactly(fd_, dst, len, dataStart_ + offset, "the data")
          .withContext(quotedName(path_)));
  bytesRead_ += len;
  return Status::ok();
}

Status NpyFile::readAll(std::vector<uint8_t> &out) {
  out.resize(size_t(dataBytes_));
  SHARDLIN_RETURN_IF_ERROR(preadAll(out.data(), out.size(), 0));
  if (isStream_ || bounded_)
    return Status::ok(); // Its end was checked when it was read / opened.
  uint8_t extra;
  const ssize_t n = ::pread(fd_, &extra, 1, off_t(dataStart_ + dataBytes_));
  if (n != 0)
    return Status::ioError(
        quotedName(path_) +
        ": extra trailing data (the file grew while being read)");
  return Status::ok();
}

Status NpyFile::readSlice(int64_t dim, Range range,
                          std::vector<uint8_t> &out) {
  const int64_t rank = static_cast<int64_t>(shape_.size());
  if (dim < 0 || dim >= rank)
    return Status::invalidArgument(
        quotedName(path_) + ": cannot slice dim " + std::to_string(dim) +
        " of a " + std::to_string(rank) + "-D array");
  const int64_t n = shape_[size_t(dim)];
  if (range.offset < 0 || range.size < 0 || range.offset > n ||
      range.size > n - range.offset)
    return Status::invalidArgument(
        quotedName(path_) + ": rows [" + std::to_string(range.offset) + ", " +
        std::to_string(range.offset + range.size) + ") of dim " +
        std::to_string(dim) + " are outside its size " + std::to_string(n));
  // The slice is `outer` pieces of `piece` bytes, `stride` bytes apart. The
  // header's shape was checked to fit in size_t bytes, so none overflows.
  uint64_t outer = 1, innerBytes = itemSize_;
  for (int64_t k = 0; k < dim; ++k)
    outer *= uint64_t(shape_[size_t(k)]);
  for (int64_t k = dim + 1; k < rank; ++k)
    innerBytes *= uint64_t(shape_[size_t(k)]);
  const uint64_t piece = uint64_t(range.size) * innerBytes;
  const uint64_t stride = uint64_t(n) * innerBytes;
  const uint64_t first = uint64_t(range.offset) * innerBytes;
  out.resize(size_t(outer * piece));
  if (out.empty())
    return Status::ok();
  if (outer == 1 || piece == stride)
    return preadAll(out.data(), out.size(), first);
  constexpr uint64_t smallPiece = 512, stagingBytes = uint64_t(1) << 20;
  if (piece >= smallPiece) {
    for (uint64_t o = 0; o < outer; ++o)
      SHARDLIN_RETURN_IF_ERROR(
          preadAll(out.data() + o * piece, size_t(piece), o * stride + first));
    return Status::ok();
  }
  // Short pieces: read whole groups of rows (the gaps too) and keep the
  // pieces.
  const uint64_t rowsPerRead = std::max<uint64_t>(1, stagingBytes / stride);
  std::vector<uint8_t> staging;
  for (uint64_t o = 0; o < outer; o += rowsPerRead) {
    const uint64_t rows = std::min(rowsPerRead, outer - o);
    const uint64_t span = (rows - 1) * stride + piece;
    staging.resize(size_t(span));
    SHARDLIN_RETURN_IF_ERROR(
        preadAll(staging.data(), staging.size(), o * stride + first));
    for (uint64_t r = 0; r < rows; ++r)
      std::memcpy(out.data() + (o + r) * piece, staging.data() + r * stride,
                  size_t(piece));
  }
  return Status::ok();
}

Status readNpy(const std::string &path, NpyArray &out,
               double streamTimeoutSeconds) {
  std::unique_ptr<NpyFile> file;
  SHARDLIN_RETURN_IF_ERROR(NpyFile::open(path, file, streamTimeoutSeconds));
  NpyArray result;
  SHARDLIN_RETURN_IF_ERROR(file->readAll(result.data));
  result.descr = file->descr();
  result.shape = file->shape();
  out = std::move(result);
  return Status::ok();
}

} // namespace shardlin::rt

namespace shardlin::rt {

Status readArraySpec(const std::string &spec, NpyArray &out,
                     double streamTimeoutSeconds) {
  std::string file, tensor;
  if (!splitSafetensorsSpec(spec, file, tensor)) {
    SHARDLIN_RETURN_IF_ERROR(refuseWholeSafetensors(spec));
    return readNpy(spec, out, streamTimeoutSeconds);
  }
  std::unique_ptr<NpyFile> f;
  SHARDLIN_RETURN_IF_ERROR(NpyFile::openSafetensors(file, tensor, f));
  NpyArray result;
  SHARDLIN_RETURN_IF_ERROR(f->readAll(result.data));
  result.descr = f->descr();
  result.shape = f->shape();
  out = std::move(result);
  return Status::ok();
}

} // namespace shardlin::rt
