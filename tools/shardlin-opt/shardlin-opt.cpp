//===- shardlin-opt.cpp - The shardlin optimizer driver -------------------===//
//
// MlirOptMain with the shardlin dialect and passes, plus the upstream dialects
// and generic passes (canonicalize, cse, ...) that shardlin programs use.
// A pipeline that lowers linears (--lower-sharded-linear) imports upstream
// `shard` modules first (--shardlin-import-shard, which leaves a module
// without a shard.grid as it is), so that modules in the global view lower
// directly.
//
//===----------------------------------------------------------------------===//

#include "shardlin/Dialect/Shardlin/IR/ShardlinDialect.h"
#include "shardlin/Dialect/Shardlin/Backward/Passes.h"
#include "shardlin/Dialect/Shardlin/Pipelines/Pipelines.h"
#include "shardlin/Dialect/Shardlin/Transforms/ElementwiseChains.h"
#include "shardlin/Conversion/ShardToShardlin/ShardToShardlin.h"
#include "shardlin/Dialect/Shardlin/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <vector>

namespace {

constexpr const char *kOverview = "shardlin optimizer driver\n";

/// `--help`: shardlin's pass and its options first, in a page; MLIR's and
/// LLVM's 500 other lines only with --help-all.
void printShortHelp(const mlir::DialectRegistry &registry) {
  llvm::raw_ostream &os = llvm::outs();
  os << "OVERVIEW: " << kOverview << "\n"
     << "USAGE: shardlin-opt [options] <input file>\n\n"
     << "  shardlin-opt in.mlir '--lower-sharded-linear=strategy=auto "
        "explain=true'\n"
     << "  (a pass's options are separated by spaces, not commas)\n\n"
     << "shardlin's pass:\n";
  if (const mlir::PassInfo *info =
          mlir::PassInfo::lookup("lower-sharded-linear"))
    info->printHelpStr(/*indent=*/2, /*descIndent=*/36);
  // One line, to keep this page short: its options are the lowering's and
  // two of its own (--help-all lists them).
  os << "  --shardlin-generate-backward    -   Add the backward function of "
        "each public function (docs/training.md; the options above, "
        "recompute=auto|always|never, functions=f,g)\n";
  os << "\nThe native path (docs/native.md): to the LLVM dialect, shardlin's "
        "ops as calls of\nthe runtime's C ABI:\n";
  for (const char *name : {"shardlin-lower-to-llvm", "localize-sharded",
                           "prepare-native", "convert-shardlin-to-llvm"}) {
    if (const mlir::PassInfo *info = mlir::PassInfo::lookup(name))
      info->printHelpStr(/*indent=*/2, /*descIndent=*/36);
    else if (const mlir::PassPipelineInfo *pipeline =
                 mlir::PassPipelineInfo::lookup(name))
      pipeline->printHelpStr(/*indent=*/2, /*descIndent=*/36);
  }
  os << "\nAvailable Dialects: ";
  llvm::interleaveComma(registry.getDialectNames(), os);
  os << "\n\nCommon options:\n"
     << "  -o <filename>                    Output filename (default: "
        "stdout)\n"
     << "  --pass-pipeline=<pipeline>       A textual pass pipeline, e.g. "
        "'builtin.module(lower-sharded-linear,canonicalize)'\n"
     << "  --canonicalize, --cse            Upstream cleanups after the "
        "lowering\n"
     << "  --verify-diagnostics             Check expected-error comments "
        "(tests)\n"
     << "  --version                        shardlin's and LLVM's version\n"
     << "  --help-all                       Every option of MLIR and LLVM "
        "(over 500 lines)\n";
}

} // namespace

int main(int argc, char **argv) {
  // --version: shardlin's version after LLVM's.
  llvm::cl::AddExtraVersionPrinter([](llvm::raw_ostream &os) {
    os << "shardlin-opt " SHARDLIN_VERSION "\n";
  });
  mlir::registerTransformsPasses();
  mlir::shardlin::registerShardlinPasses();
  // --shardlin-generate-backward (docs/training.md).
  mlir::shardlin::registerShardlinBackwardPasses();
  // The native path: its pipeline and the passes it is made of
  // (one-shot-bufferize, convert-shardlin-to-llvm, ...), to run its steps
  // one by one.
  mlir::shardlin::registerShardlinPipelines();

  mlir::DialectRegistry registry;
  registry.insert<mlir::shardlin::ShardlinDialect, mlir::func::FuncDialect>();
  // The elementwise ops of blocks (arith, math, linalg) and tensor reshapes.
  mlir::shardlin::registerElementwiseDialects(registry);
  // Upstream-form modules: the shard dialect.
  mlir::shardlin::registerImportShardDialects(registry);
  // What --shardlin-lower-to-llvm works on, with their bufferization models.
  mlir::shardlin::registerLowerToLLVMDialects(registry);
  // --help is the short page; --help-all is MlirOptMain's own --help.
  std::vector<char *> args(argv, argv + argc);
  static char fullHelp[] = "--help";
  for (char *&a : args) {
    llvm::StringRef arg(a);
    if (arg == "--help" || arg == "-help" || arg == "-h") {
      printShortHelp(registry);
      return 0;
    }
    if (arg == "--help-all" || arg == "-help-all")
      a = fullHelp;
  }
  int count = static_cast<int>(args.size());
  auto [inputFilename, outputFilename] =
      mlir::registerAndParseCLIOptions(count, args.data(), kOverview, registry);
  mlir::MlirOptMainConfig config = mlir::MlirOptMainConfig::createFromCLOptions();
  const mlir::MlirOptMainConfig commandLine = config;
  config.setPassPipelineSetupFn([commandLine](mlir::PassManager &pm) {
    // The command line's pipeline, built once in a scratch manager to see
    // whether it lowers linears.
    mlir::PassManager probe(pm.getContext(), pm.getOpAnchorName(),
                            mlir::OpPassManager::Nesting::Implicit);
    if (mlir::failed(commandLine.setupPassPipeline(probe)))
      return mlir::failure();
    std::string text;
    llvm::raw_string_ostream os(text);
    probe.printAsTextualPipeline(os);
    if (llvm::StringRef(text).contains("lower-sharded-linear") &&
        !llvm::StringRef(text).contains("shardlin-import-shard"))
      pm.addPass(mlir::shardlin::createImportShard());
    return commandLine.setupPassPipeline(pm);
  });
  std::string errorMessage;
  std::unique_ptr<llvm::MemoryBuffer> file =
      mlir::openInputFile(inputFilename, &errorMessage);
  if (!file) {
    llvm::errs() << errorMessage << "\n";
    return 1;
  }
  if (mlir::failed(mlir::shardlin::refuseUpstreamParserCrash(
          file->getMemBufferRef(), llvm::errs())))
    return 1;
  std::unique_ptr<llvm::ToolOutputFile> output =
      mlir::openOutputFile(outputFilename, &errorMessage);
  if (!output) {
    llvm::errs() << errorMessage << "\n";
    return 1;
  }
  if (mlir::failed(
          mlir::MlirOptMain(output->os(), std::move(file), registry, config)))
    return 1;
  output->keep();
  return 0;
}
