//===- Safetensors.h - safetensors checkpoints ------------------*- C++ -*-===//
//
// The format of Hugging Face's safetensors: an 8-byte little-endian header
// length N, N bytes of UTF-8 JSON (an object mapping each tensor's name to
// {"dtype", "shape", "data_offsets": [begin, end]}, the offsets relative to
// the byte after the header, plus an optional "__metadata__" object of
// strings), then the tensors' bytes, little-endian and C-order. shardlin
// reads and writes the dtypes F16, BF16, F32 and F64.
//
// The tools name a tensor of a checkpoint as FILE.safetensors:NAME, both
// for --arg (a rank reads only its own chunk of a sharded argument, with
// pread, through NpyFile) and for --out (several results may name one
// file: it is written once, under the output policy of the .npy outputs).
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_RUNTIME_SAFETENSORS_H
#define SHARDLIN_RUNTIME_SAFETENSORS_H

#include "shardlin/runtime/base/DType.h"
#include "shardlin/runtime/base/Status.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace shardlin::rt {

/// The reference implementation's limit on the header's length.
constexpr uint64_t kSafetensorsMaxHeader = 100000000;

/// One tensor of a checked header. `begin` and `end` are offsets into the
/// file (the header's data_offsets plus 8 + N).
struct SafetensorsTensor {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  uint64_t begin = 0, end = 0;
};

/// Parses and checks a header: `prefix` holds the file's first `size`
/// bytes (at least the 8-byte length and the whole JSON when the length
/// fits in them) and the file has `fileSize` bytes. Rejects, with
/// InvalidArgument saying what is wrong (and naming the tensor): a file
/// shorter than 8 bytes, a header over kSafetensorsMaxHeader bytes or past
/// the file's end, JSON that is not valid or not an object, a duplicate
/// name, a "__metadata__" that is not an object of strings, an entry that
/// is not {"dtype", "shape", "data_offsets"} exactly, a dtype other than
/// F16, BF16, F32, F64 (by name), a shape that is not a list of
/// non-negative integers or whose byte size overflows, offsets that are not
/// two integers with begin <= end, a byte size other than the shape's, and
/// data whose tensors overlap, leave gaps or do not end at the file's end.
/// The tensors come back in the order of their names.
Status parseSafetensorsHeader(const uint8_t *prefix, size_t size,
                              uint64_t fileSize,
                              std::vector<SafetensorsTensor> &out);

/// The length of the header that `prefix` (at least 8 bytes) announces.
uint64_t safetensorsHeaderLength(const uint8_t *prefix);

/// "F16", "BF16", "F32", "F64".
const char *safetensorsDtypeName(DType t);
/// The dtype named `name` (one of the four above); false for any other.
bool safetensorsDtypeOf(const std::string &name, DType &out);

/// The tensor `name` of `tensors`, or NotFound naming a few of those
/// present. `file` appears in the message.
Status findSafetensor(const std::vector<SafetensorsTensor> &tensors,
                      const std::string &name, const std::string &file,
                      const SafetensorsTensor *&out);

/// "it holds 'a', 'b'" (the first five names and the count), or "it holds
/// none".
std::string describeSafetensors(const std::vector<SafetensorsTensor> &tensors);

/// Whether `spec` names a tensor of a checkpoint, FILE.safetensors:NAME
/// (split at the first ".safetensors:"), and if so its parts.
bool splitSafetensorsSpec(const std::string &spec, std::string &file,
                          std::string &tensor);

/// Whether the tensor part of a spec names a range of rows of a tensor,
/// NAME[B:E] (rows [B, E) of dim 0, 0 <= B <= E, decimal), and if so its
/// parts. The readers take FILE.safetensors:NAME[B:E] as an array of
/// E - B rows (a fused q/k/v weight's part: docs/attention.md, "Fused
/// QKV"); a tensor whose name is literally NAME[B:E] is read whole.
bool splitSafetensorsRows(const std::string &tensor, std::string &name,
                          int64_t &begin, int64_t &end);

/// Whether `path` ends in ".safetensors": a whole checkpoint, where one
/// array (FILE.safetensors:NAME, or a .npy file) is read or written.
bool isSafetensorsFileName(const std::string &path);

/// One tensor to write.
struct SafetensorsOutput {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  const void *data = nullptr;
};

/// One tensor to write, of any dtype of the format named as the format
/// names it: the four above, which the runtime computes in, and those a
/// checkpoint may hold besides (the compiler's
/// --shardlin-externalize-parameters writes a module's integer constants):
/// "BOOL" (one byte each), "U8", "I8", "U16", "I16", "U32", "I32", "U64",
/// "I64". The runtime's reader takes only the four (a file holding others
/// is refused by parseSafetensorsHeader).
struct SafetensorsRawOutput {
  std::string name;
  std::string dtype = "F32";
  std::vector<int64_t> shape;
  const void *data = nullptr;
};

/// The bytes of one element of the safetensors dtype `dtype` (a name
/// SafetensorsRawOutput takes), or 0 for a name it does not take.
size_t safetensorsElementBytes(const std::string &dtype);

/// The bytes of a safetensors file holding `tensors` in their order: the
/// length and the JSON (padded with spaces to a multiple of 8 bytes, as the
/// reference writer pads it) in `header`, the tensors' bytes in `data`.
/// Rejects an empty or duplicate name, "__metadata__", or a dtype name
/// SafetensorsRawOutput does not take.
Status buildSafetensors(const std::vector<SafetensorsRawOutput> &tensors,
                        std::string &header, std::vector<uint8_t> &data);

/// Writes a safetensors file under the output policy of NpyOutputs (a new
/// file renamed over the target once complete: a failed write leaves no new
/// or changed file).
Status writeSafetensors(const std::string &path,
                        const std::vector<SafetensorsOutput> &tensors);
Status writeSafetensors(const std::string &path,
                        const std::vector<SafetensorsRawOutput> &tensors);

/// Parses and checks a whole file held in memory (used by the fuzzer),
/// as the reader checks a file on disk. `name` appears in messages.
Status parseSafetensors(const uint8_t *bytes, size_t size,
                        const std::string &name,
                        std::vector<SafetensorsTensor> &out);

} // namespace shardlin::rt

#endif // SHARDLIN_RUNTIME_SAFETENSORS_H
