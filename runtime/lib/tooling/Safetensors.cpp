//===- Safetensors.cpp - The safetensors header: parsing, checks, writing -===//
//
// The header is JSON, parsed by nlohmann/json (the distribution's
// nlohmann-json3-dev) without exceptions: a malformed header is a
// discarded value, and every field's type is checked before it is read.
// The checks follow the reference implementation's (safetensors'
// Metadata::validate): the tensors' byte ranges must tile the data exactly,
// in some order, from its start to the file's end.
//
//===----------------------------------------------------------------------===//

#include "shardlin/runtime/tooling/Safetensors.h"

#include "shardlin/runtime/base/Buffer.h"
#include "shardlin/runtime/program/Program.h"
#include "shardlin/runtime/tooling/Npy.h"

#include "tooling/NpyFormat.h"
#include "tooling/OutputFile.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <set>
#include <string>
#include <vector>

namespace shardlin::rt {

using detail::quotedFileText;
using detail::quotedName;
using json = nlohmann::json;

namespace {

constexpr size_t kLengthBytes = 8;

std::string quotedText(const std::string &s) {
  return quotedFileText(s.data(), s.size());
}

std::string jsonTypeName(const json &j) { return j.type_name(); }

/// A list of non-negative integers that fit in int64_t.
Status readIntegers(const json &j, const std::string &what,
                    std::vector<uint64_t> &out) {
  if (!j.is_array())
    return Status::invalidArgument(what + " is a JSON " + jsonTypeName(j) +
                                   ", not a list of integers");
  out.clear();
  for (const json &v : j) {
    if (v.is_number_integer() && !v.is_number_unsigned())
      return Status::invalidArgument(what + " has the negative value " +
                                     std::to_string(v.get<int64_t>()));
    if (!v.is_number_unsigned())
      return Status::invalidArgument(
          what + " has a " + jsonTypeName(v) +
          " where a non-negative integer belongs (at most 2^63 - 1)");
    const uint64_t x = v.get<uint64_t>();
    if (x > uint64_t(INT64_MAX))
      return Status::invalidArgument(what + " has the value " +
                                     std::to_string(x) +
                                     ", over 2^63 - 1");
    out.push_back(x);
  }
  return Status::ok();
}

/// One entry of the header, checked against the data's `dataBytes`.
Status readEntry(const std::string &name, const json &j, uint64_t dataStart,
                 uint64_t dataBytes, SafetensorsTensor &out) {
  if (!j.is_object())
    return Status::invalidArgument("is a JSON " + jsonTypeName(j) +
                                   ", not an object");
  for (auto it = j.begin(); it != j.end(); ++it)
    if (it.key() != "dtype" && it.key() != "shape" &&
        it.key() != "data_offsets")
      return Status::invalidArgument(
          "has the unknown key " + quotedText(it.key()) +
          " (an entry has exactly 'dtype', 'shape' and 'data_offsets')");
  for (const char *key : {"dtype", "shape", "data_offsets"})
    if (!j.contains(key))
      return Status::invalidArgument(std::string("has no '") + key + "'");
  const json &dtype = j["dtype"];
  if (!dtype.is_string())
    return Status::invalidArgument("its dtype is a JSON " +
                                   jsonTypeName(dtype) + ", not a string");
  const std::string &dt = dtype.get_ref<const std::string &>();
  if (!safetensorsDtypeOf(dt, out.dtype))
    return Status::invalidArgument("its dtype " + quotedText(dt) +
                                   " is not supported (supported: F16, "
                                   "BF16, F32, F64)");
  std::vector<uint64_t> dims, offsets;
  SHARDLIN_RETURN_IF_ERROR(readIntegers(j["shape"], "its shape", dims));
  SHARDLIN_RETURN_IF_ERROR(
      readIntegers(j["data_offsets"], "its data_offsets", offsets));
  if (dims.size() > 64)
    return Status::invalidArgument("its shape has " +
                                   std::to_string(dims.size()) +
                                   " dims (at most 64)");
  out.shape.assign(dims.begin(), dims.end());
  const size_t elt = dtypeSize(out.dtype);
  int64_t n = 0;
  SHARDLIN_RETURN_IF_ERROR(checkedNumElements(out.shape, n, elt)
                               .withCode(StatusCode::InvalidArgument)
                               .withContext("its shape"));
  if (offsets.size() != 2)
    return Status::invalidArgument(
        "its data_offsets has " + std::to_string(offsets.size()) +
        " values, not two ([begin, end])");
  const uint64_t begin = offsets[0], end = offsets[1];
  if (begin > end)
    return Status::invalidArgument(
        "its data_offsets [" + std::to_string(begin) + ", " +
        std::to_string(end) + "] end before they begin");
  if (end > dataBytes)
    return Status::invalidArgument(
        "its data_offsets [" + std::to_string(begin) + ", " +
        std::to_string(end) + "] run past the data's " +
        std::to_string(dataBytes) + " bytes (the file ends there)");
  const uint64_t want = uint64_t(n) * elt;
  if (end - begin != want)
    return Status::invalidArgument(
        "its data_offsets [" + std::to_string(begin) + ", " +
        std::to_string(end) + "] hold " + std::to_string(end - begin) +
        " bytes, but " + dt + " of shape " + formatShape(out.shape) +
        " is " + std::to_string(want) + " bytes");
  out.name = name;
  out.begin = dataStart + begin;
  out.end = dataStart + end;
  return Status::ok();
}

} // namespace

uint64_t safetensorsHeaderLength(const uint8_t *prefix) {
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i)
    n = (n << 8) | prefix[i];
  return n;
}

