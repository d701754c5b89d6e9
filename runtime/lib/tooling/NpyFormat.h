//===- NpyFormat.h - The .npy format, shared by the reader and writer -*- C++ -*-===//
//
// What NpyRead.cpp (files, FIFOs, slices) and NpyWrite.cpp (staged writing)
// share: the fixed-size preamble, the header dict's parser and writer, and
// the checks every array passes wherever its bytes come from. The format is
// numpy/lib/format.py's: the magic "\x93NUMPY", a major and minor version
// byte, the header length (2 bytes little-endian in version 1.0, 4 in 2.0 and
// 3.0), then the header, a Python dict literal such as
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// padded with spaces and a final newline, then the raw C-order data.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_RUNTIME_LIB_TOOLING_NPYFORMAT_H
#define SHARDLIN_RUNTIME_LIB_TOOLING_NPYFORMAT_H

#include "shardlin/runtime/base/Status.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace shardlin::rt::detail {

/// The magic's length.
constexpr size_t kNpyMagicLen = 6;
/// Magic, two version bytes and the longest (4-byte) header length field:
/// the most a reader needs before it knows the header's length.
constexpr size_t kNpyMaxPreambleLen = kNpyMagicLen + 2 + 4;

/// Quotes text taken from a file for an error message: printable ASCII only
/// and bounded, so hostile bytes cannot flood or corrupt the log.
std::string quotedFileText(const char *p, size_t len);

/// The item size of a descr this runtime reads (2, 4 or 8), or 0.
size_t itemSizeOfDescr(const std::string &descr);

/// What the fixed-size part of a file says.
struct NpyPreamble {
  int major = 0, minor = 0;
  size_t headerStart = 0;
  size_t headerLen = 0;
};

/// Parses the magic, version and header length from the first `size` bytes
/// of a file of `fileSize` bytes (`size` may be less than the file when only
/// a prefix has been read).
Status parseNpyPreamble(const uint8_t *bytes, size_t size, uint64_t fileSize,
                        NpyPreamble &out);

/// The parsed header dict.
struct NpyHeader {
  std::string descr;
  bool fortranOrder = false;
  std::vector<int64_t> shape;
};

/// Parses the header dict (`len` bytes of `text`): Python's whitespace,
/// either quote style, keys in any order, an optional trailing comma; it
/// rejects everything NumPy's reader rejects.
Status parseNpyHeader(const char *text, size_t len, NpyHeader &out);

/// Checks the parsed header and computes the data's byte size, without
/// allocating anything.
Status checkNpyHeader(const NpyHeader &header, uint64_t &dataBytes);

/// The data that follows the header must be exactly what it describes.
Status checkNpyDataSize(uint64_t expected, uint64_t present);

/// The preamble and the header text for an array of `descr` and `shape`,
/// padded as NumPy's writer pads it (the data starts at a multiple of 64).
std::string buildNpyHeader(const char *descr,
                           const std::vector<int64_t> &shape);

} // namespace shardlin::rt::detail

#endif // SHARDLIN_RUNTIME_LIB_TOOLING_NPYFORMAT_H
