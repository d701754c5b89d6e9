//===- NpyFormat.cpp - The .npy format: preamble, header, codec -----------===//
//
// Files come from outside (and a fuzzer), so the reader trusts nothing: every
// length is checked against the bytes actually present before it is used to
// index or allocate, and the dict is parsed by a small recursive-descent
// parser over exactly the literal forms NumPy writes, rather than anything
// resembling an evaluator. NpyFormat.h describes the format.
//
//===----------------------------------------------------------------------===//

#include "tooling/NpyFormat.h"

#include "shardlin/runtime/base/Buffer.h"
#include "shardlin/runtime/tooling/Npy.h"

#include "tooling/OutputFile.h"

#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace shardlin::rt {
namespace detail {

namespace {

constexpr unsigned char npyMagic[kNpyMagicLen] = {0x93, 'N', 'U', 'M', 'P',
                                                  'Y'};
constexpr size_t magicLen = kNpyMagicLen;
/// NumPy's own limit (NPY_MAXDIMS is 64 since NumPy 2.0). Bounding it keeps a
/// hostile header from growing the shape vector without limit.
constexpr size_t maxDims = 64;
/// NumPy's current writer aligns the data to 64 bytes (ARRAY_ALIGN).
constexpr size_t dataAlign = 64;

std::string quoted(const char *p, size_t len) {
  return quotedFileText(p, len);
}
std::string quoted(const std::string &s) { return quoted(s.data(), s.size()); }

/// Recursive-descent parser for the header dict. It accepts Python's
/// whitespace, either quote style, keys in any order, and an optional
/// trailing comma in the dict and in the shape tuple; it rejects everything
/// NumPy's reader rejects (unknown or missing keys, non-tuple shapes,
/// non-integer dims, non-bool fortran_order).
class HeaderParser {
public:
  HeaderParser(const char *text, size_t len)
      : begin_(text), cur_(text), end_(text + len) {}

  Status parse(NpyHeader &out) {
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

} // namespace

std::string quotedFileText(const char *p, size_t len) {
  constexpr size_t maxLen = 40;
  std::string s = "'";
  for (size_t i = 0; i < len && i < maxLen; ++i)
    s += (p[i] >= 0x20 && p[i] < 0x7f) ? p[i] : '?';
  if (len > maxLen)
    s += "...";
  return s + "'";
}

size_t itemSizeOfDescr(const std::string &descr) {
  // '<V2' and '|V2': bf16 as ml_dtypes writes it, and as plain NumPy saves
  // such an array again (void has no byte order); '<u2': its bit patterns.
  if (descr == "<f2" || descr == "<V2" || descr == "|V2" || descr == "<u2")
    return 2;
  if (descr == "<f4")
    return 4;
  if (descr == "<f8")
    return 8;
  return 0;
}

Status parseNpyPreamble(const uint8_t *bytes, size_t size, uint64_t fileSize,
                        NpyPreamble &out) {
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

Status parseNpyHeader(const char *text, size_t len, NpyHeader &out) {
  return HeaderParser(text, len).parse(out);
}

Status checkNpyHeader(const NpyHeader &header, uint64_t &dataBytes) {
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
        " (supported: '<f2', '<f4', '<f8', and for bf16 '<V2' "
        "(ml_dtypes), '|V2' or '<u2' (its bit patterns))");
  int64_t numElements = 0;
  // The shape came from the file: a bad one is the file's fault.
  SHARDLIN_RETURN_IF_ERROR(
      checkedNumElements(header.shape, numElements, itemSize)
          .withCode(StatusCode::InvalidArgument));
  dataBytes = uint64_t(numElements) * itemSize;
  return Status::ok();
}

Status checkNpyDataSize(uint64_t expected, uint64_t present) {
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

// Padded as NumPy's writer (format._wrap_header) pads it: spaces, then a
// newline.
std::string buildNpyHeader(const char *descr,
                           const std::vector<int64_t> &shape) {
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

} // namespace detail

namespace {

Status parseNpyImpl(const uint8_t *bytes, size_t size, NpyArray &out) {
  if (!bytes && size != 0)
    return Status::invalidArgument("null buffer of " + std::to_string(size) +
                                   " bytes");
  detail::NpyPreamble pre;
  SHARDLIN_RETURN_IF_ERROR(detail::parseNpyPreamble(bytes, size, size, pre));
  detail::NpyHeader header;
  SHARDLIN_RETURN_IF_ERROR(detail::parseNpyHeader(
      reinterpret_cast<const char *>(bytes) + pre.headerStart, pre.headerLen,
      header));
  uint64_t dataBytes = 0;
  SHARDLIN_RETURN_IF_ERROR(detail::checkNpyHeader(header, dataBytes));
  const size_t dataStart = pre.headerStart + pre.headerLen;
  SHARDLIN_RETURN_IF_ERROR(detail::checkNpyDataSize(dataBytes, size - dataStart));

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
    // What ml_dtypes' bfloat16 writes through np.save (its dtype.str).
    return "<V2";
  case DType::F32:
    return "<f4";
  case DType::F64:
    return "<f8";
  }
  // Only reachable through an out-of-range cast; writeNpy rejects it first.
  return "<invalid>";
}

bool npyDescrMatches(const std::string &descr, DType t) {
  if (t == DType::BF16)
    return descr == "<V2" || descr == "|V2" || descr == "<u2";
  return descr == npyDescr(t);
}

std::string npyDescrsAccepted(DType t) {
  if (t == DType::BF16)
    return "'<V2', '|V2' or '<u2'";
  return std::string("'") + npyDescr(t) + "'";
}

Status parseNpy(const uint8_t *bytes, size_t size, const std::string &name,
                NpyArray &out) {
  return parseNpyImpl(bytes, size, out).withContext(detail::quotedName(name));
}

} // namespace shardlin::rt
