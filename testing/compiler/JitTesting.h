//===- JitTesting.h - The tests' layers compiled by the JIT -----*- C++ -*-===//
//
// The linear and the blocks of LinearTesting.h and BlockTesting.h compiled
// to native code the way `shardlin-run --jit` compiles them
// (mlir::shardlin::JitEntry: --shardlin-lower-to-llvm and MLIR's
// ExecutionEngine), for the JIT's end-to-end tests and the benchmark's jit
// column. The result runs through the same in-memory run API as a plan:
// its program is the entry's signature (rt::Program::compiled), and
// `executors` goes into RankCallbacks::executor.
//
// A library of its own (ShardlinJitTesting), so that the tests that run only
// plans do not link LLVM's code generation. No MLIR in this header.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_BENCH_TESTING_JITTESTING_H
#define SHARDLIN_BENCH_TESTING_JITTESTING_H

#include "BlockTesting.h"
#include "GradTesting.h"
#include "LinearTesting.h"
#include "shardlin/runtime/exec/Execute.h"
#include "shardlin/runtime/program/Program.h"
#include "shardlin/runtime/base/Status.h"

#include <string>

namespace shardlin::testkit {

/// An entry compiled to native code: its signature and its ranks'
/// executors (which keep the code alive).
struct JitProgram {
  rt::Program program;
  rt::RankCallbacks::MakeExecutor executors;
};

/// Parses `text` (a module with a public function @main; one in the upstream
/// shard form is imported first), lowers it with
/// `strategy` (fusing blocks if `fuseBlocks`) through the native path and
/// compiles it; errors carry the diagnostics (and the input, as `message`
/// says), as compileMlir's.
rt::Status jitMlir(const std::string &text, const std::string &strategy,
                   JitProgram &out,
                   CompileMessage message = CompileMessage::DiagnosticsAndInput,
                   bool fuseBlocks = true);

/// linearMlir(spec) and blockMlir(spec) through jitMlir.
rt::Status
jitLinear(const LinearSpec &spec, JitProgram &out,
          CompileMessage message = CompileMessage::DiagnosticsAndInput);
rt::Status jitBlock(const BlockSpec &spec, JitProgram &out);

/// A case's backward functions compiled to native code (GradTesting.h):
/// @main_backward and, if it takes saved values, @main_forward_saving,
/// each from its own copy of the module with the backward generated.
struct JitBackward {
  JitProgram backward, saving;
  size_t numSaved = 0;
  /// What runBackward takes: these programs and their executors.
  BackwardRun run() const;
};
rt::Status jitBackward(const GradCase &c, JitBackward &out);
/// The same for any module text with a public function @main.
rt::Status jitBackwardMlir(const std::string &text, const std::string &strategy,
                           bool fuse, const std::string &recompute,
                           JitBackward &out);

} // namespace shardlin::testkit

#endif // SHARDLIN_BENCH_TESTING_JITTESTING_H
