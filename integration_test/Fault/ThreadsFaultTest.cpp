//===- ThreadsFaultTest.cpp - Faulty ranks on the threads backend ---------===//
//
// Runs a real lowered layer through runProgramWithFiles (the path of
// shardlin-run and shardlin-exec) on W = 3 threads with a 1 s collective
// timeout, while one rank misbehaves at one collective (FaultyCommunicator.h).
// In every case:
//   - the run fails, well within the timeout plus a margin (nothing hangs);
//   - the error names the collective and a rank;
//   - every rank's run ends with an error (the observer sees each rank's
//     collectives), and every healthy rank's error names the collective;
//   - no output file appears, not even the healthy ranks'.
// A rank that exits the process is MPI's case (MpiFaultProgram.cpp): a
// thread cannot exit alone.
//
//===----------------------------------------------------------------------===//

#include "FaultSupport.h"
#include "FaultyCommunicator.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <unistd.h>

using namespace shardlin;
using fault::FaultKind;

namespace {

constexpr double kTimeout = 1.0;
// 3 ranks share 2 cores, under sanitizers too.
constexpr double kMargin = 3.0;

std::string scratchDir(const std::string &name) {
  std::string base = ::testing::TempDir() + "shardlin-fault-" + name + "-" +
                     std::to_string(::getpid());
  std::string cmd = "rm -rf '" + base + "'";
  (void)std::system(cmd.c_str());
  return base;
}

bool exists(const std::string &path) { return ::access(path.c_str(), F_OK) == 0; }

struct Case {
  FaultKind kind;
  int64_t dim;
  int call;
  /// The collective the fault hits, as the error names it.
  std::string collective;
};

// For gtest's messages (instead of a byte dump).
void PrintTo(const Case &c, std::ostream *os) {
  *os << fault::faultName(c.kind) << "@" << c.call << "/"
      << (c.dim == 1 ? "row" : "col") << "/" << c.collective;
}

std::string caseName(const ::testing::TestParamInfo<Case> &info) {
  return std::string(fault::faultName(info.param.kind)) + "_" +
         (info.param.dim == 1 ? "row" : "col") + "_call" +
         std::to_string(info.param.call);
}

class ThreadsFault : public ::testing::TestWithParam<Case> {};

TEST_P(ThreadsFault, FailsEveryRankInTime) {
  const Case &c = GetParam();
  e2e::LinearConfig layer = fault::faultLinear(c.dim);
  rt::Program program;
  rt::Status compiled = e2e::compileLinear(layer, program);
  ASSERT_TRUE(compiled.isOk()) << compiled.message();
  const int w = layer.worldSize();

  rt::RunConfig config;
  config.backend = "threads";
  config.worldSize = w;
  config.comm.timeoutSeconds = kTimeout;
  config.blasThreads = 1;
  std::string dir = scratchDir(caseName({c, 0}));
  for (int r = 0; r < w; ++r) {
    rt::Status s = fault::writeInputs(layer, dir, r, config);
    ASSERT_TRUE(s.isOk()) << s.message();
  }

  // The last error each rank's collectives returned.
  std::mutex mutex;
  std::map<int, std::string> lastError;
  fault::FaultSpec spec{c.kind, /*rank=*/1, c.call};
  config.wrapCommunicator = [&](std::unique_ptr<rt::Communicator> inner) {
    return std::unique_ptr<rt::Communicator>(new fault::FaultyCommunicator(
        std::move(inner), spec,
        [&](int rank, const char *, const rt::Status &s) {
          if (s.isOk())
            return;
          std::lock_guard<std::mutex> lock(mutex);
          lastError[rank] = s.message();
        }));
  };

  auto start = std::chrono::steady_clock::now();
  rt::Status status = rt::runProgramWithFiles(program, config);
  double elapsed = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - start)
                       .count();

  ASSERT_FALSE(status.isOk()) << "a faulty rank went unnoticed";
  // For the log: what a user sees, and what each rank's last collective said.
  std::printf("run (%.2f s): %s\n", elapsed, status.message().c_str());
  for (const auto &[rank, message] : lastError)
    std::printf("  rank %d: %s\n", rank, message.c_str());
  EXPECT_LT(elapsed, kTimeout + kMargin) << status.message();
  const std::string &m = status.message();
  EXPECT_NE(m.find(c.collective), std::string::npos) << m;
  EXPECT_NE(m.find("rank "), std::string::npos) << m;

