//===- Npy.cpp - Reading and writing NumPy .npy files ----------------------===//
//
// The format (numpy/lib/format.py): the magic "\x93NUMPY", a major and minor
// version byte, the header length (2 bytes little-endian in version 1.0, 4 in
// 2.0 and 3.0), then the header: a Python dict literal such as
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// padded with spaces and a final newline, then the raw C-order data.
//
// Files come from outside (and a fuzzer), so the reader trusts nothing: every
// length is checked against the bytes actually present before it is used to
// index or allocate, and the dict is parsed by a small recursive-descent
// parser over exactly the literal forms NumPy writes, rather than anything
// resembling an evaluator.
//
//===----------------------------------------------------------------------===//

#include "shardlin/runtime/tooling/Npy.h"

#include "shardlin/runtime/base/Buffer.h"

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

using detail::errnoMessage;
using detail::OutputTarget;
using detail::quotedName;
using detail::resolveOutputTarget;
using detail::TempFile;
using detail::writeAll;

namespace {

constexpr unsigned char npyMagic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
constexpr size_t magicLen = sizeof(npyMagic);
/// Magic, two version bytes and the longest (4-byte) header length field.
constexpr size_t maxPreambleLen = magicLen + 2 + 4;
/// NumPy's own limit (NPY_MAXDIMS is 64 since NumPy 2.0). Bounding it keeps a
/// hostile header from growing the shape vector without limit.
constexpr size_t maxDims = 64;
/// NumPy's current writer aligns the data to 64 bytes (ARRAY_ALIGN).
constexpr size_t dataAlign = 64;

/// Quotes text taken from the file for an error message: printable ASCII
/// only and bounded, so hostile bytes cannot flood or corrupt the log.
std::string quoted(const char *p, size_t len) {
  constexpr size_t maxLen = 40;
  std::string s = "'";
  for (size_t i = 0; i < len && i < maxLen; ++i)
    s += (p[i] >= 0x20 && p[i] < 0x7f) ? p[i] : '?';
  if (len > maxLen)
    s += "...";
  return s + "'";
}
std::string quoted(const std::string &s) { return quoted(s.data(), s.size()); }

size_t itemSizeOfDescr(const std::string &descr) {
  if (descr == "<f2" || descr == "<u2")
    return 2;
  if (descr == "<f4")
    return 4;
  if (descr == "<f8")
    return 8;
  return 0;
}

/// What the fixed-size part of the file says.
struct Preamble {
  int major = 0, minor = 0;
  size_t headerStart = 0;
  size_t headerLen = 0;
};

/// Parses the magic, version and header length from the first `size` bytes
/// of a file of `fileSize` bytes (`size` may be less than the file when only
/// a prefix has been read).
Status parsePreamble(const uint8_t *bytes, size_t size, uint64_t fileSize,
                     Preamble &out) {
  if (fileSize == 0)
    return Status::invalidArgument("file is empty");
  // Compare what is there first, so a short non-.npy file is reported as
  // such rather than as a short .npy file.
  if (std::memcmp(bytes, npyMagic, size < magicLen ? size : magicLen) != 0)
    return Status::invalidArgument("bad magic: not a .npy file");
  if (size < magicLen + 2)
    return Status::invalidArgument("file is too short for a .npy preamble (" +
                                   std::to_string(fileSize) + " bytes)");
  const int major = bytes[magicLen], minor = bytes[magicLen + 1];
  if ((major != 1 && major != 2 && major != 3) || minor != 0)
    return Status::invalidArgument(
        "unsupported .npy format version " + std::to_string(major) + "." +
        std::to_string(minor) + " (supported: 1.0, 2.0, 3.0)");
  const size_t lenBytes = major == 1 ? 2 : 4;
  const size_t headerStart = magicLen + 2 + lenBytes;
  if (size < headerStart)
    return Status::invalidArgument("file ends inside the header length field");
  uint64_t headerLen = 0;
  for (size_t i = 0; i < lenBytes; ++i)
    headerLen |= uint64_t(bytes[magicLen + 2 + i]) << (8 * i);
  if (headerLen > fileSize - headerStart)
    return Status::invalidArgument(
        "header length " + std::to_string(headerLen) +
        " extends beyond the end of the file (" + std::to_string(fileSize) +
        " bytes, header starts at " + std::to_string(headerStart) + ")");
  out.major = major;
  out.minor = minor;
  out.headerStart = headerStart;
  out.headerLen = size_t(headerLen);
  return Status::ok();
}

/// The parsed header dict.
struct Header {
  std::string descr;
  bool fortranOrder = false;
  std::vector<int64_t> shape;
};

/// Recursive-descent parser for the header dict. It accepts Python's
/// whitespace, either quote style, keys in any order, and an optional
/// trailing comma in the dict and in the shape tuple; it rejects everything
/// NumPy's reader rejects (unknown or missing keys, non-tuple shapes,
/// non-integer dims, non-bool fortran_order).
class HeaderParser {
public:
  HeaderParser(const char *text, size_t len)
      : begin_(text), cur_(text), end_(text + len) {}

