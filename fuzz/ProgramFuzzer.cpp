//===- ProgramFuzzer.cpp - libFuzzer target: the program text form --------===//
//
// What shardlin-exec does with an untrusted program file: parseProgram, then
// Plan::build on every rank (and, for small programs, a run on the threads
// backend). See FuzzSupport.h for the checks. Run with -rss_limit_mb=2048
// -malloc_limit_mb=1024: no input may make the parser or the planner
// allocate without bound.
//
//===----------------------------------------------------------------------===//

#include "FuzzSupport.h"

#include "shardlin/runtime/backends/Host.h"
#include "shardlin/runtime/program/ProgramText.h"
#include "shardlin/runtime/exec/Gemm.h"
#include "shardlin/runtime/program/Program.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace rt = shardlin::rt;

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  rt::setBlasThreads(1);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  rt::Program program;
  rt::Status s = rt::parseProgram(text, program);
  if (!s) {
    if (s.message().empty())
      shardlin::fuzz::fail("parseProgram failed without a message");
    shardlin::fuzz::note("parseProgram: " + s.message());
    return 0;
  }
  rt::Status valid = program.validate();
  if (!valid)
    shardlin::fuzz::fail("parseProgram accepted a program that does not "
                         "validate: " +
                         valid.message());
  shardlin::fuzz::checkProgram(program);
  return 0;
}
