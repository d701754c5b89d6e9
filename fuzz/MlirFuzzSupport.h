//===- MlirFuzzSupport.h - What the MLIR fuzz targets share -----*- C++ -*-===//
//
// The error diagnostics of one pass run, and a module printed for a failure
// report, for the fuzz targets that parse MLIR (MlirFuzzer.cpp,
// ImportFuzzer.cpp). FuzzSupport.h holds the MLIR-free rest.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDLIN_FUZZ_MLIRFUZZSUPPORT_H
#define SHARDLIN_FUZZ_MLIRFUZZSUPPORT_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/raw_ostream.h"

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
      os, mlir::OpPrintingFlags().printGenericOpForm().elideLargeElementsAttrs());
  if (s.size() > 20000)
    s.resize(20000);
  return s;
}

} // namespace shardlin::fuzz

#endif // SHARDLIN_FUZZ_MLIRFUZZSUPPORT_H
