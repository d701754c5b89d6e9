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

#include "shardlin/Execution/ProgramBuilder.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <string>

namespace shardlin::testkit {

class CompileContext {
public:
  CompileContext()
      : context_(registry(), mlir::MLIRContext::Threading::DISABLED) {
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
  static mlir::DialectRegistry registry() {
    mlir::DialectRegistry r;
    mlir::shardlin::registerExecutionDialects(r);
    return r;
  }

  mlir::MLIRContext context_;
  std::string diagnostics_;
  std::unique_ptr<mlir::ScopedDiagnosticHandler> handler_;
};

} // namespace shardlin::testkit

#endif // SHARDLIN_BENCH_TESTING_COMPILECONTEXT_H
