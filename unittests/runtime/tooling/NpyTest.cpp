//===- NpyTest.cpp - .npy reading and writing ------------------------------===//
//
// Round trips for every dtype and for scalar, empty, 1-D and 3-D shapes; the
// exact header layout NumPy writes; atomic writes (only complete files under
// the final name, no temporaries left behind); and one rejection test per
// kind of malformed input, each checking for its specific message, run both
// from memory (parseNpy) and from a file (readNpy).
//
//===----------------------------------------------------------------------===//

#include "shardlin/runtime/tooling/Npy.h"
#include "shardlin/runtime/tooling/Signals.h"

#include "TempDirTest.h"

#include <gtest/gtest.h>

#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

using namespace shardlin::rt;
namespace fs = std::filesystem;

namespace {

using Bytes = std::vector<uint8_t>;

/// A fresh directory per test, removed afterwards.
class NpyTest : public shardlin::rt::testutil::TempDirTest {};

using shardlin::rt::testutil::readFile;

void writeFile(const std::string &p, const Bytes &bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char *>(bytes.data()),
            std::streamsize(bytes.size()));
}

/// A .npy image with the given version, raw header text (used verbatim, no
/// padding) and data bytes.
Bytes makeNpy(int major, int minor, const std::string &header,
              const Bytes &data = {}) {
  Bytes out = {0x93, 'N', 'U', 'M', 'P', 'Y', uint8_t(major), uint8_t(minor)};
  const uint32_t len = uint32_t(header.size());
  out.push_back(uint8_t(len & 0xff));
  out.push_back(uint8_t((len >> 8) & 0xff));
  if (major >= 2) {
    out.push_back(uint8_t((len >> 16) & 0xff));
    out.push_back(uint8_t((len >> 24) & 0xff));
  }
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

Bytes f32Bytes(std::initializer_list<float> values) {
  Bytes out(values.size() * 4);
  std::memcpy(out.data(), values.begin(), out.size());
  return out;
}

const std::string f32Header23 =
    "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }\n";
const Bytes sixFloats = f32Bytes({1, -2, 3.5f, 4, 5e-3f, -6e7f});

Bytes randomData(DType t, size_t n, std::mt19937 &rng) {
  std::uniform_real_distribution<double> dist(-10, 10);
  std::vector<double> values(n);
  for (double &v : values)
    v = dist(rng);
  Bytes out(n * dtypeSize(t));
  convertFromF64(t, values.data(), out.data(), n);
  return out;
}

} // namespace

TEST_F(NpyTest, RoundTripEveryDTypeAndShape) {
  std::mt19937 rng(17);
  const std::vector<std::vector<int64_t>> shapes = {{}, {0}, {3}, {2, 3, 4}};
  for (DType t : {DType::F16, DType::BF16, DType::F32, DType::F64})
    for (const auto &shape : shapes) {
      size_t n = 1;
      for (int64_t d : shape)
        n *= size_t(d);
      SCOPED_TRACE(std::string(dtypeName(t)) + " ndim " +
                   std::to_string(shape.size()) + " n " + std::to_string(n));
      const Bytes data = randomData(t, n, rng);
      const std::string p = path("a.npy");
      Status st = writeNpy(p, t, shape, data.empty() ? nullptr : data.data());
      ASSERT_TRUE(st.isOk()) << st.message();
      EXPECT_EQ(listing(), std::vector<std::string>{"a.npy"});

      NpyArray arr;
      st = readNpy(p, arr);
      ASSERT_TRUE(st.isOk()) << st.message();
      EXPECT_EQ(arr.descr, npyDescr(t));
      EXPECT_EQ(arr.shape, shape);
      EXPECT_EQ(arr.data, data);

      const Bytes file = readFile(p);
      NpyArray fromMemory;
      st = parseNpy(file.data(), file.size(), "mem", fromMemory);
      ASSERT_TRUE(st.isOk()) << st.message();
      EXPECT_EQ(fromMemory.descr, arr.descr);
      EXPECT_EQ(fromMemory.shape, arr.shape);
      EXPECT_EQ(fromMemory.data, arr.data);
    }
}