const char *safetensorsDtypeName(DType t) {
  switch (t) {
  case DType::F16:
    return "F16";
  case DType::BF16:
    return "BF16";
  case DType::F32:
    return "F32";
  case DType::F64:
    return "F64";
  }
  return "?";
}

bool safetensorsDtypeOf(const std::string &name, DType &out) {
  for (DType t : {DType::F16, DType::BF16, DType::F32, DType::F64})
    if (name == safetensorsDtypeName(t)) {
      out = t;
      return true;
    }
  return false;
}

Status parseSafetensorsHeader(const uint8_t *prefix, size_t size,
                              uint64_t fileSize,
                              std::vector<SafetensorsTensor> &out) {
  if (fileSize < kLengthBytes || size < kLengthBytes)
    return Status::invalidArgument(
        "file is " + std::to_string(fileSize) +
        " bytes, too short for a safetensors header (its length alone is 8)");
  const uint64_t n = safetensorsHeaderLength(prefix);
  if (n > kSafetensorsMaxHeader)
    return Status::invalidArgument(
        "header length " + std::to_string(n) + " is over the limit of " +
        std::to_string(kSafetensorsMaxHeader) + " bytes");
  if (n > fileSize - kLengthBytes)
    return Status::invalidArgument(
        "header length " + std::to_string(n) + " runs past the end of the " +
        std::to_string(fileSize) + "-byte file");
  if (n > size - kLengthBytes)
    return Status::internal("the header's " + std::to_string(n) +
                            " bytes were not all read");
  const char *text = reinterpret_cast<const char *>(prefix) + kLengthBytes;
  // The names seen at the top level: nlohmann keeps the last of duplicate
  // keys, the reference implementation refuses them.
  std::set<std::string> names;
  std::string duplicate;
  json::parser_callback_t noteKeys = [&](int depth, json::parse_event_t event,
                                          json &parsed) {
    if (depth == 1 && event == json::parse_event_t::key &&
        parsed.is_string() &&
        !names.insert(parsed.get_ref<const std::string &>()).second &&
        duplicate.empty())
      duplicate = parsed.get_ref<const std::string &>();
    return true;
  };
  json header = json::parse(text, text + n, noteKeys,
                            /*allow_exceptions=*/false);
  if (header.is_discarded())
    return Status::invalidArgument("header is not valid JSON (" +
                                   std::to_string(n) + " bytes starting " +
                                   quotedFileText(text, size_t(n)) + ")");
  if (!header.is_object())
    return Status::invalidArgument("header is a JSON " +
                                   jsonTypeName(header) +
                                   ", not an object of tensors");
  if (!duplicate.empty())
    return Status::invalidArgument("header names the tensor " +
                                   quotedText(duplicate) + " twice");
  const uint64_t dataStart = kLengthBytes + n;
  const uint64_t dataBytes = fileSize - dataStart;
  std::vector<SafetensorsTensor> tensors;
  for (auto it = header.begin(); it != header.end(); ++it) {
    if (it.key() == "__metadata__") {
      if (!it->is_object())
        return Status::invalidArgument("__metadata__ is a JSON " +
                                       jsonTypeName(*it) +
                                       ", not an object of strings");
      for (auto m = it->begin(); m != it->end(); ++m)
        if (!m->is_string())
          return Status::invalidArgument(
              "__metadata__ " + quotedText(m.key()) + " is a JSON " +
              jsonTypeName(*m) + ", not a string");
      continue;
    }
    SafetensorsTensor t;
    SHARDLIN_RETURN_IF_ERROR(
        readEntry(it.key(), *it, dataStart, dataBytes, t)
            .withContext("tensor " + quotedText(it.key())));
    tensors.push_back(std::move(t));
  }
  // nlohmann's objects iterate in key order; the header's order is not
  // kept, and nothing depends on it. By offset (then name, so that
  // messages do not depend on the sort).
  std::vector<const SafetensorsTensor *> byOffset;
  for (const SafetensorsTensor &t : tensors)
    byOffset.push_back(&t);
  std::sort(byOffset.begin(), byOffset.end(),
            [](const SafetensorsTensor *a, const SafetensorsTensor *b) {
              if (a->begin != b->begin)
                return a->begin < b->begin;
              return a->end != b->end ? a->end < b->end : a->name < b->name;
            });
  uint64_t at = dataStart;
  const SafetensorsTensor *previous = nullptr;
  for (const SafetensorsTensor *t : byOffset) {
    if (t->begin < at)
      return Status::invalidArgument(
          "tensor " + quotedText(t->name) + "'s bytes [" +
          std::to_string(t->begin - dataStart) + ", " +
          std::to_string(t->end - dataStart) + ") overlap those of " +
          quotedText(previous->name) + " [" +
          std::to_string(previous->begin - dataStart) + ", " +
          std::to_string(previous->end - dataStart) + ")");
    if (t->begin > at)
      return Status::invalidArgument(
          "the data has a gap: bytes [" + std::to_string(at - dataStart) +
          ", " + std::to_string(t->begin - dataStart) +
          ") belong to no tensor (tensor " + quotedText(t->name) +
          " begins after them)");
    at = t->end;
    previous = t;
  }
  if (at != fileSize)
    return Status::invalidArgument(
        "the data has " + std::to_string(fileSize - at) +
        " bytes after the last tensor's (" +
        std::to_string(fileSize - dataStart) + " bytes of data, " +
        std::to_string(at - dataStart) + " used)");
  out = std::move(tensors);
  return Status::ok();
}

