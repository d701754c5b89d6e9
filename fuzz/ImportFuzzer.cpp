//===- ImportFuzzer.cpp - libFuzzer target: upstream form through the import
//===//
//
// Parses the input as MLIR with the dialects an upstream-form module holds
// (shard, func, linalg, tensor, arith, math) and shardlin's. For a module
// that verifies, runs --shardlin-import-shard on a copy, then
// --lower-sharded-linear (strategy=activations, which forces every layout's
// own lowering and the block fusion) on the imported module, and checks:
//   - a pass that fails emitted an error (a failure without a diagnostic is
//     a crash here), and none of its errors is an internal one;
//   - a pass that succeeds emitted no error, and its output verifies.
//
//===----------------------------------------------------------------------===//

#include "FuzzSupport.h"
#include "MlirFuzzSupport.h"

#include "shardlin/Conversion/ShardToShardlin/Passes.h"
#include "shardlin/Conversion/ShardToShardlin/ShardToShardlin.h"
#include "shardlin/Dialect/Shardlin/Transforms/Passes.h"

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

namespace {

/// Runs `pm` on `module` and checks the outcome; true if it succeeded.
bool runChecked(PassManager &pm, ModuleOp module, Diagnostics &diags,
                StringRef what, ModuleOp input) {
  const int before = diags.errors;
  if (failed(pm.run(module))) {
    if (diags.errors == before)
      fz::fail(what.str() + " failed without emitting an error on:\n" +
               printModule(input));
    if (diags.text.find("internal:") != std::string::npos)
      fz::fail(what.str() + " hit an internal error:\n" + diags.text +
               "--- input ---\n" + printModule(input));
    return false;
  }
  if (diags.errors != before)
    fz::fail(what.str() + " succeeded but emitted errors:\n" + diags.text);
  if (failed(verify(module)))
    fz::fail(what.str() + " produced a module that does not verify:\n" +
             diags.text + "--- input ---\n" + printModule(input) +
             "--- output ---\n" + printModule(module));
  return true;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  DialectRegistry registry;
  mlir::shardlin::registerImportShardDialects(registry);
  fz::FuzzContext fuzz(registry);
  MLIRContext &context = fuzz.context;
  Diagnostics &diags = fuzz.diags;
  OwningOpRef<ModuleOp> module = fuzz.parse(data, size);
  if (!module)
    return 0;
  OwningOpRef<ModuleOp> imported(module->clone());
  {
    PassManager pm(&context);
    // Verified below, so that a verification failure is told apart from a
    // pass failure.
    pm.enableVerifier(false);
    pm.addPass(mlir::shardlin::createImportShard());
    if (!runChecked(pm, *imported, diags, "--shardlin-import-shard", *module))
      return 0;
  }
  PassManager pm(&context);
  pm.enableVerifier(false);
  mlir::shardlin::LowerShardedLinearOptions options;
  options.strategy = mlir::shardlin::StrategyOption::Activations;
  pm.addNestedPass<func::FuncOp>(
      mlir::shardlin::createLowerShardedLinear(options));
  runChecked(pm, *imported, diags,
             "--lower-sharded-linear=strategy=activations after the import",
             *module);
  return 0;
}