  Status parse(Header &out) {
    skipSpace();
    if (atEnd())
      return fail("header is empty");
    if (*cur_ != '{')
      return fail("header is not a dict (it starts with " + quoted(cur_, 1) +
                  ")");
    ++cur_;
    bool haveDescr = false, haveFortran = false, haveShape = false;
    while (true) {
      skipSpace();
      if (atEnd())
        return fail("header dict is not closed");
      if (*cur_ == '}') {
        ++cur_;
        break;
      }
      std::string key;
      if (!isQuote())
        return fail("expected a quoted dict key, found " + quoted(cur_, 1));
      SHARDLIN_RETURN_IF_ERROR(parseString(key));
      skipSpace();
      if (atEnd() || *cur_ != ':')
        return fail("expected ':' after key " + quoted(key));
      ++cur_;
      skipSpace();
      if (key == "descr") {
        if (haveDescr)
          return fail("duplicate key 'descr'");
        haveDescr = true;
        SHARDLIN_RETURN_IF_ERROR(parseDescr(out.descr));
      } else if (key == "fortran_order") {
        if (haveFortran)
          return fail("duplicate key 'fortran_order'");
        haveFortran = true;
        SHARDLIN_RETURN_IF_ERROR(parseBool(out.fortranOrder));
      } else if (key == "shape") {
        if (haveShape)
          return fail("duplicate key 'shape'");
        haveShape = true;
        SHARDLIN_RETURN_IF_ERROR(parseShape(out.shape));
      } else {
        return fail("unexpected key " + quoted(key) +
                    " (a .npy header has exactly 'descr', 'fortran_order' "
                    "and 'shape')");
      }
      skipSpace();
      if (atEnd())
        return fail("header dict is not closed");
      if (*cur_ == ',') {
        ++cur_;
        continue;
      }
      if (*cur_ == '}') {
        ++cur_;
        break;
      }
      return fail("expected ',' or '}' in the header dict, found " +
                  quoted(cur_, 1));
    }
    skipSpace();
    if (!atEnd())
      return fail("unexpected text after the header dict: " +
                  quoted(cur_, size_t(end_ - cur_)));
    if (!haveDescr)
      return fail("header is missing the key 'descr'");
    if (!haveFortran)
      return fail("header is missing the key 'fortran_order'");
    if (!haveShape)
      return fail("header is missing the key 'shape'");
    return Status::ok();
  }

private:
  Status fail(const std::string &msg) const {
    return Status::invalidArgument("malformed header: " + msg +
                                   " (at header byte " +
                                   std::to_string(cur_ - begin_) + ")");
  }

  bool atEnd() const { return cur_ >= end_; }
  bool isQuote() const { return !atEnd() && (*cur_ == '\'' || *cur_ == '"'); }
  static bool isDigit(char c) { return c >= '0' && c <= '9'; }
  static bool isIdentChar(char c) {
    return isDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           c == '_';
  }

  void skipSpace() {
    while (!atEnd() && (*cur_ == ' ' || *cur_ == '\t' || *cur_ == '\n' ||
                        *cur_ == '\r' || *cur_ == '\f' || *cur_ == '\v'))
      ++cur_;
  }

  /// A quoted string without escapes (none of the values NumPy writes for
  /// these keys needs one).
  Status parseString(std::string &out) {
    const char quote = *cur_++;
    const char *start = cur_;
    while (!atEnd() && *cur_ != quote) {
      if (*cur_ == '\\')
        return fail("escape sequences in strings are not supported");
      if (*cur_ == '\n')
        return fail("unterminated string");
      ++cur_;
    }
    if (atEnd())
      return fail("unterminated string");
    out.assign(start, size_t(cur_ - start));
    ++cur_;
    return Status::ok();
  }

