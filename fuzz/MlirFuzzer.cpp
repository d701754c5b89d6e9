//===- MlirFuzzer.cpp - libFuzzer target: IR text through the pass --------===//
//
// Parses the input as MLIR with the shardlin dialects registered. For a
// module that verifies, for each of strategy=auto (the default options),
// gather-weight and activations, runs --lower-sharded-linear on a copy and
// checks:
//   - if the pass fails, it emitted an error (a failure without a
//     diagnostic is a crash here);
//   - if the pass succeeds, the lowered module verifies;
//   - every function of the lowered module translates to a runtime Program
//     or fails with an error that is not an internal one; a Program passes
//     the checks of FuzzSupport.h (text round trip, Plan::build on every
//     rank, a run when small).
//
//===----------------------------------------------------------------------===//

#include "FuzzSupport.h"
#include "MlirFuzzSupport.h"

#include "shardlin/Dialect/Shardlin/Transforms/Passes.h"
#include "shardlin/Execution/ProgramBuilder.h"
#include "shardlin/runtime/backends/Host.h"
#include "shardlin/runtime/exec/Gemm.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/raw_ostream.h"

#include <cstddef>
#include <cstdint>
#include <string>

using namespace mlir;
namespace fz = ::shardlin::fuzz;
using fz::Diagnostics;
using fz::printModule;
namespace rt = ::shardlin::rt;

namespace {

void checkLowering(ModuleOp input, Diagnostics &diags, StringRef strategy) {
  OwningOpRef<ModuleOp> module(input.clone());
  MLIRContext *ctx = module->getContext();
  PassManager pm(ctx);
  // The lowered module is verified below, so that a verification failure is
  // told apart from a pass failure.
  pm.enableVerifier(false);
  mlir::shardlin::LowerShardedLinearOptions options;
  options.strategy = mlir::shardlin::parseStrategyOption(strategy).value();
  pm.addNestedPass<mlir::func::FuncOp>(
      mlir::shardlin::createLowerShardedLinear(options));
  int before = diags.errors;
  if (failed(pm.run(*module))) {
    if (diags.errors == before)
      fz::fail("--lower-sharded-linear=strategy=" + strategy.str() +
               " failed without emitting an error on:\n" + printModule(input));
    return;
  }
  if (diags.errors != before)
    fz::fail("--lower-sharded-linear=strategy=" + strategy.str() +
             " succeeded but emitted errors:\n" + diags.text);
  if (failed(verify(*module)))
    fz::fail("the module lowered with strategy=" + strategy.str() +
             " does not verify:\n" + diags.text + "--- input ---\n" +
             printModule(input) + "--- lowered ---\n" + printModule(*module));

  int translated = 0;
  for (func::FuncOp f : module->getOps<func::FuncOp>()) {
    if (f.isExternal())
      continue;
    if (++translated > 4)
      break;
    before = diags.errors;
    FailureOr<rt::Program> program = mlir::shardlin::translateToProgram(f);
    if (failed(program)) {
      if (diags.errors == before)
        fz::fail("translateToProgram failed without emitting an error");
      if (diags.text.find("internal:") != std::string::npos)
        fz::fail("translateToProgram hit an internal error:\n" + diags.text +
                 "--- lowered ---\n" + printModule(*module));
      continue;
    }
    fz::checkProgram(*program);
  }
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  rt::setBlasThreads(1);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  DialectRegistry registry;
  mlir::shardlin::registerExecutionDialects(registry);
  fz::FuzzContext fuzz(registry);
  OwningOpRef<ModuleOp> module = fuzz.parse(data, size);
  if (!module)
    return 0;
  Diagnostics &diags = fuzz.diags;
  for (StringRef strategy : {"auto", "gather-weight", "activations"})
    checkLowering(*module, diags, strategy);
  return 0;
}
