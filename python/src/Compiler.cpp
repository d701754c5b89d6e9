//===- Compiler.cpp - The Python package's view of RunModule --------------===//

#include "Compiler.h"

// RunModule.h first: Registration.h uses StringRef and ArrayRef without
// including their definitions.
#include "shardlin/Execution/RunModule.h"
#include "shardlin/Dialect/Shardlin/Pipelines/Registration.h"

#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/raw_ostream.h"

#include <mutex>

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"

namespace shardlin::python {

namespace sl = ::mlir::shardlin;

namespace {

const char *severityName(mlir::DiagnosticSeverity severity) {
  switch (severity) {
  case mlir::DiagnosticSeverity::Error:
    return "error";
  case mlir::DiagnosticSeverity::Warning:
    return "warning";
  case mlir::DiagnosticSeverity::Remark:
    return "remark";
  case mlir::DiagnosticSeverity::Note:
    return "note";
  }
  return "note";
}

sl::DiagnosticSink sinkInto(std::vector<Diagnostic> &diagnostics) {
  return [&diagnostics](const std::string &location,
                        mlir::DiagnosticSeverity severity,
                        const std::string &message) {
    diagnostics.push_back({location, severityName(severity), message});
  };
}

} // namespace

std::shared_ptr<const Compiled> compile(const CompileRequest &request,
                                        std::vector<Diagnostic> &diagnostics,
                                        std::string &error) {
  sl::RunModuleOptions options;
  options.inputFile = request.path;
  options.inputText = request.text;
  options.entry = request.entry;
  options.jit = request.jit;
  options.jitCpu = request.jitCpu;
  options.grid = request.grid;
  // The cost model's explanation is always collected (remarks only; it
  // changes nothing that is compiled): Program.explain() returns it.
  std::string lowering = request.lowering;
  if (lowering.find("explain=") == std::string::npos)
    lowering += " explain=true";
  mlir::FailureOr<sl::LowerShardedLinearOptions> parsed =
      sl::parseLowerShardedLinearOptions(lowering, error);
  if (mlir::failed(parsed))
    return nullptr;
  options.lowering = *parsed;
  rt::RunConfig config;
  config.worldSize = request.worldSize;
  if (std::string message = sl::checkRunModuleOptions(options, config);
      !message.empty()) {
    error = message;
    return nullptr;
  }

  auto compiled = std::make_shared<Compiled>();
  std::vector<Diagnostic> remarks;
  options.diagnostics = [&](const std::string &location,
                            mlir::DiagnosticSeverity severity,
                            const std::string &message) {
    Diagnostic d{location, severityName(severity), message};
    if (severity == mlir::DiagnosticSeverity::Remark)
      remarks.push_back(std::move(d));
    else
      diagnostics.push_back(std::move(d));
  };
  // The context outlives the compile: compiled code (--jit) was made in it.
  auto context = std::make_shared<mlir::MLIRContext>(
      mlir::MLIRContext::Threading::DISABLED);
  mlir::DialectRegistry registry;
  sl::registerRunDialects(registry, options);
  context->appendDialectRegistry(registry);
  context->loadAllAvailableDialects();
  mlir::FailureOr<sl::CompiledRun> run =
      sl::compileForRun(*context, options, config, /*mpiWorldSize=*/0, error);
  if (mlir::failed(run))
    return nullptr;
  compiled->program = std::move(run->program);
  compiled->shared =
      std::make_shared<const rt::SharedProgram>(compiled->program);
  compiled->executors = std::move(run->executors);
  compiled->gridDevices = run->gridDevices;
  compiled->gridName = run->grid.name;
  compiled->explanation = std::move(remarks);
  compiled->warnings = std::move(diagnostics);
  diagnostics.clear();
  if (compiled->executors)
    compiled->keepAlive = context;
  return compiled;
}

std::string transform(const std::string &text, const std::string &path,
                      const std::string &pipeline,
                      std::vector<Diagnostic> &diagnostics,
                      std::string &error) {
  static std::once_flag registered;
  std::call_once(registered, [] { sl::registerAllShardlinPasses(); });
  mlir::MLIRContext context(mlir::MLIRContext::Threading::DISABLED);
  mlir::DialectRegistry registry;
  sl::registerAllShardlinDialects(registry);
  context.appendDialectRegistry(registry);
  context.loadAllAvailableDialects();
  sl::DiagnosticLinePrinter printer(context, sinkInto(diagnostics));
  mlir::ParserConfig config(&context);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(text, config, path);
  if (!module)
    return "";
  mlir::PassManager pm(&context);
  std::string message;
  llvm::raw_string_ostream messageStream(message);
  if (mlir::failed(mlir::parsePassPipeline(pipeline, pm, messageStream))) {
    error = "pipeline '" + pipeline + "': " + message;
    return "";
  }
  if (mlir::failed(pm.run(*module)) || printer.sawError()) {
    if (diagnostics.empty())
      error = "pipeline '" + pipeline + "' failed";
    return "";
  }
  std::string out;
  llvm::raw_string_ostream outStream(out);
  module->print(outStream);
  return out;
}

std::vector<std::string> loweringOptionNames() {
  std::vector<std::string> names;
  for (const sl::LoweringFlag &flag : sl::lowerShardedLinearFlags())
    names.push_back(flag.name);
  return names;
}

} // namespace shardlin::python
