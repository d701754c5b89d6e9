//===- Replicated.cpp - Checking that replicated arguments agree ----------===//

#include "exec/Replicated.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace shardlin::rt {

namespace {

// xxHash64's primes.
constexpr uint64_t kP1 = 0x9E3779B185EBCA87ull;
constexpr uint64_t kP2 = 0xC2B2AE3D27D4EB4Full;
constexpr uint64_t kP3 = 0x165667B19E3779F9ull;
constexpr uint64_t kP4 = 0x85EBCA77C2B2AE63ull;
constexpr uint64_t kP5 = 0x27D4EB2F165667C5ull;

uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

uint64_t round(uint64_t acc, uint64_t input) {
  acc += input * kP2;
  return rotl(acc, 31) * kP1;
}

uint64_t read64(const unsigned char *p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v; // little-endian hosts (the runtime's targets)
}

uint32_t read32(const unsigned char *p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

/// The hashes fit a double's 53-bit mantissa exactly.
constexpr uint64_t kHashMask = (uint64_t(1) << 48) - 1;

std::string rankList(const std::vector<int> &ranks) {
  std::string s = ranks.size() == 1 ? "rank " : "ranks ";
  for (size_t i = 0; i < ranks.size(); ++i)
    s += (i ? ", " : "") + std::to_string(ranks[i]);
  return s;
}

const char *kSameOnEveryRank =
    "a replicated argument (one the module does not split) must be the same "
    "on every rank: give every rank the same file, or split the argument in "
    "the module if each rank has its own (--check-replicated=false skips "
    "this check)";

} // namespace

ContentHash::ContentHash()
    : lanes_{kP1 + kP2, kP2, 0, 0 - kP1} {}

void ContentHash::stripe(const unsigned char *p) {
  for (int i = 0; i < 4; ++i)
    lanes_[i] = round(lanes_[i], read64(p + 8 * i));
}

void ContentHash::update(const void *data, size_t bytes) {
  const unsigned char *p = static_cast<const unsigned char *>(data);
  total_ += bytes;
  if (pendingBytes_ > 0) {
    const size_t take = std::min(bytes, sizeof pending_ - pendingBytes_);
    std::memcpy(pending_ + pendingBytes_, p, take);
    pendingBytes_ += take;
    p += take;
    bytes -= take;
    if (pendingBytes_ < sizeof pending_)
      return;
    stripe(pending_);
    pendingBytes_ = 0;
  }
  for (; bytes >= 32; p += 32, bytes -= 32)
    stripe(p);
  std::memcpy(pending_, p, bytes);
  pendingBytes_ = bytes;
}

uint64_t ContentHash::digest() const {
  uint64_t h;
  if (total_ >= 32) {
    h = rotl(lanes_[0], 1) + rotl(lanes_[1], 7) + rotl(lanes_[2], 12) +
        rotl(lanes_[3], 18);
    for (uint64_t lane : lanes_) {
      h ^= round(0, lane);
      h = h * kP1 + kP4;
    }
  } else {
    h = kP5;
  }
  h += total_;
  const unsigned char *p = pending_;
  size_t n = pendingBytes_;
  for (; n >= 8; p += 8, n -= 8) {
    h ^= round(0, read64(p));
    h = rotl(h, 27) * kP1 + kP4;
  }
  if (n >= 4) {
    h ^= uint64_t(read32(p)) * kP1;
    h = rotl(h, 23) * kP2 + kP3;
    p += 4;
    n -= 4;
  }
  for (; n > 0; ++p, --n) {
    h ^= uint64_t(*p) * kP5;
    h = rotl(h, 11) * kP1;
  }
  h ^= h >> 33;
  h *= kP2;
  h ^= h >> 29;
  h *= kP3;
  h ^= h >> 32;
  return h;
}

Status hashArgumentValue(RankDevice &device, const void *data, DType dtype,
                         const std::vector<int64_t> &shape, uint64_t &hash) {
  int64_t elements = 0;
  SHARDLIN_RETURN_IF_ERROR(
      checkedNumElements(shape, elements, dtypeSize(dtype)));
  const size_t bytes = static_cast<size_t>(elements) * dtypeSize(dtype);
  ContentHash h;
  const uint64_t head[2] = {static_cast<uint64_t>(dtype), shape.size()};
  h.update(head, sizeof head);
  h.update(shape.data(), shape.size() * sizeof(int64_t));
  if (bytes > 0 && !data)
    return Status::invalidArgument("a replicated argument's buffer is null");
  if (device.kind() == DeviceKind::Host) {
    h.update(data, bytes);
  } else {
    // In pieces, so that the host copy stays small whatever the argument.
    constexpr size_t kPiece = size_t(4) << 20;
    std::vector<unsigned char> piece(std::min(bytes, kPiece));
    for (size_t at = 0; at < bytes; at += kPiece) {
      const size_t n = std::min(kPiece, bytes - at);
      SHARDLIN_RETURN_IF_ERROR(device.copyToHost(
          piece.data(), static_cast<const unsigned char *>(data) + at, n));
      h.update(piece.data(), n);
    }
  }
  const uint64_t d = h.digest();
  hash = (d ^ (d >> 48)) & kHashMask;
  return Status::ok();
}

std::vector<size_t> replicatedArgs(const Program &program) {
  std::vector<size_t> args;
  for (size_t i = 0; i < program.args.size(); ++i)
    if (program.args[i].replicated)
      args.push_back(i);
  return args;
}

Status checkReplicatedSizes(const Program &program, const DynamicSizes &sizes) {
  const std::vector<DynamicDim> dims = dynamicArgDims(program);
  for (size_t arg : replicatedArgs(program)) {
    // Every rank's shape of the argument: its static dims and its sizes.
    std::vector<std::vector<int64_t>> shapes(
        sizes.size(), program.args[arg].type.shape);
    for (size_t i = 0; i < dims.size(); ++i)
      if (dims[i].arg == arg)
        for (size_t r = 0; r < sizes.size(); ++r)
          shapes[r][dims[i].dim] = sizes[r][i];
    if (std::all_of(shapes.begin(), shapes.end(),
                    [&](const auto &s) { return s == shapes[0]; }))
      continue;
    std::string each;
    for (size_t r = 0; r < shapes.size(); ++r)
      each += (r ? ", " : "") + std::string("rank ") + std::to_string(r) +
              " " + formatShape(shapes[r]);
    return Status::invalidArgument(
        describeArgument(program, arg) +
        " is declared replicated but its shape differs between ranks (" +
        each + "); " + kSameOnEveryRank);
  }
  return Status::ok();
}

Status checkReplicatedHashes(const Program &program,
                             const std::vector<size_t> &args,
                             const std::vector<double> &hashes,
                             int worldSize) {
  for (size_t k = 0; k < args.size(); ++k) {
    std::vector<int> differ;
    const double first = hashes[k];
    for (int r = 1; r < worldSize; ++r)
      if (hashes[size_t(r) * args.size() + k] != first)
        differ.push_back(r);
    if (differ.empty())
      continue;
    return Status::invalidArgument(
        describeArgument(program, args[k]) +
        " is declared replicated but its values differ between ranks: " +
        rankList(differ) + " hold" + (differ.size() == 1 ? "s" : "") +
        " other values than rank 0; " +
        kSameOnEveryRank);
  }
  return Status::ok();
}

} // namespace shardlin::rt
