//===- JitTesting.cpp - The tests' layers compiled by the JIT -------------===//

#include "JitTesting.h"
#include "CompileContext.h"

#include "shardlin/Execution/Jit.h"
#include "shardlin/Execution/ProgramBuilder.h"

namespace shardlin::testkit {

rt::Status jitMlir(const std::string &text, const std::string &strategy,
                   JitProgram &out, CompileMessage message, bool fuseBlocks) {
  CompileContext context(mlir::shardlin::registerJitDialects);
  return compileWith(
      context, text, strategy, message, fuseBlocks, "the JIT failed",
      [&](mlir::ModuleOp module,
          const mlir::shardlin::LowerShardedLinearOptions &lowering)
          -> mlir::LogicalResult {
        mlir::shardlin::JitOptions options;
        options.lowering = lowering;
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

} // namespace shardlin::testkit
