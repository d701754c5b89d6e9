//===- Run.h - Running a compiled program on in-memory arrays ---*- C++ -*-===//
//
// What Program.run does once the Python arrays are described (HostArray):
// binds them to the entry's arguments of every rank (zero-copy where the
// layout allows, see docs/python.md), runs on a backend of the runtime's
// registry, and returns each rank's results in memory it allocated. No
// Python here: it runs with the GIL released.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_PYTHON_RUN_H
#define SHARDLIN_PYTHON_RUN_H

#include "Compiler.h"

#include "shardlin/runtime/base/Status.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace shardlin::python {

/// A host array as the caller holds it: the data, its shape, its strides in
/// elements, its element type. The caller keeps it alive during the run.
struct HostArray {
  const void *data = nullptr;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
  rt::DType dtype = rt::DType::F32;
  bool contiguous() const;
};

/// One entry argument: one array for every rank (a sharded argument's
/// global tensor), or one per rank.
struct ArgInput {
  bool perRank = false;
  std::vector<HostArray> arrays;
};

/// An owned, 64-byte aligned host allocation.
struct OwnedBuffer {
  explicit OwnedBuffer(size_t bytes);
  ~OwnedBuffer();
  OwnedBuffer(const OwnedBuffer &) = delete;
  OwnedBuffer &operator=(const OwnedBuffer &) = delete;
  void *data = nullptr;
  size_t bytes = 0;
};

/// One result of one rank, or an assembled sharded result.
struct ResultArray {
  std::shared_ptr<OwnedBuffer> buffer;
  std::vector<int64_t> shape;
  rt::DType dtype = rt::DType::F32;
};

struct RunRequest {
  std::vector<ArgInput> args;
  std::string backend = "threads";
  int worldSize = 0;
  int device = -1;
  double timeoutSeconds = 300.0;
  /// 0: the tools' policy (cores / ranks per host).
  int blasThreads = 0;
  bool checkReplicated = true;
  /// Assemble sharded results into global arrays (else each rank's chunk).
  bool assemble = true;
};

/// What a run did besides its results (for tests and docs/python.md's
/// copy rules): per rank, per argument, the host address it bound and
/// whether that was a copy the binding made.
struct BindInfo {
  std::vector<std::vector<uintptr_t>> addresses;
  std::vector<std::vector<bool>> copied;
};

struct RunOutcome {
  rt::Status status;
  /// results[r][i]: rank r's result i (this process's ranks only).
  std::vector<std::vector<ResultArray>> results;
  /// With RunRequest::assemble: result i assembled (a sharded result's
  /// global tensor, a plain result rank 0's), on every rank of this process.
  std::vector<ResultArray> assembled;
  /// The ranks of this process, in results' order.
  std::vector<int> ranks;
  BindInfo bind;
  bool interrupted = false;
};

/// Runs `compiled` as `request` says. Interruption: while it runs, SIGINT
/// (on the thread that called it, when that is the main thread) makes every
/// rank fail at its next collective; `outcome.interrupted` then says so.
void runCompiled(const Compiled &compiled, const RunRequest &request,
                 RunOutcome &outcome);

/// Ends the process's MPI session, if a run started one (at exit).
void finalizeMpi();

} // namespace shardlin::python

#endif
