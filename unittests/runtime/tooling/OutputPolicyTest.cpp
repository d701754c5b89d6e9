//===- OutputPolicyTest.cpp - One output policy for every destination -----===//
//
// docs/robustness.md, "Outputs" (issue 27.2-27.4, 27.9): regular files are
// replaced as one set that a failure or a signal puts back; FIFOs, pipes
// and the descriptors /dev/fd/N and /proc/self/fd/N name are written in
// place, with EPIPE an error (never a SIGPIPE) and a deadline; a sharded
// result written to a path without {rank} is the whole tensor. Cases that
// signal or may be killed by one run in a child process, whose exit status
// the parent checks.
//
//===----------------------------------------------------------------------===//

#include "shardlin/runtime/program/ProgramText.h"
#include "shardlin/runtime/tooling/Npy.h"
#include "shardlin/runtime/tooling/Runner.h"
#include "shardlin/runtime/tooling/Signals.h"

#include "tooling/OutputFile.h"

#include "TempDirTest.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <thread>
#include <vector>

using namespace shardlin::rt;
namespace fs = std::filesystem;

namespace {

using Bytes = std::vector<uint8_t>;

using testutil::readFile;

class OutputPolicy : public testutil::TempDirTest {
protected:
  /// A file "old" bytes long holding "old", that an output replaces.
  void writeOld(const std::string &name) {
    std::ofstream(path(name), std::ios::binary) << "old";
  }
  const float data_[4] = {1.5f, -2, 3, 4};
};

/// Runs `body` in a child process and returns its wait status.
template <typename F> int inChild(F body) {
  const pid_t child = ::fork();
  if (child == 0) {
    body();
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  return status;
}

} // namespace

// undo() after a commit puts back the file a rename replaced (its bytes)
// and removes the new one; keep() leaves only the outputs. No temporary or
// backup is left either way.
TEST_F(OutputPolicy, UndoPutsBackReplacedFilesAndKeepDropsBackups) {
  writeOld("a.npy");
  {
    NpyOutputs out;
    ASSERT_TRUE(out.stage(path("a.npy"), DType::F32, {4}, data_).isOk());
    ASSERT_TRUE(out.stage(path("b.npy"), DType::F32, {4}, data_).isOk());
    ASSERT_TRUE(out.writeInPlace().isOk());
    Status st = out.commit();
    ASSERT_TRUE(st.isOk()) << st.message();
    EXPECT_NE(readFile(path("a.npy")), Bytes({'o', 'l', 'd'}));
    EXPECT_TRUE(fs::exists(path("b.npy")));
    st = out.undo();
    EXPECT_TRUE(st.isOk()) << st.message();
  }
  EXPECT_EQ(readFile(path("a.npy")), Bytes({'o', 'l', 'd'}));
  EXPECT_EQ(listing(), std::vector<std::string>{"a.npy"});

  // Destroyed after a commit without keep(): undone as well.
  {
    NpyOutputs out;
    ASSERT_TRUE(out.stage(path("a.npy"), DType::F32, {4}, data_).isOk());
    ASSERT_TRUE(out.commit().isOk());
  }
  EXPECT_EQ(readFile(path("a.npy")), Bytes({'o', 'l', 'd'}));
  EXPECT_EQ(listing(), std::vector<std::string>{"a.npy"});

  {
    NpyOutputs out;
    ASSERT_TRUE(out.stage(path("a.npy"), DType::F32, {4}, data_).isOk());
    ASSERT_TRUE(out.stage(path("b.npy"), DType::F32, {4}, data_).isOk());
    ASSERT_TRUE(out.commit().isOk());
    out.keep();
  }
  EXPECT_EQ(listing(), (std::vector<std::string>{"a.npy", "b.npy"}));
  NpyArray a;
  ASSERT_TRUE(readNpy(path("a.npy"), a).isOk());
  EXPECT_EQ(a.shape, std::vector<int64_t>{4});
}

// A rename that fails half-way (a directory appeared under the third name
// after staging) puts back the two already made: the first file's old
// bytes, no second file.
TEST_F(OutputPolicy, AFailedRenameUndoesTheOthers) {
  writeOld("a.npy");
  {
    NpyOutputs out;
    for (const char *name : {"a.npy", "b.npy", "c.npy"})
      ASSERT_TRUE(out.stage(path(name), DType::F32, {4}, data_).isOk());
    ASSERT_TRUE(fs::create_directory(path("c.npy")));
    Status st = out.commit();
    ASSERT_FALSE(st.isOk());
    EXPECT_EQ(st.code(), StatusCode::IoError) << st.message();
    EXPECT_NE(st.message().find("c.npy' failed: it is now a directory"),
              std::string::npos)
        << st.message();
    EXPECT_EQ(readFile(path("a.npy")), Bytes({'o', 'l', 'd'}));
    EXPECT_FALSE(fs::exists(path("b.npy")));
  }
  // The temporary of the output that was never renamed goes with the
  // outputs' object.
  EXPECT_EQ(listing(), (std::vector<std::string>{"a.npy", "c.npy"}));
}

// A signal that arrives after the renames began is held: the process lives
// on, the commit sees it (interrupted()), puts every file back, and only
// then does the signal end the process. Without the handlers asked for,
// nothing is held.
TEST_F(OutputPolicy, ASignalDuringTheCommitPutsEverythingBack) {
  writeOld("a.npy");
  const int status = inChild([&] {
    installOutputSignalHandlers();
    NpyOutputs out;
    if (!out.stage(path("a.npy"), DType::F32, {4}, data_) ||
        !out.stage(path("b.npy"), DType::F32, {4}, data_) || !out.commit())
      ::_exit(3);
    ::raise(SIGTERM);
    if (out.interrupted() != SIGTERM || !fs::exists(path("b.npy")))
      ::_exit(4);
    (void)out.undo(); // The held signal ends the process here.
    ::_exit(5);
  });
  ASSERT_TRUE(WIFSIGNALED(status))
      << "exit status " << (WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  EXPECT_EQ(WTERMSIG(status), SIGTERM);
  EXPECT_EQ(readFile(path("a.npy")), Bytes({'o', 'l', 'd'}));
  EXPECT_EQ(listing(), std::vector<std::string>{"a.npy"});
}

// A pipe whose reader takes 10 bytes and closes it: the write fails with an
// IoError that says so (EPIPE), and the process is not killed by SIGPIPE
// (it used to die with exit 141 and no message). The pipe is named as a
// user names one: /proc/self/fd/N, and /dev/fd/N.
TEST_F(OutputPolicy, AReaderThatClosesEarlyIsAnErrorNotASigpipe) {
  for (const char *prefix : {"/proc/self/fd/", "/dev/fd/"}) {
    SCOPED_TRACE(prefix);
    const int status = inChild([&] {
      int fds[2];
      if (::pipe(fds) != 0)
        ::_exit(3);
      std::thread reader([&] {
        char buf[10];
        size_t got = 0;
        while (got < sizeof buf) {
          const ssize_t n = ::read(fds[0], buf + got, sizeof buf - got);
          if (n <= 0)
            break;
          got += size_t(n);
        }
        ::close(fds[0]);
      });
      const std::vector<float> big(1 << 18, 1.0f); // 1 MiB: past the pipe
      const std::string target = prefix + std::to_string(fds[1]);
      NpyOutputs out;
      Status st = out.stage(target, DType::F32, {1 << 18}, big.data());
      if (st)
        st = out.writeInPlace(30);
      reader.join();
      if (st.isOk() || st.code() != StatusCode::IoError ||
          st.message().find("the reader closed the pipe after") ==
              std::string::npos ||
          st.message().find("(EPIPE)") == std::string::npos) {
        std::fprintf(stderr, "%s\n", st.message().c_str());
        ::_exit(4);
      }
    });
    ASSERT_TRUE(WIFEXITED(status))
        << "killed by signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    EXPECT_EQ(WEXITSTATUS(status), 0);
  }
}

// A FIFO that nobody reads fails at once, naming it; one whose reader never
// takes the data fails when the timeout passes, saying how much went.
TEST_F(OutputPolicy, AFifoNobodyReadsOrThatStallsFails) {
  const std::string fifo = path("out.npy");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  Status st = writeNpy(fifo, DType::F32, {4}, data_);
  ASSERT_FALSE(st.isOk());
  EXPECT_EQ(st.code(), StatusCode::IoError);
  EXPECT_NE(st.message().find("no process reads this FIFO"), std::string::npos)
      << st.message();

  // The reader opens the FIFO and holds it without reading.
  std::thread reader([&] {
    const int fd = ::open(fifo.c_str(), O_RDONLY);
    std::this_thread::sleep_for(std::chrono::seconds(3));
    ::close(fd);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const std::vector<float> big(1 << 18, 1.0f);
  const auto start = std::chrono::steady_clock::now();
  NpyOutputs out;
  st = out.stage(fifo, DType::F32, {1 << 18}, big.data());
  ASSERT_TRUE(st.isOk()) << st.message();
  st = out.writeInPlace(1);
  const double seconds = std::chrono::duration<double>(
                             std::chrono::steady_clock::now() - start)
                             .count();
  reader.join();
  ASSERT_FALSE(st.isOk());
  EXPECT_EQ(st.code(), StatusCode::IoError);
  EXPECT_NE(st.message().find("did not take the whole output within 1 s"),
            std::string::npos)
      << st.message();
  EXPECT_GE(seconds, 0.9);
  EXPECT_LT(seconds, 2.5);
  EXPECT_TRUE(fs::is_fifo(fifo));
}

// /dev/fd/N and /proc/self/fd/N: a pipe behind them is written in place
// (the path was followed as a symlink to 'pipe:[...]' and refused); a
// regular file behind them is replaced like any file, under its own name.
TEST_F(OutputPolicy, DescriptorPathsAreWrittenWhereTheyLead) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  for (const std::string &p : {"/proc/self/fd/" + std::to_string(fds[1]),
                               "/dev/fd/" + std::to_string(fds[1])}) {
    detail::OutputTarget target;
    ASSERT_TRUE(detail::resolveOutputTarget(p, target).isOk());
    EXPECT_TRUE(target.inPlace) << p;
    EXPECT_STREQ(target.kind, "pipe");
  }
  Bytes got;
  std::thread reader([&] {
    unsigned char buf[4096];
    ssize_t n;
    while ((n = ::read(fds[0], buf, sizeof buf)) > 0)
      got.insert(got.end(), buf, buf + n);
  });
  Status st = writeNpy("/dev/fd/" + std::to_string(fds[1]), DType::F32, {4},
                       data_);
  ::close(fds[1]);
  reader.join();
  ::close(fds[0]);
  ASSERT_TRUE(st.isOk()) << st.message();
  NpyArray arr;
  ASSERT_TRUE(parseNpy(got.data(), got.size(), "pipe", arr).isOk());
  EXPECT_EQ(std::memcmp(arr.data.data(), data_, sizeof data_), 0);

  writeOld("r.npy");
  const int fd = ::open(path("r.npy").c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  const std::string viaFd = "/dev/fd/" + std::to_string(fd);
  detail::OutputTarget target;
  ASSERT_TRUE(detail::resolveOutputTarget(viaFd, target).isOk());
  EXPECT_FALSE(target.inPlace);
  EXPECT_EQ(fs::canonical(target.path), fs::canonical(path("r.npy")));
  st = writeNpy(viaFd, DType::F32, {4}, data_);
  ::close(fd);
  ASSERT_TRUE(st.isOk()) << st.message();
  ASSERT_TRUE(readNpy(path("r.npy"), arr).isOk());
  EXPECT_EQ(arr.shape, std::vector<int64_t>{4});
  EXPECT_EQ(listing(), std::vector<std::string>{"r.npy"});
}

namespace {

/// Returns a sharded argument as it came: rank r's result is its chunk of
/// the global [rows, cols] weight along `dim` (placements [1, 0], so rank 1
/// holds the first chunk), and the program says the result is sharded.
std::string returnShardedProgram(int64_t rows, int64_t cols, int dim) {
  const std::string g = "2 " + std::to_string(rows) + " " +
                        std::to_string(cols);
  const std::string local = dim == 0 ? "2 ? " + std::to_string(cols)
                                     : "2 " + std::to_string(rows) + " ?";
  const std::string spec = std::to_string(dim) + " 2 1 0";
  return "shardlin-program v1\nname main\nworld_size 2\nvalues 2\n"
         "value 0 f32 " + local + "\nvalue 1 f32 " + local +
         "\narg 0 sharded " + g + " spec " + spec +
         "\ninstr local_shard result 1 operands 1 0 loc t\n"
         "results 1 1\nresult 0 sharded " + g + " spec " + spec + "\nend\n";
}

} // namespace

// A sharded result written to a path without {rank} is the whole tensor,
// assembled from every rank's chunk (it used to be rank 0's chunk alone),
// for a split along the outer dim (chunks land in place) and an inner one
// (chunks interleaved); with {rank}, each rank's chunk as before.
TEST_F(OutputPolicy, AShardedResultWithoutRankIsWrittenWhole) {
  for (int dim : {0, 1}) {
    SCOPED_TRACE("dim " + std::to_string(dim));
    const int64_t rows = 5, cols = 7;
    Program program;
    Status st = parseProgram(returnShardedProgram(rows, cols, dim), program);
    ASSERT_TRUE(st.isOk()) << st.message();
    std::mt19937 rng(5 + dim);
    std::uniform_real_distribution<float> u(0.5f, 2.0f);
    std::vector<float> w(rows * cols);
    for (float &v : w)
      v = u(rng);
    ASSERT_TRUE(writeNpy(path("w.npy"), DType::F32, {rows, cols}, w.data())
                    .isOk());
    RunConfig config;
    config.argPaths = {path("w.npy")};
    config.outPaths = {path("whole.npy")};
    st = runProgramWithFiles(program, config);
    ASSERT_TRUE(st.isOk()) << st.message();
    NpyArray whole;
    ASSERT_TRUE(readNpy(path("whole.npy"), whole).isOk());
    EXPECT_EQ(whole.shape, (std::vector<int64_t>{rows, cols}));
    ASSERT_EQ(whole.data.size(), w.size() * 4);
    EXPECT_EQ(std::memcmp(whole.data.data(), w.data(), whole.data.size()), 0);

    config.outPaths = {path("part.{rank}.npy")};
    st = runProgramWithFiles(program, config);
    ASSERT_TRUE(st.isOk()) << st.message();
    NpyArray part;
    ASSERT_TRUE(readNpy(path("part.1.npy"), part).isOk());
    // Rank 1 holds the first chunk: 3 of the 5 rows, or 4 of the 7 cols.
    EXPECT_EQ(part.shape, dim == 0 ? (std::vector<int64_t>{3, cols})
                                   : (std::vector<int64_t>{rows, 4}));
    EXPECT_EQ(reinterpret_cast<const float *>(part.data.data())[0], w[0]);
    fs::remove(path("whole.npy"));
    fs::remove(path("part.0.npy"));
    fs::remove(path("part.1.npy"));
  }
}
