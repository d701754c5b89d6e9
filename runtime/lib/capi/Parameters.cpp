//===- Parameters.cpp - A rank's chunk of a parameter, read by name -------===//
//
// shardlin_parameter_read: what shardlin-run --params does for one
// argument, for a C program that calls compiled code itself. The tensor is
// opened as --arg=FILE.safetensors:NAME opens it (NpyFile::openSafetensors,
// the header checked as strictly) and only the chunk's bytes are read.
//
//===----------------------------------------------------------------------===//

#include "capi/Entries.h"
#include "capi/Errors.h"
#include "capi/Views.h"

#include "shardlin/runtime/base/ChunkLayout.h"
#include "shardlin/runtime/program/Program.h"
#include "shardlin/runtime/tooling/Npy.h"
#include "shardlin/runtime/tooling/Safetensors.h"

#include <memory>
#include <vector>

namespace shardlin::rt::capi {

Status readParameter(const char *path, const char *name, int dtypeValue,
                     int64_t dim, int64_t offset, int64_t size,
                     const shardlin_memref *outRef) {
  if (!path || !name)
    return invalid(std::string(!path ? "path" : "name") + " is null");
  DType dtype;
  SHARDLIN_RETURN_IF_ERROR(toDType(dtypeValue, "dtype", dtype));
  std::unique_ptr<NpyFile> file;
  SHARDLIN_RETURN_IF_ERROR(NpyFile::openSafetensors(path, name, file));
  const std::string where =
      std::string("tensor '") + name + "' of '" + path + "'";
  if (file->descr() != safetensorsDtypeName(dtype))
    return invalid(where + " is " + file->descr() + ", not the dtype's " +
                   safetensorsDtypeName(dtype));
  std::vector<int64_t> shape = file->shape();
  const int64_t rank = static_cast<int64_t>(shape.size());
  if (dim < -1 || dim >= rank)
    return invalid("dim " + str(dim) + " is not -1 (the whole tensor) or a "
                   "dim of " + where + " (rank " + str(rank) + ")");
  if (dim >= 0) {
    if (offset < 0 || size < 0 || offset > shape[dim] ||
        size > shape[dim] - offset)
      return invalid("the range [" + str(offset) + ", " + str(offset) +
                     " + " + str(size) + ") is not within dim " + str(dim) +
                     " of " + where + " (size " + str(shape[dim]) + ")");
    shape[dim] = size;
  }
  View out;
  SHARDLIN_RETURN_IF_ERROR(readView(outRef, "out", dtype, rank, out));
  SHARDLIN_RETURN_IF_ERROR(checkOneAddressPerElement(out));
  if (out.sizes != shape)
    return invalid("out has shape " + out.shape() + " but the chunk of " +
                   where + " has " + formatShape(shape));
  std::vector<uint8_t> bytes;
  SHARDLIN_RETURN_IF_ERROR(dim < 0 ? file->readAll(bytes)
                                   : file->readSlice(dim, {offset, size},
                                                     bytes));
  copyDenseToView(reinterpret_cast<const char *>(bytes.data()), out);
  return Status::ok();
}

} // namespace shardlin::rt::capi