TEST_F(NpyTest, DescrPerDType) {
  EXPECT_STREQ(npyDescr(DType::F16), "<f2");
  // bf16 as ml_dtypes writes it (np.save of a bfloat16 array).
  EXPECT_STREQ(npyDescr(DType::BF16), "<V2");
  EXPECT_STREQ(npyDescr(DType::F32), "<f4");
  EXPECT_STREQ(npyDescr(DType::F64), "<f8");
}

// The header is byte-for-byte what NumPy's format.write_array_header_1_0
// produces (less NumPy's optional growth spaces): version 1.0, the dict with
// keys in sorted order, 1-tuples written "(3,)", space padding and a final
// newline so that the data starts at a multiple of 64.
TEST_F(NpyTest, HeaderLayoutMatchesNumPy) {
  struct Case {
    DType t;
    std::vector<int64_t> shape;
    std::string dict;
  } cases[] = {
      {DType::F32, {2, 3},
       "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"},
      {DType::F64, {3}, "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }"},
      {DType::F16, {}, "{'descr': '<f2', 'fortran_order': False, 'shape': (), }"},
      {DType::BF16, {1, 0, 7},
       "{'descr': '<V2', 'fortran_order': False, 'shape': (1, 0, 7), }"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.dict);
    const Bytes data(64, 0x11); // at least as much as any case needs
    const std::string p = path("h.npy");
    Status st = writeNpy(p, c.t, c.shape, data.data());
    ASSERT_TRUE(st.isOk()) << st.message();
    const Bytes file = readFile(p);
    ASSERT_GE(file.size(), 10u);
    EXPECT_EQ(std::memcmp(file.data(), "\x93NUMPY\x01\x00", 8), 0);
    const size_t headerLen = file[8] | (size_t(file[9]) << 8);
    const size_t dataStart = 10 + headerLen;
    EXPECT_EQ(dataStart % 64, 0u);
    ASSERT_LE(dataStart, file.size());
    const std::string header(file.begin() + 10, file.begin() + dataStart);
    EXPECT_EQ(header.substr(0, c.dict.size()), c.dict);
    EXPECT_EQ(header.back(), '\n');
    EXPECT_EQ(header.find_first_not_of(' ', c.dict.size()), header.size() - 1);
    size_t n = 1;
    for (int64_t d : c.shape)
      n *= size_t(d);
    EXPECT_EQ(file.size() - dataStart, n * dtypeSize(c.t));
  }
}

TEST_F(NpyTest, OverwriteReplacesWholeFile) {
  const std::string p = path("x.npy");
  const std::vector<float> big(1000, 1.0f), small = {7, 8};
  ASSERT_TRUE(writeNpy(p, DType::F32, {1000}, big.data()).isOk());
  ASSERT_TRUE(writeNpy(p, DType::F32, {2}, small.data()).isOk());
  NpyArray arr;
  Status st = readNpy(p, arr);
  ASSERT_TRUE(st.isOk()) << st.message();
  EXPECT_EQ(arr.shape, std::vector<int64_t>{2});
  ASSERT_EQ(arr.data.size(), 8u);
  EXPECT_EQ(std::memcmp(arr.data.data(), small.data(), 8), 0);
  EXPECT_EQ(listing(), std::vector<std::string>{"x.npy"});
}

