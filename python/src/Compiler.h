//===- Compiler.h - The Python package's view of RunModule -------*- C++ -*-===//
//
// The compile side of shardlin-run (shardlin/Execution/RunModule.h) behind
// an interface without MLIR types, so that the nanobind module (built with
// RTTI and exceptions) never includes MLIR or LLVM headers, which are built
// without them.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_PYTHON_COMPILER_H
#define SHARDLIN_PYTHON_COMPILER_H

#include "shardlin/runtime/exec/Execute.h"
#include "shardlin/runtime/program/Program.h"

#include <memory>
#include <string>
#include <vector>

namespace shardlin::python {

/// One located message of a compile: "file:line:col" (or the file, or ""),
/// "error", "warning", "remark" or "note", and the text.
struct Diagnostic {
  std::string location;
  std::string severity;
  std::string message;
};

/// shardlin-run's compile flags.
struct CompileRequest {
  /// The module's text; empty: read `path`.
  std::string text;
  /// The file, or the name the text's locations carry.
  std::string path;
  std::string entry;
  bool jit = false;
  std::string jitCpu;
  std::string grid;
  /// The lowering's options as the pass takes them ("strategy=activations").
  std::string lowering;
  /// The world size to check the module's grid against (0: none).
  int worldSize = 0;
};

/// A compiled entry: the runtime's program and, for --jit, the executors
/// that hold its native code (and the MLIR context it was compiled in).
struct Compiled {
  rt::Program program;
  /// The same program copied and digested once (its text and fingerprint,
  /// the plan cache's key) for every run, instead of once per run.
  std::shared_ptr<const rt::SharedProgram> shared;
  rt::RankCallbacks::MakeExecutor executors;
  /// The module's shard.grid size (0: none).
  int64_t gridDevices = 0;
  /// Not empty when the entry runs as replicas of a data-parallel grid.
  std::string gridName;
  /// The cost model's remarks (the lowering's explain=true), one a line.
  std::vector<Diagnostic> explanation;
  /// Warnings and notes of a compile that succeeded.
  std::vector<Diagnostic> warnings;
  std::shared_ptr<void> keepAlive;
};

/// Compiles as shardlin-run does. On failure returns null, with every
/// diagnostic in `diagnostics` and, where no diagnostic says what failed,
/// the message in `error`.
std::shared_ptr<const Compiled> compile(const CompileRequest &request,
                                        std::vector<Diagnostic> &diagnostics,
                                        std::string &error);

/// Runs `pipeline` (shardlin-opt's passes in textual form, e.g.
/// "shardlin-externalize-parameters{file=p.safetensors},
/// shardlin-import-shard, shardlin-generate-backward") on the module `text`
/// (its locations named `path`) and returns the module's text, or "" on
/// failure, with every diagnostic in `diagnostics` and, where no diagnostic
/// says what failed, the message in `error`. shardlin.torch uses it to
/// externalize a model's parameters and generate its backward.
std::string transform(const std::string &text, const std::string &path,
                      const std::string &pipeline,
                      std::vector<Diagnostic> &diagnostics, std::string &error);

/// The lowering's option names (the pass's, as shardlin-run's flags).
std::vector<std::string> loweringOptionNames();

} // namespace shardlin::python

#endif
