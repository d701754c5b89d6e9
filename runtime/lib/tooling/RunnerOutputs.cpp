//===- RunnerOutputs.cpp - Writing every rank's results to .npy files -----===//
//
// The file runner's finish step (RunnerSteps.h), under the output policy of
// docs/robustness.md ("Outputs"). Each rank goes through the steps of
// NpyOutputs (Npy.h) and the ranks agree after each one, so that a failure
// on any rank, at any step, leaves no new or changed regular file:
//   1. the results in host memory;
//   2. every output staged (regular files: complete temporaries);
//   3. the in-place destinations (FIFOs, pipes, devices) written;
//   4. the temporaries renamed into place; a rank whose renames failed, or
//      that got a signal meanwhile, makes every rank put its files back.
//
//===----------------------------------------------------------------------===//

#include "tooling/RunnerSteps.h"

#include "backends/mpi/LaunchEnv.h"

#include <sys/stat.h>

#include <cstdlib>
#include <cstring>

namespace shardlin::rt::detail {

namespace {

const char *const kAnotherRankFailed =
    "no output written because another rank failed to write its outputs";

/// One agreement: every rank says whether `mine` failed. Returns this
/// rank's own failure first, then the agreement's, then Aborted if another
/// rank failed.
Status agreeOn(Communicator &agree, const Status &mine) {
  double failed = mine ? 0.0 : 1.0;
  Status agreed = agree.allReduce(&failed, &failed, 1, DType::F64);
  if (!mine)
    return mine;
  SHARDLIN_RETURN_IF_ERROR(agreed);
  if (failed > 0)
    return Status::aborted(kAnotherRankFailed);
  return Status::ok();
}

/// Result `i` of this rank as it is written: its host data and shape.
struct HostResult {
  const void *data = nullptr;
  std::vector<int64_t> shape;
};

Status hostResultOf(const Plan &plan, size_t i, const FileRank &state,
                    const RankBuffers &buffers, HostResult &out) {
  out.data = state.hostResults[i].data();
  out.shape = plan.resultShape(i);
  if (!hasDynamicDim(out.shape))
    return Status::ok();
  // A compiled program's result that its run sized (RankBuffers).
  if (i >= buffers.resultShapes.size() ||
      buffers.resultShapes[i].size() != out.shape.size())
    return Status::internal("result " + std::to_string(i) +
                            " has the shape " + formatShape(out.shape) +
                            ", but its run gave no size for it");
  out.data = buffers.results[i];
  out.shape = buffers.resultShapes[i];
  return Status::ok();
}

} // namespace

Status writeOutputs(const Program &, const RunConfig &config,
                    const Plan &plan, RankDevice &device, FileRank &state,
                    const RankBuffers &buffers, Communicator &agree) {
  const int rank = plan.rank();
  const size_t numResults = state.hostResults.size();
  // 1. The results in host memory. A failed copy back (or a device fault
  // it reveals) is a failure to write this rank's outputs, agreed on like
  // one.
  Status ready = Status::ok();
  for (size_t i = 0; ready && i < state.deviceResults.size(); ++i)
    ready = device
                .copyToHost(state.hostResults[i].data(),
                            state.deviceResults[i].data(),
                            state.hostResults[i].size())
                .withContext("result " + std::to_string(i));
  std::vector<HostResult> results(numResults);
  for (size_t i = 0; ready && i < numResults; ++i)
    ready = hostResultOf(plan, i, state, buffers, results[i]);

  // 2. Every output staged.
  NpyOutputs outputs;
  Status staged = ready;
  for (size_t i = 0; staged && i < numResults; ++i) {
    const std::string &pattern = config.outPaths[i];
    if (!isPerRankPath(pattern) && rank != 0)
      continue;
    staged = outputs.stage(substituteRank(pattern, rank), plan.resultType(i),
                           results[i].shape, results[i].data,
                           "result " + std::to_string(i));
  }
  SHARDLIN_RETURN_IF_ERROR(agreeOn(agree, staged));
  // 3. The destinations written in place, before any file is renamed: one
  // that fails then leaves no regular output changed.
  SHARDLIN_RETURN_IF_ERROR(
      agreeOn(agree, outputs.writeInPlace(config.comm.timeoutSeconds)));
  // 4. The renames, kept only if every rank made all of its own and no
  // signal came meanwhile (the signal is held until the files are kept or
  // put back, then ends the process).
  Status committed = outputs.commit();
  if (committed)
    if (const int sig = outputs.interrupted())
      committed = Status::aborted("interrupted by signal " +
                                  std::to_string(sig) + " (" +
                                  strsignal(sig) + ")");
  Status agreed = agreeOn(agree, committed);
  if (!agreed) {
    Status undone = outputs.undo();
    if (!undone)
      return Status::error(agreed.code(),
                    agreed.message() + "; putting the files back: " +
                        undone.message());
    return agreed;
  }
  outputs.keep();
  return Status::ok();
}

namespace {

/// What a path names, for telling whether two paths are one file: the
/// device and inode of an existing file, else the absolute path of the
/// parent directory it would be created in, and its name.
std::string fileIdentity(const std::string &path) {
  struct stat st;
  if (::stat(path.c_str(), &st) == 0)
    return "inode " + std::to_string(st.st_dev) + ":" +
           std::to_string(st.st_ino);
  size_t slash = path.find_last_of('/');
  std::string dir = slash == std::string::npos ? "." : path.substr(0, slash);
  std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  if (dir.empty())
    dir = "/";
  char *real = ::realpath(dir.c_str(), nullptr);
  if (!real)
    return "path " + path;
  std::string identity = "path " + std::string(real) + "/" + name;
  std::free(real);
  return identity;
}

} // namespace

/// Refuses, before any work, an output path that another output or an
/// input also names on some rank: the second write would replace the first
/// result, or the input, without a word.
Status checkOutputPaths(const Program &program, const RunConfig &config) {
  int w = config.worldSize;
  if (w <= 0)
    w = static_cast<int>(program.worldSize);
  if (w <= 0)
    w = detail::launchEnvironment().worldSize;
  if (w <= 0)
    w = 1;
  struct Use {
    bool output;
    size_t index;
    int rank;
    std::string path;
  };
  std::map<std::string, Use> seen;
  auto record = [&](const std::string &pattern, bool output, size_t index,
                    int rank) -> Status {
    std::string path = substituteRank(pattern, rank);
    auto [it, fresh] =
        seen.emplace(fileIdentity(path), Use{output, index, rank, path});
    if (fresh || !output)
      return Status::ok();
    const Use &first = it->second;
    std::string what = "--out '" + path + "' (result " +
                       std::to_string(index) +
                       (pattern.find("{rank}") != std::string::npos
                            ? ", rank " + std::to_string(rank)
                            : std::string()) +
                       ")";
    if (!first.output)
      return Status::invalidArgument(
          what + " names the input of argument " + std::to_string(first.index) +
          " ('" + first.path + "'): writing it would replace the input");
    return Status::invalidArgument(
        what + " names the same file as the output of result " +
        std::to_string(first.index) +
        (first.rank != rank || first.index == index
             ? " on rank " + std::to_string(first.rank)
             : std::string()) +
        " ('" + first.path + "'): each result needs a file of its own");
  };
  // Inputs first, so an output that names one is reported as such; every
  // rank reads a path without {rank}.
  for (size_t i = 0; i < config.argPaths.size(); ++i)
    for (int r = 0; r < w; ++r)
      SHARDLIN_RETURN_IF_ERROR(record(config.argPaths[i], false, i, r));
  for (size_t i = 0; i < config.outPaths.size(); ++i) {
    // Only rank 0 writes an output without {rank}.
    bool perRank = config.outPaths[i].find("{rank}") != std::string::npos;
    for (int r = 0; r < (perRank ? w : 1); ++r)
      SHARDLIN_RETURN_IF_ERROR(record(config.outPaths[i], true, i, r));
  }
  return Status::ok();
}


} // namespace shardlin::rt::detail
