//===- JitTesting.cpp - The tests' layers compiled by the JIT -------------===//

#include "JitTesting.h"
#include "CompileContext.h"
#include "GradPipeline.h"

#include "shardlin/Execution/Jit.h"
#include "shardlin/Execution/ProgramBuilder.h"

#include <cstdlib>

namespace shardlin::testkit {

namespace {

/// The JIT's options for the tests: `lowering`, and the target CPU from
/// $SHARDLIN_TEST_JIT_CPU when set (JitOptions::targetCpu: the ctests
/// e2e.jit.cpu.* compile a sample as for an x86-64 CPU without AVX, F16C or
/// AVX-512, whose conversions call the compiler runtime, so that a symbol
/// this platform lacks fails on every developer's machine).
mlir::shardlin::JitOptions
testJitOptions(const mlir::shardlin::LowerShardedLinearOptions &lowering) {
  mlir::shardlin::JitOptions options;
  options.lowering = lowering;
  if (const char *cpu = std::getenv("SHARDLIN_TEST_JIT_CPU"); cpu && *cpu)
    options.targetCpu = cpu;
  return options;
}

} // namespace

rt::Status jitMlir(const std::string &text, const std::string &strategy,
                   JitProgram &out, CompileMessage message, bool fuseBlocks) {
  CompileContext context(mlir::shardlin::registerJitDialects);
  return compileWith(
      context, text, strategy, message, fuseBlocks, "the JIT failed",
      [&](mlir::ModuleOp module,
          const mlir::shardlin::LowerShardedLinearOptions &lowering)
          -> mlir::LogicalResult {
        const mlir::shardlin::JitOptions options = testJitOptions(lowering);
        // An upstream-form module is imported first, as shardlin-run does.
        mlir::FailureOr<int64_t> grid =
            mlir::shardlin::importForExecution(module);
        if (mlir::failed(grid))
          return mlir::failure();
        auto compiled = mlir::shardlin::JitEntry::compile(module, "main",
                                                          options);
        if (mlir::failed(compiled))
          return mlir::failure();
        out.program = (*compiled)->program();
        if (out.program.worldSize == 0)
          out.program.worldSize = *grid;
        out.executors = (*compiled)->executors();
        return mlir::success();
      });
}

rt::Status jitLinear(const LinearSpec &spec, JitProgram &out,
                     CompileMessage message) {
  return jitMlir(linearMlir(spec), spec.strategy, out, message);
}

rt::Status jitBlock(const BlockSpec &spec, JitProgram &out) {
  return jitMlir(blockMlir(spec), spec.strategy, out,
                 CompileMessage::DiagnosticsAndInput, spec.fuse);
}

BackwardRun JitBackward::run() const {
  BackwardRun r;
  r.backward = &backward.program;
  r.backwardExecutor = backward.executors;
  r.numSaved = numSaved;
  if (numSaved > 0) {
    r.saving = &saving.program;
    r.savingExecutor = saving.executors;
  }
  return r;
}

rt::Status jitBackward(const GradCase &c, JitBackward &out) {
  return jitBackwardMlir(c.mlir(), c.strategy(), c.fuse(), c.recompute, out);
}

rt::Status jitBackwardMlir(const std::string &text, const std::string &strategy,
                           bool fuse, const std::string &recompute,
                           JitBackward &out) {
  CompileContext context(mlir::shardlin::registerJitDialects);
  return compileWith(
      context, text, strategy, CompileMessage::DiagnosticsAndInput, fuse,
      "generating or compiling the backward failed",
      [&](mlir::ModuleOp module,
          const mlir::shardlin::LowerShardedLinearOptions &lowering)
          -> mlir::LogicalResult {
        if (mlir::failed(generateBackward(module, strategy, fuse, recompute)))
          return mlir::failure();
        const mlir::shardlin::JitOptions options = testJitOptions(lowering);
        // Each compilation lowers its module to LLVM: one copy per entry.
        auto compile = [&](const char *name,
                           JitProgram &jit) -> mlir::LogicalResult {
          mlir::OwningOpRef<mlir::ModuleOp> copy = module.clone();
          auto compiled = mlir::shardlin::JitEntry::compile(*copy, name,
                                                            options);
          if (mlir::failed(compiled))
            return mlir::failure();
          jit.program = (*compiled)->program();
          jit.executors = (*compiled)->executors();
          return mlir::success();
        };
        out = JitBackward();
        out.numSaved = module.lookupSymbol("main_forward_saving") ? 1 : 0;
        if (mlir::failed(compile("main_backward", out.backward)))
          return mlir::failure();
        if (out.numSaved == 0)
          return mlir::success();
        if (mlir::failed(compile("main_forward_saving", out.saving)))
          return mlir::failure();
        out.numSaved = out.saving.program.results.size() - 1;
        return mlir::success();
      });
}

} // namespace shardlin::testkit
