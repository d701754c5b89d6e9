//===- NpyChunkTest.cpp - Reading one rank's chunk of a .npy file ---------===//
//
// NpyFile::readSlice, what a rank uses to read its own chunk of a global
// sharded tensor: for random arrays of 1 to 4 dims and every dtype size,
// every split dim, world sizes 1..7 (uneven and empty chunks, dims of size
// zero) and every rank, the slice equals the one cut out of the whole array
// by index arithmetic (exact: bytes are copied, not computed), and the bytes
// read from the file are exactly the chunk's (or, for pieces shorter than
// 512 bytes, at most the span of rows they lie in). A 64 MiB weight at W = 4
// checks, with the reader's byte count and the process's resident memory,
// that a rank reads and holds a quarter of the file, not all of it.
//
//===----------------------------------------------------------------------===//

#include "shardlin/runtime/base/ChunkLayout.h"
#include "shardlin/runtime/tooling/Npy.h"

#include "TempDirTest.h"
#include "shardlin/runtime/program/Program.h"

#include <gtest/gtest.h>

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <random>
#include <string>
#include <vector>

using namespace shardlin::rt;
namespace fs = std::filesystem;

namespace {

class NpyChunkTest : public shardlin::rt::testutil::TempDirTest {};

/// Random bytes (any bit pattern: the reader copies bytes, it never
/// interprets them).
std::vector<uint8_t> randomBytes(size_t n, std::mt19937 &rng) {
  std::vector<uint8_t> b(n);
  for (size_t i = 0; i < n; i += 4) {
    const uint32_t v = rng();
    std::memcpy(b.data() + i, &v, std::min<size_t>(4, n - i));
  }
  return b;
}

/// The reference: elements whose index along `dim` is in `r`, in C order,
/// by visiting every element of the whole array.
std::vector<uint8_t> sliceByIndex(const std::vector<uint8_t> &whole,
                                  const std::vector<int64_t> &shape,
                                  size_t elt, int64_t dim, Range r) {
  int64_t total = 1;
  for (int64_t s : shape)
    total *= s;
  std::vector<uint8_t> out;
  std::vector<int64_t> idx(shape.size(), 0);
  for (int64_t flat = 0; flat < total; ++flat) {
    int64_t rest = flat;
    for (size_t k = shape.size(); k-- > 0;) {
      idx[k] = rest % shape[k];
      rest /= shape[k];
    }
    const int64_t i = idx[size_t(dim)];
    if (i >= r.offset && i < r.offset + r.size)
      out.insert(out.end(), whole.begin() + flat * int64_t(elt),
                 whole.begin() + (flat + 1) * int64_t(elt));
  }
  return out;
}

DType dtypeOfSize(size_t elt) {
  return elt == 2 ? DType::F16 : elt == 4 ? DType::F32 : DType::F64;
}

/// Resident memory of this process, from /proc/self/status (VmRSS).
int64_t residentBytes() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmRSS:", 0) == 0)
      return std::stoll(line.substr(6)) * 1024;
  return -1;
}

TEST_F(NpyChunkTest, EverySplitDimWorldSizeAndRankMatchesSlicingTheWhole) {
  std::mt19937 rng(20261203);
  // Shapes with uneven dims, a size-0 dim, size-1 dims, pieces below and
  // above the 512-byte threshold of the grouped reads.
  const std::vector<std::vector<int64_t>> shapes = {
      {11}, {3}, {0}, {5, 19}, {19, 5}, {1, 37}, {7, 0}, {2, 3, 5},
      {300, 7, 5}, {3, 130, 64}, {4, 1, 6, 3}, {2, 5, 3, 7}, {64, 33},
  };
  int cases = 0;
  for (const std::vector<int64_t> &shape : shapes)
    for (size_t elt : {size_t(2), size_t(4), size_t(8)}) {
      int64_t total = 1;
      for (int64_t s : shape)
        total *= s;
      const std::vector<uint8_t> whole = randomBytes(size_t(total) * elt, rng);
      const std::string p = path("a.npy");
      ASSERT_TRUE(writeNpy(p, dtypeOfSize(elt), shape, whole.data()).isOk());
      for (int64_t dim = 0; dim < int64_t(shape.size()); ++dim)
        for (int64_t w : {1, 2, 3, 4, 5, 7}) {
          std::vector<int64_t> placements(static_cast<size_t>(w));
          std::iota(placements.begin(), placements.end(), 0);
          std::shuffle(placements.begin(), placements.end(), rng);
          ChunkLayout layout(shape[size_t(dim)], placements);
          for (int rank = 0; rank < w; ++rank) {
            const Range r = layout.ofRank(rank);
            SCOPED_TRACE("shape " + formatShape(shape) + " elt " +
                         std::to_string(elt) + " dim " + std::to_string(dim) +
                         " W " + std::to_string(w) + " rank " +
                         std::to_string(rank) + " rows [" +
                         std::to_string(r.offset) + ", +" +
                         std::to_string(r.size) + ")");
            std::unique_ptr<NpyFile> f;
            ASSERT_TRUE(NpyFile::open(p, f).isOk());
            EXPECT_EQ(f->shape(), shape);
            std::vector<uint8_t> got(3, 0xab); // replaced, not appended to
            Status st = f->readSlice(dim, r, got);
            ASSERT_TRUE(st.isOk()) << st.message();
            const std::vector<uint8_t> want =
                sliceByIndex(whole, shape, elt, dim, r);
            ASSERT_EQ(got, want);
            // The bytes read: exactly the chunk, or for short pieces at most
            // the rows they lie in.
            int64_t outer = 1, inner = int64_t(elt);
            for (int64_t k = 0; k < dim; ++k)
              outer *= shape[size_t(k)];
            for (size_t k = size_t(dim) + 1; k < shape.size(); ++k)
              inner *= shape[k];
            const int64_t piece = r.size * inner;
            const int64_t stride = shape[size_t(dim)] * inner;
            if (piece >= 512 || outer <= 1 || piece == stride || piece == 0)
              EXPECT_EQ(f->bytesRead(), want.size());
            else
              EXPECT_LE(f->bytesRead(), uint64_t((outer - 1) * stride + piece));
            ++cases;
          }
        }
    }
  EXPECT_GT(cases, 1000);
}

