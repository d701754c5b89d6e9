//===- Npy.h - NumPy .npy files ---------------------------------*- C++ -*-===//
//
// Little-endian, C-order arrays: '<f2' (f16), '<f4' (f32), '<f8' (f64).
// NumPy has no bfloat16, so bf16 tensors are stored as '<u2' arrays holding
// the bf16 bit patterns (what `x.view(np.uint16)` of an ml_dtypes bfloat16
// array gives); the entry signature says how to interpret them.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_RUNTIME_NPY_H
#define SHARDLIN_RUNTIME_NPY_H

#include "shardlin/runtime/base/ChunkLayout.h"
#include "shardlin/runtime/base/DType.h"
#include "shardlin/runtime/base/Status.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace shardlin::rt {

struct NpyArray {
  /// The descr string as written in the header, e.g. "<f4".
  std::string descr;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;
};

/// An open .npy file whose header has been read and checked as readNpy
/// checks it (the data's size included). The data is read on request, whole
/// or one slice along a dim, with pread at the offsets the header implies,
/// so that a rank reads only its own chunk of a global sharded tensor:
/// memory and I/O are those of the slice, not of the file (arrays are
/// C-order: Fortran-order files are rejected when opened, so there is no
/// layout that needs the whole file). Not safe to share between threads.
class NpyFile {
public:
  /// Opens and checks `path`; messages name it. A FIFO or pipe (a named
  /// FIFO, or a shell's `<(...)`) is refused unless `streamTimeoutSeconds`
  /// > 0: it is then read whole, into memory, and must deliver a complete
  /// .npy and close within that many seconds (else
  /// an IoError saying how many bytes came), so that a writer that never comes cannot
  /// hold the reader past a run's timeout.
  static Status open(const std::string &path, std::unique_ptr<NpyFile> &out,
                     double streamTimeoutSeconds = 0);
  ~NpyFile();
  NpyFile(const NpyFile &) = delete;
  NpyFile &operator=(const NpyFile &) = delete;

  const std::string &path() const { return path_; }
  /// The descr string as written in the header, e.g. "<f4".
  const std::string &descr() const { return descr_; }
  const std::vector<int64_t> &shape() const { return shape_; }
  size_t itemSize() const { return itemSize_; }

  /// The whole array, and a check that the file did not grow meanwhile.
  Status readAll(std::vector<uint8_t> &out);
  /// The sub-array whose index along `dim` is in `range` (every other dim
  /// whole), in C order: shape() with dim `dim` of size range.size. Reads
  /// one contiguous range of the file when the slice is contiguous (dim 0,
  /// or only size-1 dims before `dim`, or the whole dim); otherwise one
  /// read per row piece (one per index of the dims before `dim`), except
  /// that pieces shorter than 512 bytes are read in groups of rows through
  /// a bounded (1 MiB) staging buffer, gaps included, to keep the number of
  /// system calls down. A dim or range outside the shape is an error.
  Status readSlice(int64_t dim, Range range, std::vector<uint8_t> &out);
  /// Bytes of data read from the file so far (gaps included).
  uint64_t bytesRead() const { return bytesRead_; }

private:
  NpyFile() = default;
  Status preadAll(void *dst, size_t len, uint64_t offset);

  std::string path_;
  int fd_ = -1;
  std::string descr_;
  std::vector<int64_t> shape_;
  size_t itemSize_ = 0;
  uint64_t dataStart_ = 0, dataBytes_ = 0;
  uint64_t bytesRead_ = 0;
  /// A FIFO's data, read when it was opened.
  bool isStream_ = false;
  std::vector<uint8_t> streamed_;
};

/// Parses a .npy file (NpyFile::open, then readAll). Rejects (with a
/// message naming the file and the problem): missing files, files that are
/// not regular (a device; a FIFO unless `streamTimeoutSeconds` > 0, see
/// NpyFile::open: refused at once, without waiting for a writer), bad
/// magic, unsupported versions, malformed or oversized headers, Fortran
/// order, big-endian or non-float descrs other than '<u2', shapes whose
/// byte size overflows, and truncated or overlong data.
Status readNpy(const std::string &path, NpyArray &out,
               double streamTimeoutSeconds = 0);
/// The same, from bytes in memory (used by the fuzzer). `name` appears in
/// messages.
Status parseNpy(const uint8_t *bytes, size_t size, const std::string &name,
                NpyArray &out);

/// The descr shardlin reads and writes for `t`: "<f2", "<u2" (bf16 bits),
/// "<f4", "<f8".
const char *npyDescr(DType t);

/// Writes a .npy file atomically: to a temporary file in the directory of
/// its target, then renamed over it, so a failure never leaves a truncated
/// file. The target is `path`, or the file a symlink at `path` ends at (the
/// link stays a link). An existing file that is not regular (a device, a
/// FIFO) is written in place instead, neither replaced nor truncated; a
/// FIFO that no process reads fails instead of blocking.
Status writeNpy(const std::string &path, DType dtype,
                const std::vector<int64_t> &shape, const void *data);

/// A .npy file written completely under a temporary name next to its
/// target (see writeNpy), which appears at the target only on commit() (a
/// rename) and is removed if the object is destroyed first; for a target
/// written in place, the bytes are kept and written on commit(). Lets the ranks of a run agree
/// that every output was written before any of them appears.
class PendingNpy {
public:
  static Status stage(const std::string &path, DType dtype,
                      const std::vector<int64_t> &shape, const void *data,
                      std::unique_ptr<PendingNpy> &out);
  ~PendingNpy();
  PendingNpy(const PendingNpy &) = delete;
  PendingNpy &operator=(const PendingNpy &) = delete;

  Status commit();

private:
  PendingNpy();
  struct Temp;
  std::string path_;
  std::unique_ptr<Temp> temp_;
};

} // namespace shardlin::rt

#endif // SHARDLIN_RUNTIME_NPY_H
