//===- SuiteWriter.h - What the GPU suite's writers share -------*- C++ -*-===//
//
// The command line and the file helpers of the tools that write a suite as
// files for a GPU machine without MLIR (WriteBlockSuite.cpp,
// Gradient/WriteGradSuite.cpp): `TOOL DIR [--max-world-size=N]` plus a
// tool's own options, one error line and exit 1 for a bad one, DIR created.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_INTEGRATION_TEST_ENDTOEND_SUITEWRITER_H
#define SHARDLIN_INTEGRATION_TEST_ENDTOEND_SUITEWRITER_H

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

namespace shardlin::suite {

/// Prints "TOOL: error: WHAT" and returns 1, the exit status.
inline int fail(const char *tool, const std::string &what) {
  std::fprintf(stderr, "%s: error: %s\n", tool, what.c_str());
  return 1;
}

inline bool writeText(const std::string &path, const std::string &text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  return static_cast<bool>(out.flush());
}

struct SuiteArgs {
  std::string dir;
  int maxWorld = 8;
};

/// Parses `TOOL DIR [--max-world-size=N]` and the options `extra` takes
/// (it returns true for an argument it took), prints `help` for -h, and
/// creates DIR. Returns -1 to go on, else the exit status.
inline int parseSuiteArgs(int argc, char **argv, const char *tool,
                          const char *help, SuiteArgs &out,
                          const std::function<bool(const std::string &)>
                              &extra = {}) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--max-world-size=", 0) == 0) {
      char *end = nullptr;
      const long v = std::strtol(a.c_str() + 17, &end, 10);
      if (*end || v < 1)
        return fail(tool, "--max-world-size needs a positive integer, got '" +
                              a.substr(17) + "'");
      out.maxWorld = static_cast<int>(v);
    } else if (extra && extra(a)) {
      continue;
    } else if (a == "-h" || a == "--help") {
      std::printf("%s", help);
      return 0;
    } else if (!a.empty() && a[0] == '-') {
      return fail(tool, "unknown option '" + a + "'");
    } else if (out.dir.empty()) {
      out.dir = a;
    } else {
      return fail(tool, "one directory only ('" + out.dir + "' and '" + a +
                            "')");
    }
  }
  if (out.dir.empty())
    return fail(tool, std::string("say where to write: ") + tool + " DIR");
  std::error_code ec;
  std::filesystem::create_directories(out.dir, ec);
  if (ec)
    return fail(tool, "cannot create " + out.dir + ": " + ec.message());
  return -1;
}

} // namespace shardlin::suite

#endif // SHARDLIN_INTEGRATION_TEST_ENDTOEND_SUITEWRITER_H