  Status parseDescr(std::string &out) {
    if (!atEnd() && *cur_ == '[')
      return fail("structured dtypes (a list descr) are not supported");
    if (!isQuote())
      return fail("'descr' must be a string");
    return parseString(out);
  }

  Status parseBool(bool &out) {
    const char *start = cur_;
    while (!atEnd() && isIdentChar(*cur_))
      ++cur_;
    const std::string word(start, size_t(cur_ - start));
    if (word == "True") {
      out = true;
      return Status::ok();
    }
    if (word == "False") {
      out = false;
      return Status::ok();
    }
    cur_ = start;
    return fail("'fortran_order' must be True or False, found " +
                quoted(start, size_t(end_ - start) < 8 ? size_t(end_ - start)
                                                        : 8));
  }

  Status parseShape(std::vector<int64_t> &out) {
    if (atEnd() || *cur_ != '(') {
      if (!atEnd() && *cur_ == '[')
        return fail("'shape' must be a tuple, not a list");
      return fail("'shape' must be a tuple");
    }
    ++cur_;
    out.clear();
    bool trailingComma = false;
    while (true) {
      skipSpace();
      if (atEnd())
        return fail("'shape' tuple is not closed");
      if (*cur_ == ')') {
        // "(3)" is the integer 3 in Python, not a 1-tuple: NumPy rejects it,
        // and accepting it would hide a writer bug.
        if (out.size() == 1 && !trailingComma)
          return fail("'shape' (" + std::to_string(out[0]) +
                      ") is an integer, not a tuple; a 1-D shape is written (" +
                      std::to_string(out[0]) + ",)");
        ++cur_;
        return Status::ok();
      }
      if (!out.empty() && !trailingComma)
        return fail("expected ',' or ')' in 'shape', found " +
                    quoted(cur_, 1));
      if (out.size() == maxDims)
        return fail("'shape' has more than " + std::to_string(maxDims) +
                    " dims");
      int64_t dim = 0;
      SHARDLIN_RETURN_IF_ERROR(parseDim(dim));
      out.push_back(dim);
      skipSpace();
      trailingComma = !atEnd() && *cur_ == ',';
      if (trailingComma)
        ++cur_;
    }
  }

  Status parseDim(int64_t &out) {
    const char *start = cur_;
    if (*cur_ == '-') {
      ++cur_;
      const char *digits = cur_;
      while (!atEnd() && isDigit(*cur_))
        ++cur_;
      if (cur_ != digits)
        return fail("negative dim " + quoted(start, size_t(cur_ - start)) +
                    " in 'shape'");
      cur_ = start;
    }
    if (!isDigit(*cur_))
      return fail("non-integer dim " + tokenAt(start) + " in 'shape'");
    constexpr int64_t maxI64 = std::numeric_limits<int64_t>::max();
    int64_t value = 0;
    while (!atEnd() && isDigit(*cur_)) {
      const int digit = *cur_ - '0';
      if (value > (maxI64 - digit) / 10)
        return fail("dim " + tokenAt(start) + " in 'shape' overflows int64");
      value = value * 10 + digit;
      ++cur_;
    }
    // "2.5", "3L", "1e3", "0x10": not a plain Python int.
    if (!atEnd() && (isIdentChar(*cur_) || *cur_ == '.'))
      return fail("non-integer dim " + tokenAt(start) + " in 'shape'");
    out = value;
    return Status::ok();
  }

  /// The token starting at `p` (up to a separator), quoted for messages.
  std::string tokenAt(const char *p) const {
    const char *q = p;
    while (q < end_ && *q != ',' && *q != ')' && *q != ' ' && *q != '}')
      ++q;
    if (q == p && q < end_)
      ++q;
    return quoted(p, size_t(q - p));
  }

