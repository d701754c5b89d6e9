//===- Npy.h - NumPy .npy files ---------------------------------*- C++ -*-===//
//
// Little-endian, C-order arrays: '<f2' (f16), '<f4' (f32), '<f8' (f64).
// NumPy itself has no bfloat16. bf16 tensors are written as ml_dtypes
// writes them (np.save of an ml_dtypes.bfloat16 array): descr '<V2', two
// opaque bytes per element, which `np.load(f).view(ml_dtypes.bfloat16)`
// turns back into bf16. Where the entry signature says bf16, the reader also
// takes '|V2' (such an array saved again by plain NumPy) and '<u2' (the bit
// patterns as uint16, `x.view(np.uint16)`); the signature says how to
// interpret them (docs/runtime.md, "bf16 files").
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_RUNTIME_NPY_H
#define SHARDLIN_RUNTIME_NPY_H

#include "shardlin/runtime/base/ChunkLayout.h"
#include "shardlin/runtime/base/DType.h"
#include "shardlin/runtime/base/Status.h"
#include "shardlin/runtime/tooling/Safetensors.h"

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
  /// Opens tensor `tensor` of the safetensors file `path` (a regular file;
  /// parseSafetensorsHeader's checks): the same reads as a .npy array's, at
  /// the tensor's offsets. descr() is the safetensors dtype ("BF16").
  static Status openSafetensors(const std::string &path,
                                const std::string &tensor,
                                std::unique_ptr<NpyFile> &out);
  /// NpyFile::open, or openSafetensors for a FILE.safetensors:NAME spec.
  static Status openSpec(const std::string &spec,
                         std::unique_ptr<NpyFile> &out,
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
  /// A tensor of a safetensors file: its data ends before the file does.
  bool bounded_ = false;
  /// A FIFO's data, read when it was opened.
  bool isStream_ = false;
  std::vector<uint8_t> streamed_;
};

/// Parses a .npy file (NpyFile::open, then readAll). Rejects (with a
/// message naming the file and the problem): missing files, files that are
/// not regular (a device; a FIFO unless `streamTimeoutSeconds` > 0, see
/// NpyFile::open: refused at once, without waiting for a writer), bad
/// magic, unsupported versions, malformed or oversized headers, Fortran
/// order, big-endian, and descrs other than the ones npyDescrMatches
/// takes for some dtype, shapes whose
/// byte size overflows, and truncated or overlong data.
Status readNpy(const std::string &path, NpyArray &out,
               double streamTimeoutSeconds = 0);
/// readNpy, or for a FILE.safetensors:NAME spec that tensor (its descr the
/// safetensors dtype, e.g. "BF16").
Status readArraySpec(const std::string &spec, NpyArray &out,
                     double streamTimeoutSeconds = 0);
/// The same, from bytes in memory (used by the fuzzer). `name` appears in
/// messages.
Status parseNpy(const uint8_t *bytes, size_t size, const std::string &name,
                NpyArray &out);

/// The descr shardlin writes for `t`: "<f2", "<V2" (bf16, as ml_dtypes
/// writes it), "<f4", "<f8".
const char *npyDescr(DType t);
/// Whether a file of `descr` holds elements of `t`: npyDescr(t), and for
/// bf16 also "|V2" and "<u2".
bool npyDescrMatches(const std::string &descr, DType t);
/// The descrs npyDescrMatches takes for `t`, quoted, for messages:
/// "'<V2', '|V2' or '<u2'".
std::string npyDescrsAccepted(DType t);

/// Writes one .npy file under the output policy of NpyOutputs (a regular
/// file appears complete or not at all; a device, FIFO or pipe is written
/// in place, without a time limit).
Status writeNpy(const std::string &path, DType dtype,
                const std::vector<int64_t> &shape, const void *data);

/// The .npy outputs of a run (or of one rank of it), written under one
/// policy for every kind of destination (docs/robustness.md, "Outputs"): no
/// regular file appears or changes unless every output was written, and
/// the destinations written in place are written before any regular one is
/// replaced. The steps are separate so that the ranks of a run can agree
/// between them (Runner.h):
///   1. stage() each output. A regular file (or the file a symlink ends
///      at, or a name that does not exist yet) is written whole under a
///      temporary name beside it. A destination written in place (a FIFO,
///      a pipe, a device, or what /dev/stdout, /dev/fd/N or /proc/self/fd/N
///      names, unless that is a regular file) is only resolved: its `data`
///      must stay valid until writeInPlace() returns.
///   2. writeInPlace() writes those, in the order they were staged.
///   3. commit() renames the temporaries over their targets, keeping each
///      file it replaces aside; a rename that fails, or a signal that
///      arrives meanwhile (Signals.h), puts back the ones already renamed.
///   4. keep() makes the commit final, or undo() puts back every replaced
///      file and removes every new one.
/// Destroying the object before keep() removes the temporaries and undoes a
/// commit. Not safe to share between threads.
class NpyOutputs {
public:
  NpyOutputs();
  ~NpyOutputs();
  NpyOutputs(const NpyOutputs &) = delete;
  NpyOutputs &operator=(const NpyOutputs &) = delete;

  /// Messages name `path`, after `label` (e.g. "result 1") if given, also
  /// those of writeInPlace about this output. Writes bf16 as
  /// npyDescr(DType::BF16) says.
  Status stage(const std::string &path, DType dtype,
               const std::vector<int64_t> &shape, const void *data,
               const std::string &label = std::string());
  /// `timeoutSeconds` > 0 bounds how long a reader may take the data (0:
  /// no limit). A reader that closes its end early is an IoError (EPIPE),
  /// never a SIGPIPE.
  Status writeInPlace(double timeoutSeconds = 0);
  /// Stages one safetensors file holding `tensors` (buildSafetensors),
  /// whose data must stay valid until stage returns (it is copied). The
  /// first form takes the runtime's dtypes, the second any dtype the
  /// format writes.
  Status stageSafetensors(const std::string &path,
                          const std::vector<SafetensorsOutput> &tensors,
                          const std::string &label = std::string());
  Status stageSafetensors(const std::string &path,
                          const std::vector<SafetensorsRawOutput> &tensors,
                          const std::string &label = std::string());
  Status commit();
  /// A signal that arrived since commit() began and is held until this
  /// object is done (Signals.h), or 0. A caller that agrees with other
  /// ranks counts it as a failure: every rank then undoes its commit.
  int interrupted() const;
  /// Returns the first failure to put a file back.
  Status undo();
  void keep();

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace shardlin::rt

#endif // SHARDLIN_RUNTIME_NPY_H
