//===- ThreadsCommunicator.h - Ranks as threads of one process --*- C++ -*-===//
//
// W ranks that are threads of one process and share host memory. Collectives
// exchange pointers through a shared rendezvous and copy directly; waits block
// on condition variables (no spinning), so W = 8 runs fine on 2 cores.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_RUNTIME_THREADSCOMMUNICATOR_H
#define SHARDLIN_RUNTIME_THREADSCOMMUNICATOR_H

#include "shardlin/runtime/Communicator.h"

#include <memory>
#include <vector>

namespace shardlin::rt {

/// Creates the W communicators of one threads group; element r is rank r's.
/// Each must be used by exactly one thread at a time. The group's shared
/// state lives as long as any of them. worldSize must be >= 1.
std::vector<std::unique_ptr<Communicator>>
createThreadsGroup(int worldSize, const CommOptions &options = CommOptions());

} // namespace shardlin::rt

#endif // SHARDLIN_RUNTIME_THREADSCOMMUNICATOR_H
