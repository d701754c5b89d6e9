//===- MlirFuzzSupport.h - What the MLIR fuzz targets share -----*- C++ -*-===//
//
// The error diagnostics of one pass run, and a module printed for a failure
// report, for the fuzz targets that parse MLIR (MlirFuzzer.cpp,
// ImportFuzzer.cpp). FuzzSupport.h holds the MLIR-free rest.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDLIN_FUZZ_MLIRFUZZSUPPORT_H
#define SHARDLIN_FUZZ_MLIRFUZZSUPPORT_H

#include "FuzzSupport.h"

#include "shardlin/Conversion/ShardToShardlin/ShardToShardlin.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/raw_ostream.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace shardlin::fuzz {

/// Counts errors and keeps the first few messages for a failure report.
struct Diagnostics {
  int errors = 0;
  std::string text;
  void record(mlir::Diagnostic &d) {
    if (d.getSeverity() != mlir::DiagnosticSeverity::Error)
      return;
    ++errors;
    if (text.size() < 4000)
      text += "  error: " + d.str() + "\n";
  }
};

/// `module` in the generic form, cut at 20,000 characters.
inline std::string printModule(mlir::ModuleOp module) {
  std::string s;
  llvm::raw_string_ostream os(s);
  module->print(
      os,
      mlir::OpPrintingFlags().printGenericOpForm().elideLargeElementsAttrs());
  if (s.size() > 20000)
    s.resize(20000);
  return s;
}

/// One input's context: a fresh MLIRContext (uniqued types and attributes
/// would otherwise accumulate for the whole run) whose errors go to `diags`.
struct FuzzContext {
  explicit FuzzContext(const mlir::DialectRegistry &registry)
      : context(registry, mlir::MLIRContext::Threading::DISABLED),
        handler(&context, [this](mlir::Diagnostic &d) {
          diags.record(d);
          return mlir::success();
        }) {}

  /// The input as a module that verifies, or null (the input is not one,
  /// or is text upstream's parser crashes on); `diags` is reset after it.
  mlir::OwningOpRef<mlir::ModuleOp> parse(const uint8_t *data, size_t size) {
    std::string text(reinterpret_cast<const char *>(data), size);
    // Text upstream's parser crashes on (ImportShard.h) is skipped.
    if (mlir::shardlin::findUpstreamParserCrash(text))
      return nullptr;
    mlir::OwningOpRef<mlir::ModuleOp> module =
        mlir::parseSourceString<mlir::ModuleOp>(text,
                                                mlir::ParserConfig(&context));
    if (!module || mlir::failed(mlir::verify(*module)))
      return nullptr;
    diags = Diagnostics();
    return module;
  }

  mlir::MLIRContext context;
  Diagnostics diags;
  mlir::ScopedDiagnosticHandler handler;
};

} // namespace shardlin::fuzz

#endif // SHARDLIN_FUZZ_MLIRFUZZSUPPORT_H
