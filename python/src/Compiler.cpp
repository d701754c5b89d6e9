//===- Compiler.cpp - The Python package's view of RunModule --------------===//

#include "Compiler.h"

#include "shardlin/Execution/RunModule.h"

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

std::vector<std::string> loweringOptionNames() {
  std::vector<std::string> names;
  for (const sl::LoweringFlag &flag : sl::lowerShardedLinearFlags())
    names.push_back(flag.name);
  return names;
}

} // namespace shardlin::python