  const char *begin_;
  const char *cur_;
  const char *end_;
};

/// Checks the parsed header and computes the data's byte size, without
/// allocating anything.
Status checkHeader(const Header &header, uint64_t &dataBytes) {
  if (header.fortranOrder)
    return Status::invalidArgument(
        "Fortran-order arrays (fortran_order: True) are not supported");
  const std::string &d = header.descr;
  if (d.size() >= 1 && d[0] == '>')
    return Status::invalidArgument(
        "big-endian descr " + quoted(d) +
        " is not supported (shardlin reads little-endian "
        "data)");
  const size_t itemSize = itemSizeOfDescr(d);
  if (itemSize == 0)
    return Status::invalidArgument(
        "unsupported descr " + quoted(d) +
        " (supported: '<f2', '<f4', '<f8', and '<u2' for "
        "bf16 bit patterns)");
  int64_t numElements = 0;
  // The shape came from the file: a bad one is the file's fault.
  SHARDLIN_RETURN_IF_ERROR(
      checkedNumElements(header.shape, numElements, itemSize)
          .withCode(StatusCode::InvalidArgument));
  dataBytes = uint64_t(numElements) * itemSize;
  return Status::ok();
}

Status checkDataSize(uint64_t expected, uint64_t present) {
  if (present < expected)
    return Status::invalidArgument(
        "truncated data: the header describes " + std::to_string(expected) +
        " bytes but only " + std::to_string(present) + " follow it");
  if (present > expected)
    return Status::invalidArgument(
        "extra trailing data: the header describes " +
        std::to_string(expected) + " bytes but " + std::to_string(present) +
        " follow it");
  return Status::ok();
}

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

/// The header text, padded as NumPy's writer (format._wrap_header) pads it:
/// spaces, then a newline, so that the data starts at a multiple of 64.
std::string buildHeader(const char *descr, const std::vector<int64_t> &shape) {
  std::string dict = "{'descr': '";
  dict += descr;
  dict += "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      dict += ", ";
    dict += std::to_string(shape[i]);
  }
  if (shape.size() == 1)
    dict += ",";
  dict += "), }";

  // Version 1.0 unless the padded header needs more than 16 bits.
  const size_t textLen = dict.size() + 1; // + the final newline
  int major = 1;
  size_t prefixLen = magicLen + 2 + 2;
  size_t pad = dataAlign - (prefixLen + textLen) % dataAlign;
  if (textLen + pad > 0xffff) {
    major = 2;
    prefixLen = magicLen + 2 + 4;
    pad = dataAlign - (prefixLen + textLen) % dataAlign;
  }
  const uint64_t headerLen = textLen + pad;

