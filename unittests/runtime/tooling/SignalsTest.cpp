//===- SignalsTest.cpp - Signal handlers only where a program asks -------===//
//
// Issue 25: the process-wide handlers that remove staged outputs when a
// signal ends the process (Signals.h) are installed by the tools, never as
// a side effect of the file runner, so an embedder's own signal handling is
// left alone. (What the handlers do is checked by
// NpyTest.SignalsRemoveStagedTemporaries and OutputPolicyTest.cpp, in child
// processes, so that this process never has them.)
//
//===----------------------------------------------------------------------===//

#include "shardlin/runtime/program/ProgramText.h"
#include "shardlin/runtime/tooling/Npy.h"
#include "shardlin/runtime/tooling/Runner.h"
#include "shardlin/runtime/tooling/Signals.h"

#include "TempDirTest.h"

#include <gtest/gtest.h>

#include <csignal>

using namespace shardlin::rt;

namespace {
class Signals : public testutil::TempDirTest {
protected:
  const float data_[4] = {1.5f, -2, 3, 4};
};
} // namespace

// An embedder that calls runProgramWithFiles gets no signal handler (the
// runner used to install SIGINT/SIGTERM/SIGHUP handlers as a side effect of
// staging its first output): the dispositions are what they were, SIGPIPE's
// included.
TEST_F(Signals, RunnerInstallsNoSignalHandler) {
  const int signals[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
  struct sigaction before[4];
  for (int i = 0; i < 4; ++i)
    ASSERT_EQ(::sigaction(signals[i], nullptr, &before[i]), 0);

  const char *text = "shardlin-program v1\nname main\nworld_size 0\n"
                     "values 2\nvalue 0 f32 1 4\nvalue 1 f32 1 4\n"
                     "arg 0 plain\n"
                     "instr elementwise result 1 operands 1 0 "
                     "expr 3 input 0 input 0 add 0 1 loc t\n"
                     "results 1 1\nend\n";
  Program program;
  Status st = parseProgram(text, program);
  ASSERT_TRUE(st.isOk()) << st.message();
  ASSERT_TRUE(writeNpy(path("x.npy"), DType::F32, {4}, data_).isOk());
  RunConfig config;
  config.worldSize = 2;
  config.argPaths = {path("x.npy")};
  config.outPaths = {path("y.{rank}.npy")};
  st = runProgramWithFiles(program, config);
  ASSERT_TRUE(st.isOk()) << st.message();
  NpyArray y;
  ASSERT_TRUE(readNpy(path("y.1.npy"), y).isOk());
  EXPECT_EQ(reinterpret_cast<const float *>(y.data.data())[1], -4.0f);

  for (int i = 0; i < 4; ++i) {
    struct sigaction after;
    ASSERT_EQ(::sigaction(signals[i], nullptr, &after), 0);
    EXPECT_EQ(after.sa_handler, before[i].sa_handler) << "signal " << signals[i];
    EXPECT_EQ(after.sa_flags, before[i].sa_flags) << "signal " << signals[i];
  }
  EXPECT_FALSE(outputSignalHandlersInstalled());
}
