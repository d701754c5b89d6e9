//===- ProgramText.h - A program's text form ----------------------*- C++ -*-===//
//
// The text form of a program ("shardlin-program v1"), so that a program
// compiled on one machine (shardlin-run --emit-program) runs on another that
// has only the runtime (shardlin-exec). docs/runtime.md describes it.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_RUNTIME_PROGRAM_PROGRAMTEXT_H
#define SHARDLIN_RUNTIME_PROGRAM_PROGRAMTEXT_H

#include "shardlin/runtime/base/Status.h"
#include "shardlin/runtime/program/Program.h"

#include <string>

namespace shardlin::rt {

/// The program as text; parseProgram reads it back to an equal program.
std::string serializeProgram(const Program &program);

/// Reads a program's text form and validates it (Program::validate);
/// InvalidArgument, naming the line, for anything malformed.
Status parseProgram(const std::string &text, Program &out);

} // namespace shardlin::rt

#endif // SHARDLIN_RUNTIME_PROGRAM_PROGRAMTEXT_H
