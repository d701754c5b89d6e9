//===- NpyStreamTest.cpp - .npy inputs from FIFOs and pipes ---------------===//
//
// Issue 12.3: an input that is a FIFO (or a shell's <(...) pipe) is read
// whole within a timeout instead of blocking its rank forever or being
// refused. A writer thread feeds a real FIFO; every case checks the array
// or the specific message, and the time where a timeout is involved.
//
//===----------------------------------------------------------------------===//

#include "shardlin/runtime/tooling/Npy.h"

#include "TempDirTest.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

using namespace shardlin::rt;

namespace {

using Bytes = std::vector<uint8_t>;

class NpyStream : public testutil::TempDirTest {
protected:
  void SetUp() override {
    TempDirTest::SetUp();
    fifo_ = path("in.npy");
    ASSERT_EQ(::mkfifo(fifo_.c_str(), 0600), 0) << std::strerror(errno);
    // A 3 x 5 x 7 f32 array with random, non-zero values, as a file.
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(0.5f, 2.0f);
    values_.resize(3 * 5 * 7);
    for (float &v : values_)
      v = u(rng);
    ASSERT_TRUE(
        writeNpy(path("a.npy"), DType::F32, {3, 5, 7}, values_.data()).isOk());
    FILE *f = std::fopen(path("a.npy").c_str(), "rb");
    ASSERT_NE(f, nullptr);
    bytes_.resize(4096);
    bytes_.resize(std::fread(bytes_.data(), 1, bytes_.size(), f));
    std::fclose(f);
  }

  /// Writes `bytes` into the FIFO from a thread, in pieces with pauses
  /// (`pieces` writes, `pause` apart), after `delay`.
  std::thread writer(Bytes bytes, int pieces = 1,
                     std::chrono::milliseconds pause = {},
                     std::chrono::milliseconds delay = {}) {
    return std::thread([this, bytes, pieces, pause, delay] {
      std::this_thread::sleep_for(delay);
      int fd = ::open(fifo_.c_str(), O_WRONLY | O_CLOEXEC);
      if (fd < 0)
        return;
      size_t step = (bytes.size() + pieces - 1) / pieces, done = 0;
      while (done < bytes.size()) {
        size_t n = std::min(step, bytes.size() - done);
        if (::write(fd, bytes.data() + done, n) != ssize_t(n))
          break;
        done += n;
        std::this_thread::sleep_for(pause);
      }
      ::close(fd);
    });
  }

  std::string fifo_;
  std::vector<float> values_;
  Bytes bytes_;
};

TEST_F(NpyStream, RefusedWithoutATimeout) {
  NpyArray arr;
  Status st = readNpy(fifo_, arr);
  EXPECT_EQ(st.code(), StatusCode::InvalidArgument);
  EXPECT_NE(st.message().find("a FIFO or pipe, which this reader does not "
                              "wait on"),
            std::string::npos)
      << st.message();
}

TEST_F(NpyStream, ReadsAWholeArrayWrittenInPieces) {
  std::thread w = writer(bytes_, 5, std::chrono::milliseconds(20),
                         std::chrono::milliseconds(100));
  NpyArray arr;
  Status st = readNpy(fifo_, arr, 10.0);
  w.join();
  ASSERT_TRUE(st.isOk()) << st.message();
  EXPECT_EQ(arr.shape, (std::vector<int64_t>{3, 5, 7}));
  ASSERT_EQ(arr.data.size(), values_.size() * 4);
  EXPECT_EQ(std::memcmp(arr.data.data(), values_.data(), arr.data.size()), 0);
}

TEST_F(NpyStream, SlicesComeFromTheStreamedData) {
  std::thread w = writer(bytes_);
  std::unique_ptr<NpyFile> f;
  Status st = NpyFile::open(fifo_, f, 10.0);
  w.join();
  ASSERT_TRUE(st.isOk()) << st.message();
  Bytes slice;
  ASSERT_TRUE(f->readSlice(1, Range{2, 2}, slice).isOk());
  ASSERT_EQ(slice.size(), size_t(3 * 2 * 7 * 4));
  for (int64_t i = 0; i < 3; ++i)
    EXPECT_EQ(std::memcmp(slice.data() + i * 2 * 7 * 4,
                          values_.data() + (i * 5 + 2) * 7, 2 * 7 * 4),
              0);
}

TEST_F(NpyStream, NoWriterFailsWhenTheTimeoutPasses) {
  NpyArray arr;
  const auto start = std::chrono::steady_clock::now();
  Status st = readNpy(fifo_, arr, 0.5);
  const double s = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - start)
                       .count();
  EXPECT_GE(s, 0.5);
  EXPECT_LT(s, 3.0);
  EXPECT_EQ(st.code(), StatusCode::IoError);
  EXPECT_NE(st.message().find("no complete .npy arrived on this FIFO within "
                              "0.5 s (the timeout): 0 bytes came, no writer "
                              "opened it"),
            std::string::npos)
      << st.message();
}

TEST_F(NpyStream, AWriterThatStallsFailsWhenTheTimeoutPasses) {
  // Half the array, then the writer keeps the FIFO open past the timeout.
  Bytes half(bytes_.begin(), bytes_.begin() + bytes_.size() / 2);
  std::thread w([&] {
    int fd = ::open(fifo_.c_str(), O_WRONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::write(fd, half.data(), half.size()), ssize_t(half.size()));
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    ::close(fd);
  });
  NpyArray arr;
  Status st = readNpy(fifo_, arr, 0.5);
  w.join();
  EXPECT_EQ(st.code(), StatusCode::IoError);
  EXPECT_NE(st.message().find("within 0.5 s (the timeout): " +
                              std::to_string(half.size()) + " bytes came"),
            std::string::npos)
      << st.message();
}

TEST_F(NpyStream, TruncatedAndOverlongStreamsAreRefused) {
  {
    Bytes cut(bytes_.begin(), bytes_.end() - 4);
    std::thread w = writer(cut);
    NpyArray arr;
    Status st = readNpy(fifo_, arr, 10.0);
    w.join();
    EXPECT_EQ(st.code(), StatusCode::InvalidArgument) << st.message();
    EXPECT_NE(st.message().find("truncated data"), std::string::npos)
        << st.message();
  }
  {
    Bytes longer = bytes_;
    longer.push_back(0);
    std::thread w = writer(longer);
    NpyArray arr;
    Status st = readNpy(fifo_, arr, 10.0);
    w.join();
    EXPECT_NE(st.message().find("extra trailing data"), std::string::npos)
        << st.message();
  }
  {
    Bytes notNpy = {'h', 'e', 'l', 'l', 'o', '\n'};
    std::thread w = writer(notNpy);
    NpyArray arr;
    Status st = readNpy(fifo_, arr, 10.0);
    w.join();
    EXPECT_NE(st.message().find("bad magic: not a .npy file"),
              std::string::npos)
        << st.message();
  }
}

} // namespace