Status findSafetensor(const std::vector<SafetensorsTensor> &tensors,
                      const std::string &name, const std::string &file,
                      const SafetensorsTensor *&out) {
  for (const SafetensorsTensor &t : tensors)
    if (t.name == name) {
      out = &t;
      return Status::ok();
    }
  return Status::notFound(quotedName(file) + " has no tensor " +
                          quotedName(name) + " (" +
                          describeSafetensors(tensors) + ")");
}

std::string describeSafetensors(const std::vector<SafetensorsTensor> &tensors) {
  if (tensors.empty())
    return "it holds none";
  std::string present;
  const size_t shown = std::min<size_t>(tensors.size(), 5);
  for (size_t i = 0; i < shown; ++i)
    present += (i ? ", " : "") + quotedText(tensors[i].name);
  if (tensors.size() > shown)
    present += ", ... (" + std::to_string(tensors.size()) + " in all)";
  return "it holds " + present;
}

bool splitSafetensorsSpec(const std::string &spec, std::string &file,
                          std::string &tensor) {
  const std::string key = ".safetensors:";
  const size_t at = spec.find(key);
  if (at == std::string::npos)
    return false;
  file = spec.substr(0, at + key.size() - 1);
  tensor = spec.substr(at + key.size());
  return true;
}

bool splitSafetensorsRows(const std::string &tensor, std::string &name,
                          int64_t &begin, int64_t &end) {
  const size_t open = tensor.rfind('[');
  if (open == std::string::npos || open == 0 || tensor.back() != ']')
    return false;
  const std::string inside = tensor.substr(open + 1, tensor.size() - open - 2);
  const size_t colon = inside.find(':');
  if (colon == std::string::npos)
    return false;
  auto number = [](const std::string &s, int64_t &out) {
    if (s.empty() || s.size() > 18 ||
        s.find_first_not_of("0123456789") != std::string::npos)
      return false;
    out = std::stoll(s);
    return true;
  };
  if (!number(inside.substr(0, colon), begin) ||
      !number(inside.substr(colon + 1), end) || begin > end)
    return false;
  name = tensor.substr(0, open);
  return true;
}

