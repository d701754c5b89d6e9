//===- SafetensorsTest.cpp - Reading and writing safetensors files --------===//
//
// The reader's checks, each on a file built byte by byte in the test by the
// format's rules (an 8-byte little-endian length, the JSON header, the
// data), each with its own message; a round trip writeSafetensors ->
// NpyFile::openSafetensors for every dtype (exact bytes); and a rank's
// chunk of a sharded weight read with pread: the bytes read are exactly the
// chunk's, for row chunks (one contiguous range) and column chunks (one
// 512-byte piece per row), on every rank of W = 4.
//
//===----------------------------------------------------------------------===//

#include "shardlin/runtime/base/ChunkLayout.h"
#include "shardlin/runtime/tooling/Npy.h"
#include "shardlin/runtime/tooling/Safetensors.h"

#include "TempDirTest.h"

#include <gtest/gtest.h>

#include <sys/stat.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

using namespace shardlin::rt;

namespace {

class SafetensorsTest : public shardlin::rt::testutil::TempDirTest {
protected:
  /// Writes a file of `json` (the header, unpadded) and `dataBytes` bytes
  /// of data (0, 1, 2, ...), with `lengthOverride` as the length if set.
  std::string writeRaw(const std::string &name, const std::string &json,
                       size_t dataBytes, int64_t lengthOverride = -1) {
    std::string bytes(8, '\0');
    const uint64_t n =
        lengthOverride >= 0 ? uint64_t(lengthOverride) : json.size();
    for (int i = 0; i < 8; ++i)
      bytes[size_t(i)] = char((n >> (8 * i)) & 0xff);
    bytes += json;
    for (size_t i = 0; i < dataBytes; ++i)
      bytes += char(i & 0xff);
    const std::string p = path(name);
    std::ofstream(p, std::ios::binary) << bytes;
    return p;
  }
  /// Opens `tensor` of `file`; returns the status.
  Status open(const std::string &file, const std::string &tensor = "w") {
    std::unique_ptr<NpyFile> f;
    return NpyFile::openSafetensors(file, tensor, f);
  }
  /// Expects InvalidArgument with every one of `parts` in the message.
  void expectInvalid(const std::string &json, size_t dataBytes,
                     std::vector<std::string> parts,
                     int64_t lengthOverride = -1) {
    const std::string p = writeRaw("bad.safetensors", json, dataBytes,
                                   lengthOverride);
    Status s = open(p);
    ASSERT_FALSE(s.isOk()) << json;
    EXPECT_EQ(s.code(), StatusCode::InvalidArgument) << s.message();
    parts.push_back("bad.safetensors");
    for (const std::string &part : parts)
      EXPECT_NE(s.message().find(part), std::string::npos)
          << "'" << part << "' not in: " << s.message();
  }
};

TEST_F(SafetensorsTest, ReadsAFileWrittenByTheFormatsRules) {
  // Two tensors, a __metadata__ object, the header padded with spaces.
  const std::string json =
      R"({"__metadata__":{"format":"pt"},)"
      R"("b":{"dtype":"F32","shape":[2],"data_offsets":[12,20]},)"
      R"("w":{"dtype":"BF16","shape":[2,3],"data_offsets":[0,12]}}    )";
  const std::string p = writeRaw("ok.safetensors", json, 20);
  std::unique_ptr<NpyFile> f;
  ASSERT_TRUE(NpyFile::openSafetensors(p, "w", f).isOk());
  EXPECT_EQ(f->descr(), "BF16");
  EXPECT_EQ(f->shape(), (std::vector<int64_t>{2, 3}));
  std::vector<uint8_t> data;
  ASSERT_TRUE(f->readAll(data).isOk());
  ASSERT_EQ(data.size(), 12u);
  for (size_t i = 0; i < 12; ++i)
    EXPECT_EQ(data[i], uint8_t(i));
  ASSERT_TRUE(NpyFile::openSafetensors(p, "b", f).isOk());
  ASSERT_TRUE(f->readAll(data).isOk());
  ASSERT_EQ(data.size(), 8u);
  EXPECT_EQ(data[0], 12);
  EXPECT_EQ(f->bytesRead(), 8u);
  // The spec form, as --arg takes it.
  NpyArray arr;
  ASSERT_TRUE(readArraySpec(p + ":b", arr).isOk());
  EXPECT_EQ(arr.descr, "F32");
  EXPECT_EQ(arr.data, data);
}

TEST_F(SafetensorsTest, EachBadHeaderHasItsOwnError) {
  const std::string w = R"("w":{"dtype":"F32","shape":[2],)";
  {
    // Under 8 bytes in all.
    const std::string p = path("bad.safetensors");
    std::ofstream(p, std::ios::binary) << "abc";
    Status s = open(p);
    EXPECT_EQ(s.code(), StatusCode::InvalidArgument);
    EXPECT_NE(s.message().find("too short"), std::string::npos) << s.message();
  }
  expectInvalid("{}", 0, {"over the limit of 100000000"}, 100000001);
  expectInvalid("{}", 0, {"runs past the end"}, 50);
  expectInvalid("{\"w\":", 0, {"not valid JSON"});
  expectInvalid("[1,2]", 0, {"array", "not an object"});
  expectInvalid(R"({"w":3})", 0, {"'w'", "not an object"});
  expectInvalid("{" + w + R"("data_offsets":[0,8]},)" + w +
                    R"("data_offsets":[0,8]}})",
                8, {"'w' twice"});
  expectInvalid(R"({"__metadata__":{"a":1}})", 0, {"__metadata__", "'a'",
                                                   "not a string"});
  expectInvalid(R"({"__metadata__":[]})", 0, {"__metadata__", "not an object"});
  expectInvalid(R"({"w":{"dtype":"I32","shape":[2],"data_offsets":[0,8]}})", 8,
                {"'w'", "dtype 'I32' is not supported"});
  expectInvalid(R"({"w":{"dtype":4,"shape":[2],"data_offsets":[0,8]}})", 8,
                {"'w'", "not a string"});
  expectInvalid(R"({"w":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})",
                8, {"'w'", "shape", "negative value -2"});
  expectInvalid(R"({"w":{"dtype":"F32","shape":[2.5],"data_offsets":[0,8]}})",
                8, {"'w'", "shape", "non-negative integer"});
  expectInvalid(R"({"w":{"dtype":"F32","shape":[4294967296,4294967296,)"
                R"(4294967296],"data_offsets":[0,8]}})",
                8, {"'w'", "shape", "overflow"});
  expectInvalid(R"({"w":{"dtype":"F32","shape":[2]}})", 8,
                {"'w'", "no 'data_offsets'"});
  expectInvalid(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8],)"
                R"("x":1}})",
                8, {"'w'", "unknown key 'x'"});
  expectInvalid("{" + w + R"("data_offsets":[0]}})", 8,
                {"'w'", "not two"});
  expectInvalid("{" + w + R"("data_offsets":[8,0]}})", 8,
                {"'w'", "end before they begin"});
  expectInvalid("{" + w + R"("data_offsets":[0,16]}})", 8,
                {"'w'", "run past the data's 8 bytes"});
  expectInvalid("{" + w + R"("data_offsets":[0,4]}})", 8,
                {"'w'", "hold 4 bytes", "is 8 bytes"});
  expectInvalid(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                R"("w":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                12, {"'w'", "overlap", "'a'"});
  expectInvalid(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                R"("w":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}})",
                12, {"gap", "[4, 8)"});
  expectInvalid("{" + w + R"("data_offsets":[0,8]}})", 10,
                {"2 bytes after the last tensor"});
}

