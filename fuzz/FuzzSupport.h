//===- FuzzSupport.h - Checks shared by the fuzz targets --------*- C++ -*-===//
//
// What the fuzz targets do with a Program once they have one, whether it was
// parsed from text (the program target) or translated from lowered IR (the
// mlir target): the checks shardlin-exec's path relies on.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_FUZZ_FUZZSUPPORT_H
#define SHARDLIN_FUZZ_FUZZSUPPORT_H

#include "shardlin/runtime/program/Program.h"

#include <string>

namespace shardlin::fuzz {

/// Prints `what` if SHARDLIN_FUZZ_VERBOSE is set (for reading what an input
/// does: `SHARDLIN_FUZZ_VERBOSE=1 shardlin-fuzz-X FILE`).
void note(const std::string &what);

/// Reports a property violation as a fuzzer crash: prints `what` and aborts.
[[noreturn]] void fail(const std::string &what);

/// For a program that validates:
///   1. its text form parses back to a program with the same text form;
///   2. Plan::build succeeds or fails cleanly on every rank (all ranks for
///      small world sizes, a sample for large ones), for the program's world
///      size or, if it has none, for W = 1 and W = 3;
///   3. if every rank built a plan and it is small, the plan runs on the
///      threads backend with inputs of the planned shapes.
/// Allocations go through a budgeted allocator, so a program that is valid
/// but huge fails to build instead of exhausting memory.
void checkProgram(const rt::Program &program);

} // namespace shardlin::fuzz

#endif // SHARDLIN_FUZZ_FUZZSUPPORT_H
