//===- CompileContext.h - An MLIR context for one compilation --*- C++ -*-===//
//
// What every in-process compilation of the tests and the benchmark sets up:
// a single-threaded MLIRContext with the dialects a shardlin program uses,
// and its diagnostics collected as text ("loc: message" lines, capped) for
// the error a failure reports. Single-threaded because the tests and the
// benchmark run many small compilations, the ranks' threads already use
// the cores, and a timing should not depend on how busy the cores are.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_BENCH_TESTING_COMPILECONTEXT_H
#define SHARDLIN_BENCH_TESTING_COMPILECONTEXT_H

#include "LinearTesting.h"
#include "shardlin/Execution/ProgramBuilder.h"

#include "mlir/Parser/Parser.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <optional>
#include <string>

namespace shardlin::testkit {

class CompileContext {
public:
  /// `registerMore`, if given, adds to the dialects a shardlin program uses
  /// (the JIT's: mlir::shardlin::registerJitDialects).
  explicit CompileContext(
      void (*registerMore)(mlir::DialectRegistry &) = nullptr)
      : context_(registry(registerMore),
                 mlir::MLIRContext::Threading::DISABLED) {
    context_.loadAllAvailableDialects();
    handler_ = std::make_unique<mlir::ScopedDiagnosticHandler>(
        &context_, [this](mlir::Diagnostic &d) {
          if (diagnostics_.size() < kMaxDiagnosticBytes) {
            llvm::raw_string_ostream os(diagnostics_);
            os << d.getLocation() << ": " << d.str() << "\n";
          }
          return mlir::success();
        });
  }

  mlir::MLIRContext *get() { return &context_; }
  /// Everything diagnosed so far.
  const std::string &diagnostics() const { return diagnostics_; }

private:
  static constexpr size_t kMaxDiagnosticBytes = 4000;
  static mlir::DialectRegistry
  registry(void (*registerMore)(mlir::DialectRegistry &)) {
    mlir::DialectRegistry r;
    mlir::shardlin::registerExecutionDialects(r);
    if (registerMore)
      registerMore(r);
    return r;
  }

  mlir::MLIRContext context_;
  std::string diagnostics_;
  std::unique_ptr<mlir::ScopedDiagnosticHandler> handler_;
};

/// Parses `text` in `context` and builds it with `build(module, lowering)`
/// (the lowering options: `strategy`, fusing blocks if `fuseBlocks`), which
/// returns whether it succeeded; a failure's message is `what` and the
/// diagnostics (and the input, as `message` says). What compileMlir and the
/// JIT's jitMlir share.
template <typename Build>
rt::Status compileWith(CompileContext &context, const std::string &text,
                       const std::string &strategy, CompileMessage message,
                       bool fuseBlocks, const char *what, Build build) {
  auto failure = [&](const char *step) {
    if (message == CompileMessage::Diagnostics)
      return rt::Status::invalidArgument(std::string(step) + ": " +
                               context.diagnostics());
    return rt::Status::invalidArgument(std::string(step) + ":\n" +
                             context.diagnostics() + "input:\n" + text);
  };
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(text, context.get());
  if (!module)
    return failure("parsing failed");
  std::optional<mlir::shardlin::StrategyOption> option =
      mlir::shardlin::parseStrategyOption(strategy);
  if (!option)
    return rt::Status::invalidArgument("unknown strategy '" + strategy + "'");
  mlir::shardlin::LowerShardedLinearOptions lowering;
  lowering.strategy = *option;
  lowering.fuseBlocks = fuseBlocks;
  if (mlir::failed(build(*module, lowering)))
    return failure(what);
  return rt::Status::ok();
}

} // namespace shardlin::testkit

#endif // SHARDLIN_BENCH_TESTING_COMPILECONTEXT_H