TEST_F(SafetensorsTest, AMissingTensorIsNotFoundAndNamesThosePresent) {
  const std::string p = writeRaw(
      "ok.safetensors",
      R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
      R"("b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
      8);
  Status s = open(p, "model.up");
  EXPECT_EQ(s.code(), StatusCode::NotFound);
  for (const char *part : {"ok.safetensors", "'model.up'", "'a'", "'b'"})
    EXPECT_NE(s.message().find(part), std::string::npos) << s.message();
  // A missing file is NotFound too, naming it.
  s = open(path("nope.safetensors"));
  EXPECT_EQ(s.code(), StatusCode::NotFound);
  EXPECT_NE(s.message().find("nope.safetensors"), std::string::npos);
  // A FIFO is refused: the reader needs offsets.
  EXPECT_NE(::mkfifo(path("f.safetensors").c_str(), 0600), -1);
  s = open(path("f.safetensors"));
  EXPECT_EQ(s.code(), StatusCode::InvalidArgument);
  EXPECT_NE(s.message().find("not a regular file"), std::string::npos)
      << s.message();
}

TEST_F(SafetensorsTest, RoundTripsEveryDtype) {
  std::mt19937 rng(27);
  std::vector<std::vector<uint8_t>> data;
  std::vector<SafetensorsOutput> tensors;
  const DType types[] = {DType::F16, DType::BF16, DType::F32, DType::F64};
  for (size_t k = 0; k < 4; ++k) {
    std::vector<int64_t> shape = {int64_t(k + 1), 3};
    std::vector<uint8_t> bytes(size_t(shape[0] * 3) * dtypeSize(types[k]));
    for (uint8_t &b : bytes)
      b = uint8_t(rng());
    data.push_back(std::move(bytes));
    tensors.push_back({std::string("t.") + safetensorsDtypeName(types[k]),
                       types[k], shape, nullptr});
  }
  tensors.push_back({"empty", DType::F32, {0, 5}, nullptr});
  data.emplace_back();
  for (size_t k = 0; k < tensors.size(); ++k)
    tensors[k].data = data[k].data();
  const std::string p = path("rt.safetensors");
  ASSERT_TRUE(writeSafetensors(p, tensors).isOk());
  // The header is padded to 8 bytes, as the reference writer pads it.
  std::ifstream in(p, std::ios::binary);
  uint8_t len[8];
  in.read(reinterpret_cast<char *>(len), 8);
  EXPECT_EQ(safetensorsHeaderLength(len) % 8, 0u);
  for (size_t k = 0; k < tensors.size(); ++k) {
    std::unique_ptr<NpyFile> f;
    ASSERT_TRUE(NpyFile::openSafetensors(p, tensors[k].name, f).isOk());
    EXPECT_EQ(f->descr(), safetensorsDtypeName(tensors[k].dtype));
    EXPECT_EQ(f->shape(), tensors[k].shape);
    std::vector<uint8_t> back;
    ASSERT_TRUE(f->readAll(back).isOk());
    EXPECT_EQ(back, data[k]) << tensors[k].name;
  }
  // Names the writer refuses.
  tensors.push_back(tensors[0]);
  Status s = writeSafetensors(path("dup.safetensors"), tensors);
  EXPECT_EQ(s.code(), StatusCode::InvalidArgument);
  EXPECT_NE(s.message().find("written twice"), std::string::npos);
}