TEST_F(NpyChunkTest, ReadAllMatchesReadNpyAndCountsBytes) {
  std::mt19937 rng(7);
  const std::vector<int64_t> shape = {6, 9};
  const std::vector<uint8_t> whole = randomBytes(6 * 9 * 4, rng);
  ASSERT_TRUE(writeNpy(path("a.npy"), DType::F32, shape, whole.data()).isOk());
  std::unique_ptr<NpyFile> f;
  ASSERT_TRUE(NpyFile::open(path("a.npy"), f).isOk());
  EXPECT_EQ(f->descr(), "<f4");
  std::vector<uint8_t> got;
  ASSERT_TRUE(f->readAll(got).isOk());
  EXPECT_EQ(got, whole);
  EXPECT_EQ(f->bytesRead(), whole.size());
  NpyArray arr;
  ASSERT_TRUE(readNpy(path("a.npy"), arr).isOk());
  EXPECT_EQ(arr.data, whole);
}

TEST_F(NpyChunkTest, SlicesOutsideTheShapeAreErrorsNamingTheFile) {
  std::vector<float> data(12, 1.5f);
  ASSERT_TRUE(writeNpy(path("a.npy"), DType::F32, {3, 4}, data.data()).isOk());
  std::unique_ptr<NpyFile> f;
  ASSERT_TRUE(NpyFile::open(path("a.npy"), f).isOk());
  std::vector<uint8_t> out;
  Status st = f->readSlice(2, {0, 1}, out);
  EXPECT_EQ(st.code(), StatusCode::InvalidArgument);
  EXPECT_NE(st.message().find("cannot slice dim 2 of a 2-D array"),
            std::string::npos)
      << st.message();
  EXPECT_NE(st.message().find("a.npy"), std::string::npos) << st.message();
  st = f->readSlice(1, {3, 2}, out);
  EXPECT_NE(st.message().find("rows [3, 5) of dim 1 are outside its size 4"),
            std::string::npos)
      << st.message();
  st = f->readSlice(0, {-1, 1}, out);
  EXPECT_FALSE(st.isOk());
  EXPECT_EQ(f->bytesRead(), 0u);
}

// A 64 MiB f32 weight [4096, 4096] at W = 4: rank 1's chunk on either dim is
// 16 MiB. The reader's count says it read exactly that (the deterministic
// check); resident memory grows by about that too (the chunk is touched in
// full; the bound leaves 8 MiB for allocator slack and the test's own
// pages), while reading the whole file to take the chunk held 64 MiB more.
TEST_F(NpyChunkTest, A64MiBWeightAtW4ReadsAndHoldsOneQuarter) {
  const int64_t n = 4096;
  const std::string p = path("w.npy");
  std::vector<int64_t> placements = {2, 0, 3, 1};
  {
    std::vector<float> w(size_t(n * n));
    std::mt19937 rng(64);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    for (float &v : w)
      v = u(rng);
    ASSERT_TRUE(writeNpy(p, DType::F32, {n, n}, w.data()).isOk());
  }
  const uint64_t chunkBytes = uint64_t(n) * uint64_t(n / 4) * 4;
  for (int64_t dim : {0, 1}) {
    SCOPED_TRACE("dim " + std::to_string(dim));
    const Range r = ChunkLayout(n, placements).ofRank(1);
    std::unique_ptr<NpyFile> f;
    ASSERT_TRUE(NpyFile::open(p, f).isOk());
    const int64_t before = residentBytes();
    ASSERT_GT(before, 0);
    std::vector<uint8_t> chunk;
    ASSERT_TRUE(f->readSlice(dim, r, chunk).isOk());
    const int64_t grown = residentBytes() - before;
    EXPECT_EQ(chunk.size(), chunkBytes);
    EXPECT_EQ(f->bytesRead(), chunkBytes);
    EXPECT_LT(grown, int64_t(chunkBytes) + (int64_t(8) << 20))
        << "resident memory grew by " << grown << " bytes";
    // Spot checks against the whole file, read afterwards.
    NpyArray whole;
    ASSERT_TRUE(readNpy(p, whole).isOk());
    const auto *all = reinterpret_cast<const float *>(whole.data.data());
    const auto *mine = reinterpret_cast<const float *>(chunk.data());
    const int64_t cols = dim == 0 ? n : r.size;
    for (int64_t i = 0; i < (dim == 0 ? r.size : n); i += 97)
      for (int64_t j = 0; j < cols; j += 89) {
        const float want = dim == 0 ? all[(r.offset + i) * n + j]
                                    : all[i * n + r.offset + j];
        ASSERT_EQ(mine[i * cols + j], want) << i << ", " << j;
      }
  }
}

} // namespace
