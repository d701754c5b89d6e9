//===- MlirPch.h - The MLIR headers most compiler sources include ---------===//
//
// Precompiled once per build and reused by the compiler's libraries
// (cmake/Pch.cmake): parsing these headers is most of the time of each of
// their sources (BlockFusion.cpp: 9.9 s of CPU without, 4.1 s with). Kept
// to the headers nearly every pass includes: g++ writes the whole parse
// state (556 MB for these; 921 MB and twice the time with the LLVM and
// conversion dialects added) and every source then loads it. Upstream
// headers only, so that an edit to shardlin's own headers never rebuilds
// the precompiled header. Every source still includes what it uses; this
// header changes only how fast it compiles.
//
//===----------------------------------------------------------------------===//

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"