// Any dtype of the format is written (the compiler's
// --shardlin-externalize-parameters writes integer constants): the header
// names it, the data is the bytes as given; the runtime's reader, which
// computes in F16/BF16/F32/F64 only, refuses such a file by the dtype.
TEST_F(SafetensorsTest, WritesEveryDtypeOfTheFormat) {
  EXPECT_EQ(safetensorsElementBytes("BOOL"), 1u);
  EXPECT_EQ(safetensorsElementBytes("I16"), 2u);
  EXPECT_EQ(safetensorsElementBytes("U32"), 4u);
  EXPECT_EQ(safetensorsElementBytes("I64"), 8u);
  EXPECT_EQ(safetensorsElementBytes("BF16"), 2u);
  EXPECT_EQ(safetensorsElementBytes("F8_E4M3"), 0u);
  const int64_t ints[3] = {-1, 2, INT64_MAX};
  const uint8_t flags[4] = {1, 0, 0, 1};
  const float f[2] = {1.5f, -2.0f};
  const std::string p = path("raw.safetensors");
  ASSERT_TRUE(writeSafetensors(p, std::vector<SafetensorsRawOutput>{
                                      {"i", "I64", {3}, ints},
                                      {"b", "BOOL", {2, 2}, flags},
                                      {"f", "F32", {2}, f}})
                  .isOk());
  std::ifstream in(p, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)),
                    std::istreambuf_iterator<char>());
  uint8_t len[8];
  std::memcpy(len, bytes.data(), 8);
  const size_t n = safetensorsHeaderLength(len);
  const std::string header = bytes.substr(8, n);
  EXPECT_NE(header.find(R"("i":{"data_offsets":[0,24],"dtype":"I64","shape":[3]})"),
            std::string::npos) << header;
  EXPECT_NE(header.find(R"("b":{"data_offsets":[24,28],"dtype":"BOOL","shape":[2,2]})"),
            std::string::npos) << header;
  ASSERT_EQ(bytes.size(), 8 + n + 36);
  EXPECT_EQ(std::memcmp(bytes.data() + 8 + n, ints, 24), 0);
  EXPECT_EQ(std::memcmp(bytes.data() + 8 + n + 24, flags, 4), 0);
  EXPECT_EQ(std::memcmp(bytes.data() + 8 + n + 28, f, 8), 0);
  std::unique_ptr<NpyFile> file;
  Status s = NpyFile::openSafetensors(p, "f", file);
  EXPECT_EQ(s.code(), StatusCode::InvalidArgument);
  EXPECT_NE(s.message().find("tensor 'b': its dtype 'BOOL' is not supported "
                             "(supported: F16, BF16, F32, F64)"),
            std::string::npos)
      << s.message();

  s = writeSafetensors(path("bad.safetensors"),
                       std::vector<SafetensorsRawOutput>{{"x", "C64", {1}, f}});
  EXPECT_EQ(s.code(), StatusCode::InvalidArgument);
  EXPECT_NE(s.message().find("tensor 'x': dtype 'C64' cannot be written "
                             "(F16, BF16, F32, F64, BOOL, U8, I8, U16, I16, "
                             "U32, I32, U64, I64)"),
            std::string::npos)
      << s.message();
  EXPECT_FALSE(std::ifstream(path("bad.safetensors")).good());
}

