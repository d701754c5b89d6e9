//===- GradCompile.cpp - Compiling a case's backward functions ------------===//
//
// --shardlin-generate-backward and --lower-sharded-linear on a parsed
// module, then the translation of @main, @main_backward and
// @main_forward_saving (GradTesting.h).
//
//===----------------------------------------------------------------------===//

#include "CompileContext.h"
#include "GradPipeline.h"
#include "GradTesting.h"

#include "shardlin/Dialect/Shardlin/IR/ShardlinOps.h"
#include "shardlin/Dialect/Shardlin/Backward/Passes.h"
#include "shardlin/Dialect/Shardlin/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

namespace shardlin::testkit {

mlir::LogicalResult generateBackward(mlir::ModuleOp module,
                                     const std::string &strategy, bool fuse,
                                     const std::string &recompute) {
  // The pipeline names the passes: registered once per process.
  static const bool registered = [] {
    mlir::shardlin::registerShardlinPasses();
    mlir::shardlin::registerShardlinBackwardPasses();
    return true;
  }();
  (void)registered;
  const std::string options =
      "strategy=" + strategy + " fuse-blocks=" + (fuse ? "1" : "0");
  mlir::PassManager pm(module.getContext());
  if (mlir::failed(mlir::parsePassPipeline(
          "shardlin-generate-backward{" + options + " recompute=" + recompute +
              "},func.func(lower-sharded-linear{" + options + "})",
          pm)))
    return module.emitError() << "cannot parse the backward pipeline";
  return pm.run(module);
}

rt::Status compileBackwardMlir(const std::string &text,
                               const std::string &strategy, bool fuse,
                               const std::string &recompute,
                               BackwardPrograms &out,
                               const std::string &entry) {
  CompileContext context;
  return compileWith(
      context, text, strategy, CompileMessage::DiagnosticsAndInput, fuse,
      "generating or translating the backward failed",
      [&](mlir::ModuleOp module,
          const mlir::shardlin::LowerShardedLinearOptions &)
          -> mlir::LogicalResult {
        if (mlir::failed(generateBackward(module, strategy, fuse, recompute)))
          return mlir::failure();
        auto translate = [&](llvm::StringRef name,
                             rt::Program &program) -> mlir::LogicalResult {
          auto func = module.lookupSymbol<mlir::func::FuncOp>(name);
          if (!func)
            return module.emitError() << "no function @" << name;
          mlir::FailureOr<rt::Program> p =
              mlir::shardlin::translateToProgram(func);
          if (mlir::failed(p))
            return mlir::failure();
          program = std::move(*p);
          return mlir::success();
        };
        out = BackwardPrograms();
        if (mlir::failed(translate(entry, out.forward)) ||
            mlir::failed(translate(entry + "_backward", out.backward)))
          return mlir::failure();
        // @<entry>_backward(args of @<entry>, dy..., saved...).
        out.numSaved = out.backward.args.size() - out.forward.args.size() -
                       out.forward.results.size();
        if (out.numSaved > 0 &&
            mlir::failed(translate(entry + "_forward_saving", out.saving)))
          return mlir::failure();
        return mlir::success();
      });
}

rt::Status compileBackward(const GradCase &c, BackwardPrograms &out) {
  return compileBackwardMlir(c.mlir(), c.strategy(), c.fuse(), c.recompute,
                             out);
}

} // namespace shardlin::testkit