TEST_F(NpyTest, FailedWritesLeaveNothingBehind) {
  const float data[4] = {1, 2, 3, 4};

  // Into a directory that does not exist: fails when creating the temporary.
  Status st = writeNpy(path("missing/dir/a.npy"), DType::F32, {4}, data);
  ASSERT_FALSE(st.isOk());
  EXPECT_EQ(st.code(), StatusCode::IoError) << st.message();
  EXPECT_NE(st.message().find("missing/dir/a.npy"), std::string::npos)
      << st.message();
  EXPECT_NE(st.message().find("No such file or directory"), std::string::npos)
      << st.message();
  EXPECT_TRUE(listing().empty());

  // The target is a directory: refused before anything is written.
  ASSERT_TRUE(fs::create_directory(path("taken")));
  st = writeNpy(path("taken"), DType::F32, {4}, data);
  ASSERT_FALSE(st.isOk());
  EXPECT_EQ(st.code(), StatusCode::IoError) << st.message();
  EXPECT_NE(st.message().find("is a directory"), std::string::npos)
      << st.message();
  EXPECT_EQ(listing(), std::vector<std::string>{"taken"});

  // A directory appears under the name after staging: the temporary was
  // written, the rename fails, and the temporary must be removed.
  {
    NpyOutputs outputs;
    ASSERT_TRUE(outputs.stage(path("later"), DType::F32, {4}, data).isOk());
    EXPECT_EQ(listing().size(), 2u); // taken and the temporary
    ASSERT_TRUE(fs::create_directory(path("later")));
    st = outputs.commit();
    ASSERT_FALSE(st.isOk());
    EXPECT_EQ(st.code(), StatusCode::IoError) << st.message();
    EXPECT_NE(st.message().find("renaming"), std::string::npos)
        << st.message();
  }
  EXPECT_EQ(listing(), (std::vector<std::string>{"later", "taken"}));
  fs::remove(path("later"));

  // Invalid arguments fail before anything is created, and an existing file
  // under the target name is left as it was.
  const std::string p = path("keep.npy");
  ASSERT_TRUE(writeNpy(p, DType::F32, {4}, data).isOk());
  const Bytes before = readFile(p);
  st = writeNpy(p, DType::F32, {2, -3}, data);
  ASSERT_FALSE(st.isOk());
  EXPECT_EQ(st.code(), StatusCode::InvalidArgument) << st.message();
  EXPECT_NE(st.message().find("dim 1"), std::string::npos) << st.message();
  st = writeNpy(p, DType::F32, {int64_t(1) << 62, 4}, data);
  ASSERT_FALSE(st.isOk());
  EXPECT_EQ(st.code(), StatusCode::InvalidArgument) << st.message();
  EXPECT_NE(st.message().find("overflows"), std::string::npos) << st.message();
  st = writeNpy(p, DType::F32, {4}, nullptr);
  ASSERT_FALSE(st.isOk());
  EXPECT_EQ(st.code(), StatusCode::InvalidArgument) << st.message();
  EXPECT_NE(st.message().find("data is null"), std::string::npos)
      << st.message();
  st = writeNpy(p, static_cast<DType>(7), {4}, data);
  ASSERT_FALSE(st.isOk());
  EXPECT_EQ(st.code(), StatusCode::InvalidArgument) << st.message();
  EXPECT_NE(st.message().find("invalid dtype"), std::string::npos)
      << st.message();
  st = writeNpy("", DType::F32, {4}, data);
  EXPECT_FALSE(st.isOk());
  EXPECT_EQ(st.code(), StatusCode::InvalidArgument) << st.message();
  EXPECT_EQ(readFile(p), before);
  EXPECT_EQ(listing(), (std::vector<std::string>{"keep.npy", "taken"}));

  // Null data is fine when there are no elements.
  st = writeNpy(path("empty.npy"), DType::F64, {0, 5}, nullptr);
  EXPECT_TRUE(st.isOk()) << st.message();
}