TEST_F(SafetensorsTest, ARankReadsOnlyItsChunk) {
  // A 256 x 1024 bf16 weight after another tensor, at W = 4: each rank's row
  // chunk and column chunk, exactly, and only its bytes.
  const int64_t rows = 256, cols = 1024;
  std::mt19937 rng(5);
  std::vector<uint8_t> bias(40), weight(size_t(rows * cols) * 2);
  for (uint8_t &b : bias)
    b = uint8_t(rng());
  for (uint8_t &b : weight)
    b = uint8_t(rng());
  const std::string p = path("ckpt.safetensors");
  ASSERT_TRUE(writeSafetensors(p, {{"bias", DType::F32, {10}, bias.data()},
                                   {"model.up.weight", DType::BF16,
                                    {rows, cols}, weight.data()}})
                  .isOk());
  const int w = 4;
  for (int64_t dim : {0, 1}) {
    const ChunkLayout layout(dim == 0 ? rows : cols, std::vector<int64_t>{0, 1, 2, 3});
    for (int r = 0; r < w; ++r) {
      std::unique_ptr<NpyFile> f;
      ASSERT_TRUE(NpyFile::openSpec(p + ":model.up.weight", f).isOk());
      const Range mine = layout.ofRank(r);
      std::vector<uint8_t> chunk;
      ASSERT_TRUE(f->readSlice(dim, mine, chunk).isOk());
      // Exactly the chunk's bytes were read: one range for a row chunk,
      // one 512-byte piece per row for a column chunk.
      const uint64_t chunkBytes = uint64_t(mine.size) *
                                  uint64_t(dim == 0 ? cols : rows) * 2;
      ASSERT_EQ(chunk.size(), chunkBytes);
      EXPECT_EQ(f->bytesRead(), chunkBytes) << "rank " << r;
      std::printf("dim %lld rank %d: %llu bytes read of the %zu-byte "
                  "weight\n",
                  (long long)dim, r, (unsigned long long)f->bytesRead(),
                  weight.size());
      for (int64_t i = 0; i < (dim == 0 ? mine.size : rows); ++i)
        for (int64_t j = 0; j < (dim == 0 ? cols : mine.size); ++j) {
          const int64_t gi = dim == 0 ? mine.offset + i : i;
          const int64_t gj = dim == 0 ? j : mine.offset + j;
          const int64_t width = dim == 0 ? cols : mine.size;
          ASSERT_EQ(0, std::memcmp(chunk.data() + (i * width + j) * 2,
                                   weight.data() + (gi * cols + gj) * 2, 2));
        }
    }
  }
}