  std::string out(reinterpret_cast<const char *>(npyMagic), magicLen);
  out += char(major);
  out += char(0);
  for (size_t i = 0; i < prefixLen - magicLen - 2; ++i)
    out += char((headerLen >> (8 * i)) & 0xff);
  out += dict;
  out.append(pad, ' ');
  out += '\n';
  return out;
}

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
  const std::string header = buildHeader(npyDescr(dtype), shape);
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
Status readNpyStream(int fd, double timeoutSeconds, Header &header,
                     std::vector<uint8_t> &data) {
  const Clock::time_point deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>(timeoutSeconds));
  std::vector<uint8_t> bytes;
  bool ended = false;
  SHARDLIN_RETURN_IF_ERROR(
      readStream(fd, maxPreambleLen, deadline, timeoutSeconds, bytes, ended));
  // Until the stream ends its size is unknown: the preamble's checks
  // against the file size see "at least this much".
  constexpr uint64_t unknown = std::numeric_limits<uint64_t>::max() / 2;
  Preamble pre;
  SHARDLIN_RETURN_IF_ERROR(parsePreamble(bytes.data(), bytes.size(),
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
  SHARDLIN_RETURN_IF_ERROR(
      HeaderParser(reinterpret_cast<const char *>(bytes.data()) +
                       pre.headerStart,
                   pre.headerLen)
          .parse(header));
  uint64_t dataBytes = 0;
  SHARDLIN_RETURN_IF_ERROR(checkHeader(header, dataBytes));
  // One byte more than the data, to see a writer that sends too much; then
  // the end of the stream.
  const size_t end = headerEnd + size_t(dataBytes);
  SHARDLIN_RETURN_IF_ERROR(
      readStream(fd, end + 1, deadline, timeoutSeconds, bytes, ended));
  if (bytes.size() == end && !ended)
    SHARDLIN_RETURN_IF_ERROR(
        readStream(fd, end + 1, deadline, timeoutSeconds, bytes, ended));
  SHARDLIN_RETURN_IF_ERROR(
      checkDataSize(dataBytes, std::min(bytes.size(), end + 1) - headerEnd));
  data.assign(bytes.begin() + headerEnd, bytes.end());
  return Status::ok();
}

/// Opens `path` and checks its header; the data is left for NpyFile's
/// reads, except from a FIFO or pipe (accepted if `streamTimeoutSeconds` >
/// 0), which is read whole into `streamed`. Messages do not name the file
/// (the caller adds it).
Status openNpyImpl(const std::string &path, double streamTimeoutSeconds,
                   int &fdOut, Header &header, uint64_t &dataStart,
                   uint64_t &dataBytes, std::vector<uint8_t> &streamed,
                   bool &isStream) {
  // O_NONBLOCK: opening a FIFO that nobody writes would otherwise block
  // this rank forever, out of reach of any timeout; a FIFO is then read
  // with a deadline (readStream) or refused like every file that is not
  // regular.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    const int error = errno;
    const std::string why = "cannot open: " + errnoMessage(error);
    return error == ENOENT ? Status::notFound(why) : Status::ioError(why);
  }
  fdOut = fd; // closed by the NpyFile, also on failure
  struct stat st;
  if (::fstat(fd, &st) != 0)
    return Status::ioError("cannot stat: " + errnoMessage(errno));
  if (S_ISDIR(st.st_mode))
    return Status::invalidArgument("is a directory");
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

  uint8_t prefix[maxPreambleLen];
  const size_t prefixLen =
      fileSize < maxPreambleLen ? size_t(fileSize) : maxPreambleLen;
  SHARDLIN_RETURN_IF_ERROR(
      preadExactly(fd, prefix, prefixLen, 0, "the preamble"));
  Preamble pre;
  SHARDLIN_RETURN_IF_ERROR(parsePreamble(prefix, prefixLen, fileSize, pre));

  // The header length was checked against the file size, so this allocation
  // is bounded by the bytes on disk.
  std::string text(pre.headerLen, '\0');
  SHARDLIN_RETURN_IF_ERROR(preadExactly(fd, text.data(), text.size(),
                                        pre.headerStart, "the header"));
  SHARDLIN_RETURN_IF_ERROR(HeaderParser(text.data(), text.size()).parse(header));
  SHARDLIN_RETURN_IF_ERROR(checkHeader(header, dataBytes));
  dataStart = pre.headerStart + pre.headerLen;
  return checkDataSize(dataBytes, fileSize - dataStart);
}

Status parseNpyImpl(const uint8_t *bytes, size_t size, NpyArray &out) {
  if (!bytes && size != 0)
    return Status::invalidArgument("null buffer of " + std::to_string(size) +
                                   " bytes");
  Preamble pre;
  SHARDLIN_RETURN_IF_ERROR(parsePreamble(bytes, size, size, pre));
  Header header;
  SHARDLIN_RETURN_IF_ERROR(
      HeaderParser(reinterpret_cast<const char *>(bytes) + pre.headerStart,
                   pre.headerLen)
          .parse(header));
  uint64_t dataBytes = 0;
  SHARDLIN_RETURN_IF_ERROR(checkHeader(header, dataBytes));
  const size_t dataStart = pre.headerStart + pre.headerLen;
  SHARDLIN_RETURN_IF_ERROR(checkDataSize(dataBytes, size - dataStart));

  NpyArray result;
  result.descr = std::move(header.descr);
  result.shape = std::move(header.shape);
  result.data.assign(bytes + dataStart, bytes + size);
  out = std::move(result);
  return Status::ok();
}

} // namespace

const char *npyDescr(DType t) {
  switch (t) {
  case DType::F16:
    return "<f2";
  case DType::BF16:
    return "<u2";
  case DType::F32:
    return "<f4";
  case DType::F64:
    return "<f8";
  }
  // Only reachable through an out-of-range cast; writeNpy rejects it first.
  return "<invalid>";
}

Status NpyFile::open(const std::string &path, std::unique_ptr<NpyFile> &out,
                     double streamTimeoutSeconds) {
  std::unique_ptr<NpyFile> f(new NpyFile());
  f->path_ = path;
  Header header;
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
  if (isStream_)
    return Status::ok(); // Its end was checked when it was read.
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

Status parseNpy(const uint8_t *bytes, size_t size, const std::string &name,
                NpyArray &out) {
  return parseNpyImpl(bytes, size, out).withContext(quotedName(name));
}

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