namespace {

/// Expects `bytes` to be rejected as malformed (InvalidArgument), from memory
/// and from a file, with a message containing `needle` and the name of the
/// input.
void expectRejected(const std::string &dir, const Bytes &bytes,
                    const std::string &needle) {
  SCOPED_TRACE("expecting '" + needle + "'");
  NpyArray arr;
  arr.descr = "untouched";
  Status st = parseNpy(bytes.data(), bytes.size(), "input.npy", arr);
  ASSERT_FALSE(st.isOk());
  EXPECT_EQ(st.code(), StatusCode::InvalidArgument) << st.message();
  EXPECT_NE(st.message().find(needle), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("input.npy"), std::string::npos) << st.message();
  EXPECT_EQ(arr.descr, "untouched"); // nothing is written on failure

  const std::string p = (fs::path(dir) / "bad.npy").string();
  writeFile(p, bytes);
  st = readNpy(p, arr);
  ASSERT_FALSE(st.isOk());
  EXPECT_EQ(st.code(), StatusCode::InvalidArgument) << st.message();
  EXPECT_NE(st.message().find(needle), std::string::npos) << st.message();
  EXPECT_NE(st.message().find(p), std::string::npos) << st.message();
  EXPECT_EQ(arr.descr, "untouched");
}

std::string headerWith(const std::string &descr, const std::string &fortran,
                       const std::string &shape) {
  return "{'descr': " + descr + ", 'fortran_order': " + fortran +
         ", 'shape': " + shape + ", }\n";
}

} // namespace

TEST_F(NpyTest, RejectsMissingAndEmptyFiles) {
  NpyArray arr;
  Status st = readNpy(path("nope.npy"), arr);
  ASSERT_FALSE(st.isOk());
  EXPECT_EQ(st.code(), StatusCode::NotFound) << st.message();
  EXPECT_NE(st.message().find("nope.npy"), std::string::npos);
  EXPECT_NE(st.message().find("cannot open: No such file or directory"),
            std::string::npos)
      << st.message();

  st = readNpy(dir_, arr);
  ASSERT_FALSE(st.isOk());
  EXPECT_EQ(st.code(), StatusCode::InvalidArgument) << st.message();
  EXPECT_NE(st.message().find("is a directory"), std::string::npos)
      << st.message();

  expectRejected(dir_, {}, "file is empty");
  st = parseNpy(nullptr, 0, "null", arr);
  ASSERT_FALSE(st.isOk());
  EXPECT_EQ(st.code(), StatusCode::InvalidArgument) << st.message();
  EXPECT_NE(st.message().find("file is empty"), std::string::npos);
}

TEST_F(NpyTest, RejectsBadPreambles) {
  expectRejected(dir_, {'P', 'K', 3, 4, 0, 0, 0, 0, 0, 0, 0, 0}, "bad magic");
  expectRejected(dir_, {'x'}, "bad magic");
  expectRejected(dir_, {0x93, 'N', 'U'}, "too short for a .npy preamble");
  expectRejected(dir_, {0x93, 'N', 'U', 'M', 'P', 'Y'},
                 "too short for a .npy preamble");
  expectRejected(dir_, makeNpy(4, 0, f32Header23, sixFloats),
                 "unsupported .npy format version 4.0");
  expectRejected(dir_, makeNpy(1, 1, f32Header23, sixFloats),
                 "unsupported .npy format version 1.1");
  expectRejected(dir_, makeNpy(0, 0, f32Header23, sixFloats),
                 "unsupported .npy format version 0.0");
  // Version 2.0 needs a 4-byte length; the file ends after 2 of them.
  expectRejected(dir_, {0x93, 'N', 'U', 'M', 'P', 'Y', 2, 0, 10, 0},
                 "ends inside the header length field");

  // A header length beyond the file, in both length field widths.
  Bytes v1 = makeNpy(1, 0, f32Header23);
  v1[8] = 0xff;
  v1[9] = 0xff;
  expectRejected(dir_, v1, "header length 65535 extends beyond the end");
  Bytes v2 = makeNpy(2, 0, f32Header23);
  v2[11] = 0xff; // about 4 GiB
  expectRejected(dir_, v2, "extends beyond the end of the file");
}