TEST_F(SafetensorsTest, ARankReadsOnlyItsRangesOfAFusedWeight) {
  // A fused q/k/v weight [(Hq + 2 Hkv) D, H] with Hq = Hkv = 7, D = 4,
  // H = 28 over W = 3 ranks (heads 3, 3, 1): each of q, k, v is named
  // NAME[B:E] and read as a tensor of E - B rows; a rank's chunk of it is
  // exactly its rows of the fused weight, and only those bytes are read.
  const int64_t d = 4, heads = 7, h = heads * d, n = 3 * h;
  std::mt19937 rng(7);
  std::vector<float> weight(size_t(n * h));
  for (float &v : weight)
    v = float(std::uniform_real_distribution<double>(-1, 1)(rng));
  const std::string p = path("fused.safetensors");
  std::vector<float> other(5, 1.5f);
  ASSERT_TRUE(writeSafetensors(
                  p, {{"c_proj.bias", DType::F32, {5}, other.data()},
                      {"c_attn.weight", DType::F32, {n, h}, weight.data()}})
                  .isOk());
  const std::vector<int64_t> bounds = {0, 3 * d, 6 * d, 7 * d};
  const ChunkLayout layout(h, ChunkSpec{0, {0, 1, 2}, bounds});
  for (int64_t part = 0; part < 3; ++part) {
    const std::string spec = p + ":c_attn.weight[" + std::to_string(part * h) +
                             ":" + std::to_string((part + 1) * h) + "]";
    for (int r = 0; r < 3; ++r) {
      std::unique_ptr<NpyFile> f;
      Status s = NpyFile::openSpec(spec, f);
      ASSERT_TRUE(s.isOk()) << s.message();
      EXPECT_EQ(f->shape(), (std::vector<int64_t>{h, h}));
      const Range mine = layout.ofRank(r);
      std::vector<uint8_t> chunk;
      ASSERT_TRUE(f->readSlice(0, mine, chunk).isOk());
      const uint64_t bytes = uint64_t(mine.size * h) * sizeof(float);
      ASSERT_EQ(chunk.size(), bytes);
      EXPECT_EQ(f->bytesRead(), bytes) << "part " << part << " rank " << r;
      const float *want = weight.data() + (part * h + mine.offset) * h;
      EXPECT_EQ(0, std::memcmp(chunk.data(), want, bytes))
          << "part " << part << " rank " << r;
    }
  }
  // Read whole, the range is its rows.
  std::unique_ptr<NpyFile> f;
  ASSERT_TRUE(NpyFile::openSpec(p + ":c_attn.weight[28:56]", f).isOk());
  std::vector<uint8_t> all;
  ASSERT_TRUE(f->readAll(all).isOk());
  ASSERT_EQ(all.size(), size_t(h * h) * sizeof(float));
  EXPECT_EQ(0, std::memcmp(all.data(), weight.data() + h * h, all.size()));
  // Rows outside the tensor, and a name that is not there.
  Status s = NpyFile::openSpec(p + ":c_attn.weight[56:85]", f);
  EXPECT_EQ(s.code(), StatusCode::InvalidArgument) << s.message();
  EXPECT_NE(s.message().find("rows [56, 85) of 'c_attn.weight' are outside "
                             "its 84 rows"),
            std::string::npos)
      << s.message();
  s = NpyFile::openSpec(p + ":c_attn.w[0:4]", f);
  EXPECT_EQ(s.code(), StatusCode::NotFound) << s.message();
  // Not a range: read as a name.
  std::string name;
  int64_t begin = 0, end = 0;
  EXPECT_TRUE(splitSafetensorsRows("a.b[3:7]", name, begin, end));
  EXPECT_EQ(name, "a.b");
  EXPECT_EQ(begin, 3);
  EXPECT_EQ(end, 7);
  for (const char *bad : {"a[7:3]", "a[3:]", "a[:3]", "a[-1:3]", "[0:1]",
                          "a[1:2", "a1:2]", "a[x:2]"})
    EXPECT_FALSE(splitSafetensorsRows(bad, name, begin, end)) << bad;
}

} // namespace