bool isSafetensorsFileName(const std::string &path) {
  const std::string suffix = ".safetensors";
  return path.size() >= suffix.size() &&
         path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0;
}

size_t safetensorsElementBytes(const std::string &dtype) {
  static const struct {
    const char *name;
    size_t bytes;
  } known[] = {{"F16", 2}, {"BF16", 2}, {"F32", 4}, {"F64", 8},
               {"BOOL", 1}, {"U8", 1},  {"I8", 1},  {"U16", 2},
               {"I16", 2},  {"U32", 4}, {"I32", 4}, {"U64", 8},
               {"I64", 8}};
  for (const auto &k : known)
    if (dtype == k.name)
      return k.bytes;
  return 0;
}

Status buildSafetensors(const std::vector<SafetensorsRawOutput> &tensors,
                        std::string &header, std::vector<uint8_t> &data) {
  json j = json::object();
  uint64_t at = 0;
  std::set<std::string> names;
  std::vector<size_t> sizes;
  for (const SafetensorsRawOutput &t : tensors) {
    if (t.name.empty() || t.name == "__metadata__")
      return Status::invalidArgument("tensor name " + quotedName(t.name) +
                                     " cannot be written");
    if (!names.insert(t.name).second)
      return Status::invalidArgument("tensor " + quotedName(t.name) +
                                     " is written twice to one file");
    const size_t elt = safetensorsElementBytes(t.dtype);
    if (elt == 0)
      return Status::invalidArgument(
          "tensor " + quotedName(t.name) + ": dtype " + quotedText(t.dtype) +
          " cannot be written (F16, BF16, F32, F64, BOOL, U8, I8, U16, I16, "
          "U32, I32, U64, I64)");
    int64_t n = 0;
    SHARDLIN_RETURN_IF_ERROR(checkedNumElements(t.shape, n, elt).withContext(
        "tensor " + quotedName(t.name)));
    const uint64_t bytes = uint64_t(n) * elt;
    j[t.name] = {{"dtype", t.dtype},
                 {"shape", t.shape},
                 {"data_offsets", {at, at + bytes}}};
    at += bytes;
    sizes.push_back(size_t(bytes));
  }
  std::string text = j.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  header.assign(kLengthBytes, '\0');
  const uint64_t n = text.size();
  for (size_t i = 0; i < kLengthBytes; ++i)
    header[i] = char((n >> (8 * i)) & 0xff);
  header += text;
  data.resize(size_t(at));
  size_t off = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (sizes[i])
      std::memcpy(data.data() + off, tensors[i].data, sizes[i]);
    off += sizes[i];
  }
  return Status::ok();
}

Status writeSafetensors(const std::string &path,
                        const std::vector<SafetensorsRawOutput> &tensors) {
  NpyOutputs out;
  SHARDLIN_RETURN_IF_ERROR(out.stageSafetensors(path, tensors));
  SHARDLIN_RETURN_IF_ERROR(out.writeInPlace());
  SHARDLIN_RETURN_IF_ERROR(out.commit());
  out.keep();
  return Status::ok();
}

Status writeSafetensors(const std::string &path,
                        const std::vector<SafetensorsOutput> &tensors) {
  NpyOutputs out;
  SHARDLIN_RETURN_IF_ERROR(out.stageSafetensors(path, tensors));
  SHARDLIN_RETURN_IF_ERROR(out.writeInPlace());
  SHARDLIN_RETURN_IF_ERROR(out.commit());
  out.keep();
  return Status::ok();
}

Status parseSafetensors(const uint8_t *bytes, size_t size,
                        const std::string &name,
                        std::vector<SafetensorsTensor> &out) {
  return parseSafetensorsHeader(bytes, size, size, out)
      .withContext(quotedName(name));
}

} // namespace shardlin::rt