TEST_F(NpyTest, RejectsMalformedHeaders) {
  const std::string f4 = "'<f4'";
  struct Case {
    std::string header;
    std::string needle;
  } cases[] = {
      {"[1, 2, 3]\n", "header is not a dict"},
      {"   \n", "header is empty"},
      {"{'descr': '<f4', 'fortran_order': False, }\n",
       "missing the key 'shape'"},
      {"{'shape': (2, 3), 'fortran_order': False}\n",
       "missing the key 'descr'"},
      {"{'descr': '<f4', 'shape': (2, 3)}\n", "missing the key 'fortran_order'"},
      {"{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2, "
       "3)}\n",
       "duplicate key 'descr'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), 'x': 1}\n",
       "unexpected key 'x'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)} junk\n",
       "unexpected text after the header dict"},
      {"{'descr' '<f4', 'fortran_order': False, 'shape': (2, 3)}\n",
       "expected ':' after key 'descr'"},
      // The unclosed quote swallows the comma: the value is "<f4, ".
      {"{'descr': '<f4, 'fortran_order': False, 'shape': (2, 3)}\n",
       "expected ',' or '}' in the header dict, found 'f'"},
      {"{'descr': '<f4", "unterminated string"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)",
       "header dict is not closed"},
      {"{'descr': '<f4' 'fortran_order': False, 'shape': (2, 3)}\n",
       "expected ',' or '}'"},
      {"{descr: '<f4'}\n", "expected a quoted dict key"},
      {"{'descr': '\\x3cf4', 'fortran_order': False, 'shape': (2, 3)}\n",
       "escape sequences"},
      {"{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2, 3)}\n",
       "structured dtypes"},
      {headerWith("4", "False", "(2, 3)"), "'descr' must be a string"},
      {headerWith(f4, "True", "(2, 3)"), "Fortran-order"},
      {headerWith(f4, "0", "(2, 3)"), "must be True or False"},
      {headerWith(f4, "false", "(2, 3)"), "must be True or False"},
      {headerWith("'>f4'", "False", "(2, 3)"), "big-endian descr '>f4'"},
      {headerWith("'>f8'", "False", "(2, 3)"), "big-endian descr '>f8'"},
      {headerWith("'<i4'", "False", "(2, 3)"), "unsupported descr '<i4'"},
      {headerWith("'<f16'", "False", "(2, 3)"), "unsupported descr '<f16'"},
      {headerWith("'f4'", "False", "(2, 3)"), "unsupported descr 'f4'"},
      {headerWith("'|u1'", "False", "(2, 3)"), "unsupported descr '|u1'"},
      {headerWith(f4, "False", "[2, 3]"), "'shape' must be a tuple, not a list"},
      {headerWith(f4, "False", "6"), "'shape' must be a tuple"},
      {headerWith(f4, "False", "(6)"), "is an integer, not a tuple"},
      {headerWith(f4, "False", "(2, -3)"), "negative dim '-3'"},
      {headerWith(f4, "False", "(-1,)"), "negative dim '-1'"},
      {headerWith(f4, "False", "(2.5, 3)"), "non-integer dim '2.5'"},
      {headerWith(f4, "False", "('a', 3)"), "non-integer dim"},
      {headerWith(f4, "False", "(None,)"), "non-integer dim 'None'"},
      {headerWith(f4, "False", "(2L, 3L)"), "non-integer dim '2L'"},
      {headerWith(f4, "False", "(0x10,)"), "non-integer dim '0x10'"},
      {headerWith(f4, "False", "(-,)"), "non-integer dim '-'"},
      {headerWith(f4, "False", "(2 3)"), "expected ',' or ')'"},
      {headerWith(f4, "False", "(2,, 3)"), "non-integer dim ','"},
      // headerWith appends ", }": the tuple's trailing comma, then a '}'.
      {headerWith(f4, "False", "(2, 3"), "non-integer dim '}'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3",
       "'shape' tuple is not closed"},
      {headerWith(f4, "False", "(99999999999999999999,)"),
       "overflows int64"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.header);
    expectRejected(dir_, makeNpy(1, 0, c.header, sixFloats), c.needle);
  }

  // More dims than NumPy allows.
  std::string many = "(";
  for (int i = 0; i < 65; ++i)
    many += "1, ";
  many += ")";
  expectRejected(dir_, makeNpy(1, 0, headerWith(f4, "False", many), {0, 0, 0, 0}),
                 "more than 64 dims");
}

