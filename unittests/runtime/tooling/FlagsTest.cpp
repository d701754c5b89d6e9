//===- FlagsTest.cpp - One table of run flags, three readers --------------===//
//
// Issue 38: the run flags are defined once (runFlags(), tooling/Flags.h).
// For every entry of the table: shardlin-exec --help and shardlin-run
// --help mention it, both tools accept it, and shardlin_options_set takes
// it or refuses it with the reason the entry gives. The tools are run as
// child processes (their paths come from CMake; shardlin-run only in a
// build with the compiler). A new flag is checked here without a change to
// this file.
//
//===----------------------------------------------------------------------===//

#include "shardlin/runtime/tooling/Flags.h"
#include "shardlin-c/Runtime.h"
#include "shardlin/runtime/tooling/Runner.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <cstring>
#include <set>
#include <string>
#include <sys/wait.h>

using namespace shardlin::rt;

namespace {

struct ToolOutput {
  int exitCode = -1;
  std::string text; // stdout and stderr
};

/// Runs `command` (through the shell, stderr into stdout).
ToolOutput runTool(const std::string &command) {
  ToolOutput out;
  FILE *pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (!pipe)
    return out;
  std::array<char, 4096> buffer;
  size_t n = 0;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0)
    out.text.append(buffer.data(), n);
  const int status = ::pclose(pipe);
  out.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

/// The flag with its example value, as a command line writes it.
std::string withExample(const RunFlag &flag) {
  return "--" + std::string(flag.name) + "=" + std::string(flag.example);
}

/// The tools under test: name, path, what each says when its flags were
/// all taken and only the input is missing, and how it refuses --bogus.
struct Tool {
  const char *name;
  const char *path;
  const char *missingInput;
  const char *unknownFlag;
};

std::vector<Tool> tools() {
  std::vector<Tool> out = {{"shardlin-exec", SHARDLIN_EXEC_PATH,
                            "no program given", "unknown option '--bogus'"}};
#ifdef SHARDLIN_RUN_PATH
  out.push_back({"shardlin-run", SHARDLIN_RUN_PATH,
                 "Not enough positional command line arguments",
                 "Unknown command line argument '--bogus'"});
#endif
  return out;
}

} // namespace

TEST(RunFlags, TableIsSortedAndComplete) {
  std::set<std::string_view> names;
  std::string_view previous;
  for (const RunFlag &flag : runFlags()) {
    EXPECT_LT(previous, flag.name) << "the table is in name order";
    previous = flag.name;
    EXPECT_TRUE(names.insert(flag.name).second) << flag.name;
    EXPECT_FALSE(flag.help.empty()) << flag.name;
    EXPECT_FALSE(flag.example.empty()) << flag.name;
    EXPECT_EQ(flag.subject.empty(), flag.show == nullptr) << flag.name;
    EXPECT_EQ(flag.kind == RunFlagKind::Bool, flag.valueName.empty())
        << flag.name;
    EXPECT_EQ(findRunFlag(flag.name), &flag);
    RunConfig config;
    EXPECT_TRUE(applyRunFlag(flag, std::string(flag.example), config))
        << flag.name;
  }
  for (const char *name :
       {"world-size", "backend", "device", "arg", "out", "timeout",
        "blas-threads", "overlap-chunks", "verbose"})
    EXPECT_TRUE(names.count(name)) << name;
  EXPECT_EQ(findRunFlag("bogus"), nullptr);
}

// takeRunFlags takes the table's flags in every spelling and leaves the
// rest, in order, for the tool's parser.
TEST(RunFlags, TakeRunFlagsLeavesTheRest) {
  std::vector<std::string> words = {"tool",
                                    "--world-size=3",
                                    "in.mlir",
                                    "-timeout",
                                    "7.5",
                                    "--verbose",
                                    "--entry=main",
                                    "--arg",
                                    "a.npy",
                                    "--arg=b.npy",
                                    "--overlap-chunks=2",
                                    "--",
                                    "--out=c.npy"};
  std::vector<char *> argv;
  for (std::string &w : words)
    argv.push_back(w.data());
  argv.push_back(nullptr);
  int argc = int(words.size());
  RunConfig config;
  ASSERT_TRUE(takeRunFlags(argc, argv.data(), config, {"overlap-chunks"}));
  EXPECT_EQ(config.worldSize, 3);
  EXPECT_EQ(config.comm.timeoutSeconds, 7.5);
  EXPECT_TRUE(config.verbose);
  EXPECT_EQ(config.argPaths, (std::vector<std::string>{"a.npy", "b.npy"}));
  EXPECT_TRUE(config.outPaths.empty()) << "nothing after --";
  std::vector<std::string> rest(argv.begin(), argv.begin() + argc);
  EXPECT_EQ(rest, (std::vector<std::string>{"tool", "in.mlir", "--entry=main",
                                            "--overlap-chunks=2", "--",
                                            "--out=c.npy"}));
  EXPECT_EQ(argv[argc], nullptr);
}

TEST(RunFlags, BadValuesNameTheFlag) {
  RunConfig config;
  Status s = applyRunFlag(*findRunFlag("world-size"), "two", config);
  EXPECT_EQ(s.message(), "--world-size must be a positive integer, got 'two'");
  s = applyRunFlag(*findRunFlag("overlap-chunks"), "65", config);
  EXPECT_EQ(s.message(),
            "--overlap-chunks must be an integer from 0 to 64, got '65'");
  // The range of a RunOptions field is the runtime's, with the flag named.
  ASSERT_TRUE(applyRunFlag(*findRunFlag("timeout"), "0", config));
  s = checkRunFlags(config);
  EXPECT_EQ(flagMessage(s, config),
            "--timeout=0: the timeout must be a positive number of seconds, "
            "got 0");
  int argc = 2;
  char tool[] = "tool", flag[] = "--timeout";
  char *argv[] = {tool, flag, nullptr};
  EXPECT_EQ(takeRunFlags(argc, argv, config).message(),
            "--timeout needs a value (--timeout=SECONDS)");
}

