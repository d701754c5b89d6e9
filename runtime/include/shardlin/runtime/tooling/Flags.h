//===- Flags.h - The run options' flags of the tools ------------*- C++ -*-===//
//
// shardlin-run and shardlin-exec take the same run options as flags
// (--world-size, --backend, --device, --blas-threads, --timeout). The
// runtime's errors name an option by its API name (Status::subject) in the
// runtime's own words; the tools tell the user which flag and value it
// came from, here, in one place.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_RUNTIME_TOOLING_FLAGS_H
#define SHARDLIN_RUNTIME_TOOLING_FLAGS_H

#include "shardlin/runtime/base/Status.h"
#include "shardlin/runtime/exec/Execute.h"

#include <string>

namespace shardlin::rt {

/// The flag and value `options` had for the subject of `status`, e.g.
/// "--world-size=3"; "" for a status without a subject.
std::string flagOf(const Status &status, const RunOptions &options);

/// The message of `status` as a tool prints it: "--world-size=3: the
/// requested world size 3 does not match ..." when the status is about one
/// of the run options, else its message.
std::string flagMessage(const Status &status, const RunOptions &options);

/// The run options' checks a tool makes right after parsing its flags,
/// before any per-rank work (checkRunOptions, and the backend's name): a bad
/// value fails at once, however large, with the flag named.
Status checkRunFlags(const RunOptions &options);

} // namespace shardlin::rt

#endif // SHARDLIN_RUNTIME_TOOLING_FLAGS_H
