//===- shardlin-opt.cpp - The shardlin optimizer driver -------------------===//
//
// MlirOptMain with every shardlin pass and the dialects they use
// (registerAllShardlinPasses / registerAllShardlinDialects), plus upstream's
// generic passes (canonicalize, cse, ...). A pipeline that lowers linears
// imports upstream `shard` modules first (buildImportingPipeline), so that
// modules in the global view lower directly.
//
//===----------------------------------------------------------------------===//

#include "shardlin/Conversion/ShardToShardlin/ShardToShardlin.h"
#include "shardlin/Dialect/Shardlin/Pipelines/Registration.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <string>
#include <vector>

namespace {

constexpr const char *kOverview = "shardlin optimizer driver\n";

/// `--help`: shardlin's passes by group, in a page; MLIR's and LLVM's 500
/// other lines only with --help-all.
void printShortHelp(const mlir::DialectRegistry &registry) {
  llvm::raw_ostream &os = llvm::outs();
  os << "OVERVIEW: " << kOverview << "\n"
     << "USAGE: shardlin-opt [options] <input file>\n\n"
     << "  shardlin-opt in.mlir '--lower-sharded-linear=strategy=auto "
        "explain=true'\n"
     << "  (a pass's options are separated by spaces, not commas)\n";
  for (const mlir::shardlin::PassGroup &group :
       mlir::shardlin::shardlinPassGroups()) {
    os << "\n" << group.title << ":\n";
    for (llvm::StringRef name : group.names) {
      const mlir::PassRegistryEntry *entry = mlir::PassInfo::lookup(name);
      if (!entry)
        entry = mlir::PassPipelineInfo::lookup(name);
      if (!entry)
        continue;
      // The options of the two that take most; the others' are in
      // --help-all (the backward's are the lowering's and two more).
      if (name == "shardlin-lower-sharded-linear" ||
          name == "shardlin-lower-to-llvm") {
        entry->printHelpStr(/*indent=*/2, /*descIndent=*/36);
        continue;
      }
      std::string flag = "  --" + name.str() + " ";
      flag.resize(std::max<size_t>(flag.size(), 34), ' ');
      os << flag << "-   " << entry->getPassDescription() << "\n";
    }
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

/// Answers --help with the short page (returns true); turns --help-all into
/// MlirOptMain's own --help.
bool handleHelp(std::vector<char *> &args,
                const mlir::DialectRegistry &registry) {
  static char fullHelp[] = "--help";
  for (char *&a : args) {
    llvm::StringRef arg(a);
    if (arg == "--help" || arg == "-help" || arg == "-h") {
      printShortHelp(registry);
      return true;
    }
    if (arg == "--help-all" || arg == "-help-all")
      a = fullHelp;
  }
  return false;
}

int fail(const std::string &message) {
  llvm::errs() << message << "\n";
  return 1;
}

} // namespace

int main(int argc, char **argv) {
  // --version: shardlin's version after LLVM's.
  llvm::cl::AddExtraVersionPrinter([](llvm::raw_ostream &os) {
    os << "shardlin-opt " SHARDLIN_VERSION "\n";
  });
  mlir::shardlin::registerAllShardlinPasses();
  mlir::DialectRegistry registry;
  mlir::shardlin::registerAllShardlinDialects(registry);
  std::vector<char *> args(argv, argv + argc);
  if (handleHelp(args, registry))
    return 0;
  int count = static_cast<int>(args.size());
  auto [inputFilename, outputFilename] =
      mlir::registerAndParseCLIOptions(count, args.data(), kOverview, registry);
  mlir::MlirOptMainConfig config = mlir::MlirOptMainConfig::createFromCLOptions();
  const mlir::MlirOptMainConfig commandLine = config;
  config.setPassPipelineSetupFn([commandLine](mlir::PassManager &pm) {
    return mlir::shardlin::buildImportingPipeline(
        pm, [&](mlir::PassManager &p) { return commandLine.setupPassPipeline(p); });
  });
  std::string errorMessage;
  std::unique_ptr<llvm::MemoryBuffer> file =
      mlir::openInputFile(inputFilename, &errorMessage);
  if (!file)
    return fail(errorMessage);
  if (mlir::failed(mlir::shardlin::refuseUpstreamParserCrash(
          file->getMemBufferRef(), llvm::errs())))
    return 1;
  std::unique_ptr<llvm::ToolOutputFile> output =
      mlir::openOutputFile(outputFilename, &errorMessage);
  if (!output)
    return fail(errorMessage);
  if (mlir::failed(
          mlir::MlirOptMain(output->os(), std::move(file), registry, config)))
    return 1;
  output->keep();
  return 0;
}
