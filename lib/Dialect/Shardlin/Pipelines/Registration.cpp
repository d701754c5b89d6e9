//===- Registration.cpp - Everything shardlin adds to a tool --------------===//

#include "shardlin/Dialect/Shardlin/Pipelines/Registration.h"

#include "shardlin/Conversion/ShardToShardlin/Passes.h"
#include "shardlin/Conversion/ShardToShardlin/ShardToShardlin.h"
#include "shardlin/Dialect/Shardlin/Backward/Passes.h"
#include "shardlin/Dialect/Shardlin/IR/ShardlinDialect.h"
#include "shardlin/Dialect/Shardlin/Pipelines/Pipelines.h"
#include "shardlin/Dialect/Shardlin/Transforms/ElementwiseChains.h"
#include "shardlin/Dialect/Shardlin/Transforms/Passes.h"
#include "shardlin/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <cctype>

using namespace mlir;
using namespace mlir::shardlin;

ArrayRef<PassGroup> mlir::shardlin::shardlinPassGroups() {
  static const StringRef lowering[] = {kLowerShardedLinearAlias,
                                       kLowerShardedLinearArg};
  static const StringRef import[] = {"shardlin-import-shard",
                                     "shardlin-externalize-parameters"};
  static const StringRef training[] = {"shardlin-generate-backward"};
  static const StringRef native[] = {
      "shardlin-lower-to-llvm", "shardlin-localize-sharded",
      "shardlin-prepare-native", "shardlin-expand-shape-to-reinterpret-cast",
      "shardlin-convert-to-llvm"};
  static const PassGroup groups[] = {
      {"Lowering (docs/lowering.md)", lowering},
      {"Import of upstream shard + linalg, and weights as parameters "
       "(docs/interop.md; externalize's options: file=PATH.safetensors "
       "min-elements=N)",
       import},
      {"Training (docs/training.md; options: the lowering's, "
       "recompute=auto|always|never, functions=f,g)",
       training},
      {"The native path, to LLVM with the shardlin ops as calls of the "
       "runtime's C ABI (docs/native.md)",
       native}};
  return groups;
}

void mlir::shardlin::registerAllShardlinPasses() {
  registerTransformsPasses();
  registerShardlinPasses();
  registerShardToShardlinPasses();
  registerShardlinBackwardPasses();
  registerShardlinPipelines();
  registerShardlinModulePasses();
}

void mlir::shardlin::registerAllShardlinDialects(DialectRegistry &registry) {
  registry.insert<ShardlinDialect, func::FuncDialect>();
  // The elementwise ops of blocks (arith, math, linalg) and tensor reshapes.
  registerElementwiseDialects(registry);
  // Upstream-form modules: the shard dialect.
  registerImportShardDialects(registry);
  // What --shardlin-lower-to-llvm works on, with their bufferization models.
  registerLowerToLLVMDialects(registry);
}

/// The pass names of a textual pipeline: every identifier that names a pass
/// or a pipeline, the options between braces skipped.
static SmallVector<std::string> passNames(StringRef text) {
  SmallVector<std::string> names;
  std::string word;
  int braces = 0;
  auto flush = [&] {
    if (!word.empty() && braces == 0)
      names.push_back(word);
    word.clear();
  };
  for (char c : text) {
    if (c == '{') {
      flush();
      ++braces;
    } else if (c == '}') {
      --braces;
    } else if (braces == 0 && (std::isalnum(static_cast<unsigned char>(c)) ||
                               c == '-' || c == '_' || c == '.')) {
      word += c;
    } else {
      flush();
    }
  }
  flush();
  return names;
}

bool mlir::shardlin::lowersLinears(OpPassManager &pm) {
  // A pipeline prints each pass by its registered argument, whichever name
  // (or alias) added it.
  const PassInfo *lowering = PassInfo::lookup(kLowerShardedLinearArg);
  std::string text;
  llvm::raw_string_ostream os(text);
  pm.printAsTextualPipeline(os);
  return lowering && llvm::any_of(passNames(text), [&](const std::string &n) {
           return PassInfo::lookup(n) == lowering;
         });
}

LogicalResult mlir::shardlin::buildImportingPipeline(
    PassManager &pm, function_ref<LogicalResult(PassManager &)> setup) {
  // The command line's pipeline, built once in a scratch manager to see
  // whether it lowers linears and whether it imports.
  PassManager probe(pm.getContext(), pm.getOpAnchorName(),
                    OpPassManager::Nesting::Implicit);
  if (failed(setup(probe)))
    return failure();
  bool imports = false;
  for (Pass &pass : probe.getPasses())
    imports |= pass.getArgument() == "shardlin-import-shard";
  if (lowersLinears(probe) && !imports)
    pm.addPass(createImportShard());
  return setup(pm);
}