// Sizes are checked before anything is allocated: these shapes would need
// exabytes, and the file holds a few bytes.
TEST_F(NpyTest, RejectsOversizedShapesBeforeAllocating) {
  expectRejected(
      dir_,
      makeNpy(1, 0, headerWith("'<f4'", "False", "(4611686018427387904, 2)"),
              sixFloats),
      "overflows int64");
  // 2^62 elements fit in int64, but not their 2^63 bytes.
  expectRejected(
      dir_,
      makeNpy(1, 0, headerWith("'<f2'", "False", "(2305843009213693952, 2)"),
              sixFloats),
      "byte size");
  // 8 TiB is representable, and absent: reported as truncated, not allocated.
  expectRejected(
      dir_,
      makeNpy(1, 0, headerWith("'<f8'", "False", "(1099511627776,)"), sixFloats),
      "truncated data: the header describes 8796093022208 bytes but only 24");
  // A zero dim makes the product zero whatever the other dims.
  NpyArray arr;
  const Bytes zero = makeNpy(
      1, 0, headerWith("'<f4'", "False", "(9223372036854775807, 0, 5)"));
  Status st = parseNpy(zero.data(), zero.size(), "zero", arr);
  EXPECT_TRUE(st.isOk()) << st.message();
  EXPECT_TRUE(arr.data.empty());
}

TEST_F(NpyTest, RejectsWrongDataSizes) {
  Bytes truncated = makeNpy(1, 0, f32Header23, sixFloats);
  truncated.pop_back();
  expectRejected(dir_, truncated,
                 "truncated data: the header describes 24 bytes but only 23");
  Bytes extra = makeNpy(1, 0, f32Header23, sixFloats);
  extra.push_back(0);
  expectRejected(dir_, extra,
                 "extra trailing data: the header describes 24 bytes but 25");
  expectRejected(dir_, makeNpy(1, 0, f32Header23), "truncated data");
}

TEST_F(NpyTest, AcceptsAllVersionsAndHeaderVariations) {
  const std::string variants[] = {
      f32Header23,
      // Key order, quotes, whitespace, no trailing commas.
      "{\"shape\":(2,3),\"fortran_order\":False,\"descr\":\"<f4\"}",
      "{ 'fortran_order' :False ,\t'shape' : ( 2 , 3 , ) ,'descr':'<f4' , }"
      "       \n",
      "\n{'descr': '<f4',\n 'fortran_order': False,\n 'shape': (2, 3)\n}\n",
      // NumPy's growth padding: spaces before the newline.
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }" +
          std::string(100, ' ') + "\n",
  };
  for (int major : {1, 2, 3})
    for (const std::string &h : variants) {
      SCOPED_TRACE("version " + std::to_string(major) + ": " + h);
      const Bytes bytes = makeNpy(major, 0, h, sixFloats);
      NpyArray arr;
      Status st = parseNpy(bytes.data(), bytes.size(), "v", arr);
      ASSERT_TRUE(st.isOk()) << st.message();
      EXPECT_EQ(arr.descr, "<f4");
      EXPECT_EQ(arr.shape, (std::vector<int64_t>{2, 3}));
      EXPECT_EQ(arr.data, sixFloats);

      const std::string p = path("v.npy");
      writeFile(p, bytes);
      NpyArray fromFile;
      st = readNpy(p, fromFile);
      ASSERT_TRUE(st.isOk()) << st.message();
      EXPECT_EQ(fromFile.data, sixFloats);
    }

  // A 1-tuple with and without spaces, and a scalar.
  NpyArray arr;
  Bytes b = makeNpy(1, 0, headerWith("'<f8'", "False", "( 1 , )"), Bytes(8, 0));
  ASSERT_TRUE(parseNpy(b.data(), b.size(), "t", arr).isOk());
  EXPECT_EQ(arr.shape, std::vector<int64_t>{1});
  b = makeNpy(1, 0, headerWith("'<u2'", "False", "()"), Bytes(2, 0));
  ASSERT_TRUE(parseNpy(b.data(), b.size(), "s", arr).isOk());
  EXPECT_TRUE(arr.shape.empty());
  EXPECT_EQ(arr.descr, "<u2");
}

