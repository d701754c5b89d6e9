//===- RunnerSteps.h - The file runner's steps, one file each ---*- C++ -*-===//
//
// runProgramWithFiles (Runner.cpp) is a set of RankCallbacks around
// runProgram. Its steps: binding every rank's arguments from .npy files
// (RunnerInputs.cpp) and writing every rank's results under the output
// policy (RunnerOutputs.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_RUNTIME_LIB_TOOLING_RUNNERSTEPS_H
#define SHARDLIN_RUNTIME_LIB_TOOLING_RUNNERSTEPS_H

#include "shardlin/runtime/base/Buffer.h"
#include "shardlin/runtime/base/Status.h"
#include "shardlin/runtime/comm/Communicator.h"
#include "shardlin/runtime/exec/Execute.h"
#include "shardlin/runtime/exec/Plan.h"
#include "shardlin/runtime/program/Program.h"
#include "shardlin/runtime/tooling/Npy.h"
#include "shardlin/runtime/tooling/Runner.h"

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace shardlin::rt::detail {

/// Files read whole, once per process, and shared by the ranks that name
/// them: plain arguments, and any argument whose file is a FIFO or pipe (a
/// stream can be read only once, so the ranks of this process that shard
/// it take their chunks from the one copy). Each file is read by the first
/// rank that asks, without holding up the ranks that read other files (one
/// of them may be a FIFO whose writer is slow).
class FileCache {
public:
  /// A FIFO among the files must deliver within `streamTimeoutSeconds`.
  explicit FileCache(double streamTimeoutSeconds)
      : streamTimeoutSeconds_(streamTimeoutSeconds) {}
  double streamTimeoutSeconds() const { return streamTimeoutSeconds_; }

  /// `readBytes`, if given, is increased by the data's bytes when this call
  /// read the file (not when it came from the cache).
  Status get(const std::string &path, std::shared_ptr<const NpyArray> &out,
             uint64_t *readBytes = nullptr);

private:
  struct Entry {
    std::once_flag once;
    Status status;
    std::shared_ptr<const NpyArray> array;
  };
  const double streamTimeoutSeconds_;
  std::mutex mutex_;
  std::map<std::string, std::shared_ptr<Entry>> files_;
};

/// One argument as the plan wants it: either a cached file's data as is, or
/// this rank's chunk of a sharded (global) tensor.
struct BoundArg {
  std::shared_ptr<const NpyArray> file;
  std::vector<uint8_t> chunk;
  const void *data() const {
    return file ? static_cast<const void *>(file->data.data())
                : static_cast<const void *>(chunk.data());
  }
};

/// What the file runner keeps for one rank between binding and writing.
struct FileRank {
  std::vector<BoundArg> bound;
  /// The bytes of input files this rank read (a sharded argument: its
  /// chunk's, NpyFile::bytesRead).
  uint64_t bytesRead = 0;
  /// The results in host memory, written to the output files.
  std::vector<std::vector<uint8_t>> hostResults;
  /// On a device: the device copies of the arguments and the results.
  std::vector<Buffer> deviceArgs, deviceResults;
};

/// Allocates `bytes` of host memory for `what` (of `shape`, for messages):
/// ResourceExhausted, before trying, for more than the host has.
Status allocateHostBytes(size_t bytes, const std::vector<int64_t> &shape,
                         const std::string &what, std::vector<uint8_t> &out);

/// Binds rank plan.rank()'s arguments from the files (and, on a device,
/// uploads them once) and allocates its results.
Status bindFromFiles(const Program &program, const RunConfig &config,
                     FileCache &cache, const Plan &plan, RankDevice &device,
                     FileRank &state, RankBuffers &buffers);

/// Writes rank plan.rank()'s results under the output policy
/// (docs/robustness.md, "Outputs"), agreeing with the other ranks through
/// `agree` between the steps, so that outputs appear only if every rank
/// wrote all of its own. A sharded result whose path has no {rank} is
/// assembled from every rank's chunk and written whole by rank 0.
Status writeOutputs(const Program &program, const RunConfig &config,
                    const Plan &plan, RankDevice &device, FileRank &state,
                    const RankBuffers &buffers, Communicator &agree);

/// Refuses, before any work, an output path that another output or an input
/// also names on some rank.
Status checkOutputPaths(const Program &program, const RunConfig &config);

/// The argument and output counts and the output paths of a file run.
Status checkFileRun(const Program &program, const RunConfig &config);

/// The callbacks of a file run (Runner.h's conventions): each rank binds
/// its arguments from the files and writes its results; the state they
/// share lives as long as the callbacks.
RankCallbacks fileCallbacks(const Program &program, const RunConfig &config);

/// Whether `pattern` has "{rank}" (a path per rank).
bool isPerRankPath(const std::string &pattern);

} // namespace shardlin::rt::detail

#endif // SHARDLIN_RUNTIME_LIB_TOOLING_RUNNERSTEPS_H