  // Every rank ended with an error from a collective (the faulty one too,
  // except when it was its own injected error that ended its run).
  for (int r = 0; r < w; ++r) {
    if (r == spec.rank && c.kind == FaultKind::Error)
      continue;
    ASSERT_TRUE(lastError.count(r)) << "rank " << r << " saw no error; run: "
                                    << m;
    EXPECT_NE(lastError[r].find("threads "), std::string::npos)
        << lastError[r];
    EXPECT_NE(lastError[r].find("(rank " + std::to_string(r) + " of 3)"),
              std::string::npos)
        << lastError[r];
  }
  if (c.kind == FaultKind::Error) {
    EXPECT_NE(lastError[spec.rank].find("injected fault"), std::string::npos);
    // The healthy ranks waited for the faulty one and said so: the first to
    // time out names rank 1, the other reports that group abort.
    for (int r : {0, 2}) {
      EXPECT_NE(lastError[r].find("timed out"), std::string::npos)
          << lastError[r];
      EXPECT_NE(lastError[r].find("waiting for rank 1"), std::string::npos)
          << lastError[r];
    }
  }

  // Nothing was written as if it were a result.
  for (int r = 0; r < w; ++r)
    EXPECT_FALSE(exists(dir + "/out/y." + std::to_string(r) + ".npy"))
        << "rank " << r << " wrote an output";
  std::string cmd = "rm -rf '" + dir + "'";
  (void)std::system(cmd.c_str());
}

INSTANTIATE_TEST_SUITE_P(
    Faults, ThreadsFault,
    ::testing::Values(
        // A rank's run ends with an error before the first collective of the
        // program, and before the second.
        Case{FaultKind::Error, 1, 1, "allToAllV"},
        Case{FaultKind::Error, 1, 2, "reduceScatterV"},
        Case{FaultKind::Error, 0, 1, "allGatherV"},
        // The rank fails in the agreement before the program; the others are
        // there.
        Case{FaultKind::Error, 1, 0, "allReduce"},
        // A rank skips a collective and enters the next one.
        Case{FaultKind::Skip, 1, 1, "reduceScatterV"},
        Case{FaultKind::Skip, 0, 1, "allToAllV"},
        // A rank skips the program's last collective: the next one it enters
        // is the agreement on the outputs.
        Case{FaultKind::Skip, 1, 2, "allReduce"},
        // A rank sends one element more than its peers expect.
        Case{FaultKind::Mismatch, 1, 1, "allToAllV"},
        Case{FaultKind::Mismatch, 1, 2, "reduceScatterV"},
        Case{FaultKind::Mismatch, 0, 1, "allGatherV"},
        Case{FaultKind::Mismatch, 1, 0, "allReduce"}),
    caseName);

// With every rank healthy the wrapper changes nothing: the run succeeds and
// writes every output (so the failures above are the faults' doing).
TEST(ThreadsFaultBaseline, NoFaultRunsAndWrites) {
  e2e::LinearConfig layer = fault::faultLinear(1);
  rt::Program program;
  ASSERT_TRUE(e2e::compileLinear(layer, program).isOk());
  rt::RunConfig config;
  config.worldSize = layer.worldSize();
  config.comm.timeoutSeconds = kTimeout;
  config.blasThreads = 1;
  std::string dir = scratchDir("baseline");
  for (int r = 0; r < layer.worldSize(); ++r)
    ASSERT_TRUE(fault::writeInputs(layer, dir, r, config).isOk());
  config.wrapCommunicator = [](std::unique_ptr<rt::Communicator> inner) {
    return std::unique_ptr<rt::Communicator>(
        new fault::FaultyCommunicator(std::move(inner), fault::FaultSpec{}));
  };
  rt::Status status = rt::runProgramWithFiles(program, config);
  ASSERT_TRUE(status.isOk()) << status.message();
  for (int r = 0; r < layer.worldSize(); ++r)
    EXPECT_TRUE(exists(dir + "/out/y." + std::to_string(r) + ".npy"));
  std::string cmd = "rm -rf '" + dir + "'";
  (void)std::system(cmd.c_str());
}

} // namespace
