//===- NpyWrite.cpp - Writing .npy outputs under one policy ---------------===//
//
// NpyOutputs (Npy.h): the outputs are staged, the in-place destinations
// written, and the regular files renamed into place as one set that can be
// undone. OutputFile.h has the files' mechanics, NpyFormat.h the header.
//
//===----------------------------------------------------------------------===//

#include "shardlin/runtime/tooling/Npy.h"

#include "shardlin/runtime/base/Buffer.h"

#include "tooling/CleanupRegistry.h"
#include "tooling/NpyFormat.h"
#include "tooling/OutputFile.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace shardlin::rt {

using namespace detail;

namespace {

/// One output between stage() and commit(): a complete temporary beside its
/// target, or, for a target written in place, the header and the caller's
/// data.
struct StagedNpy {
  std::string path;
  /// "result 1: writing 'y.npy'": the context of its messages.
  std::string context;
  OutputTarget target;
  TempFile file;
  std::string header;
  const void *data = nullptr;
  size_t dataBytes = 0;
  /// A safetensors file's data, gathered from its tensors.
  std::vector<uint8_t> owned;
};

Status stageBytes(const std::string &path, StagedNpy &staged);

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
  staged.header = buildNpyHeader(npyDescr(dtype), shape);
  staged.data = data;
  staged.dataBytes = dataBytes;
  return stageBytes(path, staged);
}

/// Resolves `path` and, for a file that is replaced, writes staged.header
/// and staged.data into a complete temporary beside it.
Status stageBytes(const std::string &path, StagedNpy &staged) {
  SHARDLIN_RETURN_IF_ERROR(resolveOutputTarget(path, staged.target));
  if (staged.target.inPlace)
    return Status::ok();
  const void *data = staged.data;
  const size_t dataBytes = staged.dataBytes;
  TempFile &tmp = staged.file;
  SHARDLIN_RETURN_IF_ERROR(tmp.create(staged.target.path));
  SHARDLIN_RETURN_IF_ERROR(
      writeAll(tmp.fd(), staged.header.data(), staged.header.size())
          .withContext(quotedName(tmp.name())));
  SHARDLIN_RETURN_IF_ERROR(
      writeAll(tmp.fd(), data, dataBytes).withContext(quotedName(tmp.name())));
  // No fsync: the rename makes the file appear complete or not at all to
  // readers and survives a crash of this process; durability across power
  // loss is not worth an fsync per tensor.
  return tmp.close();
}

} // namespace

struct NpyOutputs::Impl {
  // Pointers: a TempFile stays where it is (RenameSet refers to it).
  std::vector<std::unique_ptr<StagedNpy>> staged;
  // Declared after the files: undone (on destruction) before they go.
  RenameSet renames;
  // Alive from commit() until keep() or undo(): signals are held meanwhile.
  std::optional<CommitSection> section;
  bool committed = false;

  /// Stages the output `path`: `fill` writes its staged file. Every error,
  /// then and later, says "<label>: writing '<path>'".
  Status add(const std::string &path, const std::string &label,
             const std::function<Status(StagedNpy &)> &fill) {
    if (committed)
      return Status::internal("writing " + quotedName(path) +
                              ": staged after the commit");
    auto entry = std::make_unique<StagedNpy>();
    entry->path = path;
    entry->context = (label.empty() ? std::string() : label + ": ") +
                     "writing " + quotedName(path);
    SHARDLIN_RETURN_IF_ERROR(fill(*entry).withContext(entry->context));
    staged.push_back(std::move(entry));
    return Status::ok();
  }
};

NpyOutputs::NpyOutputs() : impl_(std::make_unique<Impl>()) {}

NpyOutputs::~NpyOutputs() {
  if (!impl_->committed)
    return;
  // Put the files back before the section ends (it may raise a held
  // signal, which ends the process).
  (void)impl_->renames.undo();
  impl_->section.reset();
}

Status NpyOutputs::stage(const std::string &path, DType dtype,
                         const std::vector<int64_t> &shape, const void *data,
                         const std::string &label) {
  return impl_->add(path, label, [&](StagedNpy &staged) {
    return stageNpyImpl(path, dtype, shape, data, staged);
  });
}

Status NpyOutputs::stageSafetensors(
    const std::string &path, const std::vector<SafetensorsOutput> &tensors,
    const std::string &label) {
  std::vector<SafetensorsRawOutput> raw;
  for (const SafetensorsOutput &t : tensors)
    raw.push_back({t.name, safetensorsDtypeName(t.dtype), t.shape, t.data});
  return stageSafetensors(path, raw, label);
}

Status NpyOutputs::stageSafetensors(
    const std::string &path, const std::vector<SafetensorsRawOutput> &tensors,
    const std::string &label) {
  return impl_->add(path, label, [&](StagedNpy &staged) -> Status {
    if (path.empty())
      return Status::invalidArgument("empty path");
    SHARDLIN_RETURN_IF_ERROR(
        buildSafetensors(tensors, staged.header, staged.owned));
    staged.data = staged.owned.data();
    staged.dataBytes = staged.owned.size();
    return stageBytes(path, staged);
  });
}

Status NpyOutputs::writeInPlace(double timeoutSeconds) {
  for (const std::unique_ptr<StagedNpy> &s : impl_->staged)
    if (s->target.inPlace)
      SHARDLIN_RETURN_IF_ERROR(
          detail::writeInPlace(s->target, s->header, s->data, s->dataBytes,
                               timeoutSeconds)
              .withContext(s->context));
  return Status::ok();
}

Status NpyOutputs::commit() {
  if (impl_->committed)
    return Status::internal("the outputs were already committed");
  impl_->committed = true;
  impl_->section.emplace();
  for (const std::unique_ptr<StagedNpy> &s : impl_->staged)
    if (!s->target.inPlace)
      impl_->renames.add(s->file, s->target.path);
  return impl_->renames.renameAll(*impl_->section);
}

int NpyOutputs::interrupted() const {
  return impl_->section ? impl_->section->interrupted() : 0;
}

Status NpyOutputs::undo() {
  Status s = impl_->renames.undo();
  impl_->committed = false;
  impl_->section.reset();
  return s;
}

void NpyOutputs::keep() {
  impl_->renames.keep();
  impl_->committed = false;
  impl_->section.reset();
}

Status writeNpy(const std::string &path, DType dtype,
                const std::vector<int64_t> &shape, const void *data) {
  NpyOutputs out;
  SHARDLIN_RETURN_IF_ERROR(out.stage(path, dtype, shape, data));
  SHARDLIN_RETURN_IF_ERROR(out.writeInPlace());
  SHARDLIN_RETURN_IF_ERROR(out.commit());
  out.keep();
  return Status::ok();
}

} // namespace shardlin::rt