// bf16 as the field has it (issue 27): the exact bytes np.save writes for
// an ml_dtypes.bfloat16 array (numpy 2.4, ml_dtypes 0.7: descr '<V2'), the
// '|V2' that plain NumPy writes when it saves such an array again after
// np.load, and the '<u2' bit patterns, are all bf16 (and only bf16); what
// shardlin writes for bf16 is byte for byte what ml_dtypes writes.
TEST_F(NpyTest, Bf16FilesAsMlDtypesAndNumPyWriteThem) {
  const std::string mlDict =
      "{'descr': '<V2', 'fortran_order': False, 'shape': (2, 3), }";
  Bytes mlDtypesFile = makeNpy(1, 0, mlDict + std::string(58, ' ') + "\n");
  // 1.5, -2.25, 0.125, 3, 4, -1e10 (rounded to bf16), little-endian.
  const uint16_t bits[6] = {0x3fc0, 0xc010, 0x3e00, 0x4040, 0x4080, 0xd015};
  Bytes data(sizeof bits);
  std::memcpy(data.data(), bits, sizeof bits);
  mlDtypesFile.insert(mlDtypesFile.end(), data.begin(), data.end());
  ASSERT_EQ(mlDtypesFile.size(), 140u); // np.save's file, as measured

  for (const char *descr : {"<V2", "|V2", "<u2"}) {
    SCOPED_TRACE(descr);
    Bytes file = mlDtypesFile;
    std::memcpy(file.data() + 10 + 11, descr, 3); // the descr's 3 bytes
    NpyArray arr;
    Status st = parseNpy(file.data(), file.size(), "bf16.npy", arr);
    ASSERT_TRUE(st.isOk()) << st.message();
    EXPECT_EQ(arr.descr, descr);
    EXPECT_EQ(arr.shape, (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(arr.data, data);
    EXPECT_TRUE(npyDescrMatches(arr.descr, DType::BF16));
    for (DType other : {DType::F16, DType::F32, DType::F64})
      EXPECT_FALSE(npyDescrMatches(arr.descr, other));
    std::vector<double> values(6);
    convertToF64(DType::BF16, arr.data.data(), values.data(), 6);
    EXPECT_EQ(values[0], 1.5);
    EXPECT_EQ(values[1], -2.25);
    EXPECT_EQ(values[2], 0.125);
    EXPECT_EQ(values[4], 4.0);
  }
  // f16 is '<f2' only: a bf16 file is not mistaken for it, nor the reverse.
  EXPECT_FALSE(npyDescrMatches("<f2", DType::BF16));
  EXPECT_TRUE(npyDescrMatches("<f2", DType::F16));
  EXPECT_EQ(npyDescrsAccepted(DType::BF16), "'<V2', '|V2' or '<u2'");
  EXPECT_EQ(npyDescrsAccepted(DType::F32), "'<f4'");
  // Other void sizes and big-endian forms are refused by name.
  expectRejected(dir_, makeNpy(1, 0, headerWith("'<V4'", "False", "(2,)"),
                               Bytes(8, 0)),
                 "unsupported descr '<V4'");
  expectRejected(dir_, makeNpy(1, 0, headerWith("'>u2'", "False", "(2,)"),
                               Bytes(4, 0)),
                 "big-endian descr '>u2'");

  const std::string p = path("w.npy");
  ASSERT_TRUE(writeNpy(p, DType::BF16, {2, 3}, data.data()).isOk());
  EXPECT_EQ(readFile(p), mlDtypesFile);
}

// Truncations and random corruptions of a valid file must fail cleanly (or
// parse into something self-consistent), never read out of bounds. Run under
// AddressSanitizer this is a small fuzzer.
TEST_F(NpyTest, CorruptedInputsFailCleanly) {
  const std::vector<float> values = {1, 2, 3, 4, 5, 6};
  const std::string p = path("good.npy");
  ASSERT_TRUE(writeNpy(p, DType::F32, {2, 3}, values.data()).isOk());
  const Bytes good = readFile(p);

  for (size_t len = 0; len < good.size(); ++len) {
    // A copy of exactly `len` bytes, so reading past it is detectable.
    Bytes prefix(good.begin(), good.begin() + long(len));
    NpyArray arr;
    Status st = parseNpy(prefix.data(), prefix.size(), "prefix", arr);
    EXPECT_FALSE(st.isOk()) << "prefix of " << len << " bytes parsed";
    // Whatever is wrong with bytes in memory, it is the input's fault.
    EXPECT_EQ(st.code(), StatusCode::InvalidArgument) << st.message();
    EXPECT_FALSE(st.message().empty());
  }

  std::mt19937 rng(2024);
  std::uniform_int_distribution<int> byte(0, 255);
  const char interesting[] = "{}()[],:'\"-0123456789 \nTrueFalse<>|fu";
  std::uniform_int_distribution<size_t> pick(0, sizeof(interesting) - 2);
  for (int iter = 0; iter < 20000; ++iter) {
    Bytes mutated = good;
    const int edits = 1 + iter % 4;
    for (int e = 0; e < edits; ++e) {
      const size_t at = size_t(byte(rng)) % std::min<size_t>(mutated.size(), 128);
      mutated[at] = iter % 2 ? uint8_t(byte(rng)) : uint8_t(interesting[pick(rng)]);
    }
    if (iter % 7 == 0)
      mutated.resize(size_t(byte(rng)) % mutated.size());
    NpyArray arr;
    Status st = parseNpy(mutated.data(), mutated.size(), "fuzz", arr);
    if (st.isOk()) {
      size_t n = 1;
      for (int64_t d : arr.shape)
        n *= size_t(d);
      size_t item = arr.descr == "<f8" ? 8 : (arr.descr == "<f4" ? 4 : 2);
      EXPECT_EQ(arr.data.size(), n * item);
    } else {
      EXPECT_EQ(st.code(), StatusCode::InvalidArgument) << st.message();
      EXPECT_FALSE(st.message().empty());
    }
  }
}

// A process stopped by SIGINT, SIGTERM, SIGHUP or SIGPIPE while outputs
// are staged leaves no temporary behind (they used to stay,
// *.npy.tmp.PID.N; SIGPIPE's since issue 27.3), and still ends by that
// signal, once it asked for the handlers (Signals.h). Checked in a child
// process that stages two outputs and signals itself.
TEST_F(NpyTest, SignalsRemoveStagedTemporaries) {
  const float data[4] = {1, 2, 3, 4};
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) {
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      installOutputSignalHandlers();
      NpyOutputs outputs;
      if (!outputs.stage(path("a.npy"), DType::F32, {4}, data) ||
          !outputs.stage(path("b.npy"), DType::F32, {4}, data))
        ::_exit(3);
      // Both temporaries exist now.
      int files = 0;
      for (const auto &e : fs::directory_iterator(path("")))
        files += e.path().filename().string().find(".tmp.") !=
                 std::string::npos;
      if (files != 2)
        ::_exit(4);
      ::raise(sig);
      ::_exit(5); // Not reached: the signal ends the process.
    }
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFSIGNALED(status))
        << "signal " << sig << ": exit status "
        << (WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    EXPECT_EQ(WTERMSIG(status), sig);
    EXPECT_TRUE(listing().empty()) << "signal " << sig << " left "
                                   << listing().size() << " files";
  }
}