// Every flag's subject leads back to it (flagOf reads the table).
TEST(RunFlags, FlagOfEverySubject) {
  RunConfig config;
  for (const RunFlag &flag : runFlags()) {
    if (flag.subject.empty())
      continue;
    ASSERT_TRUE(applyRunFlag(flag, std::string(flag.example), config));
    Status s =
        Status::invalidArgument("bad").withSubject(std::string(flag.subject));
    EXPECT_EQ(flagOf(s, config), withExample(flag));
  }
}

TEST(RunFlags, ToolsDocumentAndAcceptEveryFlag) {
  for (const Tool &tool : tools()) {
    SCOPED_TRACE(tool.name);
    const ToolOutput help = runTool(std::string(tool.path) + " --help");
    EXPECT_EQ(help.exitCode, 0) << help.text;
    for (const RunFlag &flag : runFlags()) {
      EXPECT_NE(help.text.find("--" + std::string(flag.name)),
                std::string::npos)
          << flag.name << " is not in --help";
      // Accepted: the tool goes on to say that its input is missing.
      const ToolOutput run =
          runTool(std::string(tool.path) + " '" + withExample(flag) + "'");
      EXPECT_NE(run.exitCode, 0);
      EXPECT_NE(run.text.find(tool.missingInput), std::string::npos)
          << withExample(flag) << ": " << run.text;
    }
    const ToolOutput bogus = runTool(std::string(tool.path) + " --bogus");
    EXPECT_NE(bogus.exitCode, 0);
    EXPECT_NE(bogus.text.find(tool.unknownFlag), std::string::npos)
        << bogus.text;
  }
}

// shardlin_options_set takes the flags a context has (the options change as
// the tools' config would) and refuses the others with the table's reason.
TEST(RunFlags, OptionsSetReadsTheTable) {
  for (const RunFlag &flag : runFlags()) {
    SCOPED_TRACE(std::string(flag.name));
    shardlin_options options = shardlin_default_options();
    const std::string name(flag.name), value(flag.example);
    const shardlin_status status =
        shardlin_options_set(&options, name.c_str(), value.c_str());
    if (!flag.notInContext.empty()) {
      EXPECT_EQ(status, SHARDLIN_INVALID_ARGUMENT);
      const std::string message = shardlin_last_error_message();
      EXPECT_NE(message.find(std::string(flag.notInContext)), std::string::npos)
          << message;
      EXPECT_NE(message.find("'" + name + "'"), std::string::npos) << message;
      continue;
    }
    EXPECT_EQ(status, SHARDLIN_OK) << shardlin_last_error_message();
    RunConfig config;
    ASSERT_TRUE(applyRunFlag(flag, value, config));
    EXPECT_EQ(options.timeout_seconds, config.comm.timeoutSeconds);
    EXPECT_EQ(options.blas_threads, config.blasThreads);
  }
}

TEST(RunFlags, OptionsSetErrors) {
  shardlin_options options = shardlin_default_options();
  EXPECT_EQ(shardlin_options_set(&options, "bogus", "1"), SHARDLIN_NOT_FOUND);
  EXPECT_NE(std::string(shardlin_last_error_message())
                .find("no run option 'bogus'; a context takes blas-threads, "
                      "timeout"),
            std::string::npos)
      << shardlin_last_error_message();
  // A refused value leaves the options as they were, in the flag's words.
  EXPECT_EQ(shardlin_options_set(&options, "timeout", "soon"),
            SHARDLIN_INVALID_ARGUMENT);
  EXPECT_STREQ(shardlin_last_error_message(),
               "--timeout must be a positive number, got 'soon'");
  EXPECT_EQ(shardlin_options_set(&options, "blas-threads", "-2"),
            SHARDLIN_INVALID_ARGUMENT);
  EXPECT_NE(std::string(shardlin_last_error_message())
                .find("blas-threads=-2: the BLAS thread count must be >= 0"),
            std::string::npos)
      << shardlin_last_error_message();
  EXPECT_EQ(options.timeout_seconds, 300.0);
  EXPECT_EQ(options.blas_threads, 0);
  EXPECT_EQ(shardlin_options_set(nullptr, "timeout", "1"),
            SHARDLIN_INVALID_ARGUMENT);
  // An older caller's struct that ends before the field: nothing written
  // beyond it.
  shardlin_options old = shardlin_default_options();
  old.size = offsetof(shardlin_options, timeout_seconds);
  EXPECT_EQ(shardlin_options_set(&old, "timeout", "60"),
            SHARDLIN_INVALID_ARGUMENT);
  EXPECT_EQ(old.timeout_seconds, 300.0);
  // The options set this way make contexts.
  ASSERT_EQ(shardlin_options_set(&options, "timeout", "30"), SHARDLIN_OK);
  ASSERT_EQ(shardlin_options_set(&options, "blas-threads", "1"), SHARDLIN_OK);
  shardlin_context *contexts[2] = {nullptr, nullptr};
  ASSERT_EQ(shardlin_threads_group_create(2, &options, contexts), SHARDLIN_OK)
      << shardlin_last_error_message();
  for (shardlin_context *c : contexts)
    shardlin_context_destroy(c);
}
