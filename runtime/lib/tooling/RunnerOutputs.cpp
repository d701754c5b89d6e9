//===- RunnerOutputs.cpp - Writing every rank's results to .npy files -----===//
//
// The file runner's finish step (RunnerSteps.h), under the output policy of
// docs/robustness.md ("Outputs"). Each rank goes through the steps of
// NpyOutputs (Npy.h) and the ranks agree after each one, so that a failure
// on any rank, at any step, leaves no new or changed regular file:
//   1. the results in host memory (a sharded result written whole is
//      gathered to rank 0 first);
//   2. every output staged (regular files: complete temporaries);
//   3. the in-place destinations (FIFOs, pipes, devices) written;
//   4. the temporaries renamed into place; a rank whose renames failed, or
//      that got a signal meanwhile, makes every rank put its files back.
//
//===----------------------------------------------------------------------===//

#include "tooling/RunnerSteps.h"

#include "shardlin/runtime/base/ChunkLayout.h"

#include "backends/LaunchEnv.h"

#include <sys/stat.h>

#include <set>

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

/// How a sharded result's chunks lie in the global tensor: rank r's chunk
/// is `outer` pieces of `rows[r].size * inner` elements.
struct ChunkGeometry {
  int64_t outer = 1, inner = 1, dimSize = 0;
  std::vector<Range> rows;

  ChunkGeometry(const ResultLayout &layout, int worldSize) {
    const std::vector<int64_t> &g = layout.globalShape;
    const size_t d = static_cast<size_t>(layout.sharding.dim);
    for (size_t k = 0; k < d; ++k)
      outer *= g[k];
    for (size_t k = d + 1; k < g.size(); ++k)
      inner *= g[k];
    dimSize = g[d];
    const ChunkLayout chunks(dimSize, layout.sharding);
    for (int r = 0; r < worldSize; ++r)
      rows.push_back(chunks.ofRank(r));
  }
  int64_t elements(int rank) const {
    return outer * rows[size_t(rank)].size * inner;
  }
};

/// Checks that this rank's result `i` is the chunk the layout gives it, and
/// on rank 0 allocates the whole tensor.
Status prepareWhole(const ResultLayout &layout, size_t i, DType dt,
                    const HostResult &mine, int rank, int worldSize,
                    std::vector<uint8_t> &whole) {
  const std::string what = "result " + std::to_string(i);
  const ChunkGeometry geo(layout, worldSize);
  std::vector<int64_t> chunk = layout.globalShape;
  chunk[size_t(layout.sharding.dim)] = geo.rows[size_t(rank)].size;
  if (mine.shape != chunk)
    return Status::internal(what + ": rank " + std::to_string(rank) +
                            " returned the shape " + formatShape(mine.shape) +
                            ", but the chunk rule gives it " +
                            formatShape(chunk) + " of the sharded result " +
                            formatShape(layout.globalShape));
  if (rank != 0)
    return Status::ok();
  int64_t n = 0;
  SHARDLIN_RETURN_IF_ERROR(
      checkedNumElements(layout.globalShape, n, dtypeSize(dt))
          .withContext(what));
  return allocateHostBytes(size_t(n) * dtypeSize(dt), layout.globalShape,
                           what + " (the whole sharded result)", whole);
}

/// Gathers every rank's chunk of a sharded result into `whole` on rank 0,
/// in the global layout: one allToAllV in which each rank sends its chunk
/// to rank 0 only, so only rank 0 holds the whole. Chunks along the outer
/// dim land in place; otherwise they land one after the other and are then
/// interleaved.
Status gatherWhole(const ResultLayout &layout, size_t i, DType dt,
                   const HostResult &mine, int rank, int worldSize,
                   Communicator &comm, std::vector<uint8_t> &whole) {
  const ChunkGeometry geo(layout, worldSize);
  const size_t w = size_t(worldSize), elt = dtypeSize(dt);
  std::vector<int64_t> sendCounts(w, 0), sendDispls(w, 0);
  std::vector<int64_t> recvCounts(w, 0), recvDispls(w, 0);
  sendCounts[0] = geo.elements(rank);
  std::vector<uint8_t> staging;
  uint8_t *recv = nullptr;
  if (rank == 0) {
    int64_t next = 0;
    for (size_t r = 0; r < w; ++r) {
      recvCounts[r] = geo.elements(int(r));
      recvDispls[r] =
          geo.outer == 1 ? geo.rows[r].offset * geo.inner : next;
      next += recvCounts[r];
    }
    recv = whole.data();
    if (geo.outer != 1) {
      SHARDLIN_RETURN_IF_ERROR(allocateHostBytes(
          whole.size(), layout.globalShape,
          "result " + std::to_string(i) + " (gathering its chunks)", staging));
      recv = staging.data();
    }
  }
  SHARDLIN_RETURN_IF_ERROR(
      comm.allToAllV(mine.data, sendCounts, sendDispls, recv, recvCounts,
                     recvDispls, dt)
          .withContext("result " + std::to_string(i) +
                       ": gathering the sharded result's chunks"));
  if (rank != 0 || geo.outer == 1)
    return Status::ok();
  for (size_t r = 0; r < w; ++r) {
    const size_t piece = size_t(geo.rows[r].size * geo.inner) * elt;
    if (piece == 0)
      continue;
    for (int64_t o = 0; o < geo.outer; ++o)
      std::memcpy(whole.data() +
                      size_t((o * geo.dimSize + geo.rows[r].offset) *
                             geo.inner) *
                          elt,
                  staging.data() + size_t(recvDispls[r]) * elt +
                      size_t(o) * piece,
                  piece);
  }
  return Status::ok();
}

} // namespace

Status writeOutputs(const Program &program, const RunConfig &config,
                    const Plan &plan, RankDevice &device, FileRank &state,
                    const RankBuffers &buffers, Communicator &agree) {
  const int rank = plan.rank(), worldSize = agree.worldSize();
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
  // A sharded result whose path has no {rank} is written whole, by rank 0.
  std::vector<size_t> gathered;
  for (size_t i = 0; i < program.resultLayouts.size(); ++i)
    if (program.resultLayouts[i].sharded &&
        !isPerRankPath(config.outPaths[i]))
      gathered.push_back(i);
  std::vector<std::vector<uint8_t>> wholes(numResults);
  for (size_t i : gathered)
    if (ready)
      ready = prepareWhole(program.resultLayouts[i], i, plan.resultType(i),
                           results[i], rank, worldSize, wholes[i]);
  if (!gathered.empty()) {
    // The gathers are collectives: every rank must be able to take part.
    SHARDLIN_RETURN_IF_ERROR(agreeOn(agree, ready));
    for (size_t i : gathered) {
      SHARDLIN_RETURN_IF_ERROR(gatherWhole(program.resultLayouts[i], i,
                                           plan.resultType(i), results[i],
                                           rank, worldSize, agree, wholes[i]));
      results[i].data = wholes[i].data();
      results[i].shape = program.resultLayouts[i].globalShape;
    }
  }

  // 2. Every output staged. The results that name one safetensors file
  // (FILE.safetensors:NAME) go into it together, staged once, where the
  // first of them would be.
  NpyOutputs outputs;
  Status staged = ready;
  std::map<std::string, std::vector<size_t>> safetensorsFiles;
  std::vector<std::string> tensorNames(numResults);
  for (size_t i = 0; i < numResults; ++i) {
    const std::string &pattern = config.outPaths[i];
    std::string file;
    if ((isPerRankPath(pattern) || rank == 0) &&
        splitSafetensorsSpec(substituteRank(pattern, rank), file,
                             tensorNames[i]))
      safetensorsFiles[file].push_back(i);
  }
  for (size_t i = 0; staged && i < numResults; ++i) {
    const std::string &pattern = config.outPaths[i];
    if (!isPerRankPath(pattern) && rank != 0)
      continue;
    const std::string path = substituteRank(pattern, rank);
    std::string file, tensor;
    if (splitSafetensorsSpec(path, file, tensor)) {
      const std::vector<size_t> &members = safetensorsFiles[file];
      if (members.front() != i)
        continue;
      std::vector<SafetensorsOutput> tensors;
      std::string label = "result";
      for (size_t m : members) {
        tensors.push_back({tensorNames[m], plan.resultType(m),
                           results[m].shape, results[m].data});
        label += (m == members.front() ? " " : ", ") + std::to_string(m);
      }
      staged = outputs.stageSafetensors(file, tensors, label);
      continue;
    }
    staged = outputs.stage(path, plan.resultType(i), results[i].shape,
                           results[i].data, "result " + std::to_string(i));
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
    bool safetensors = false;
    std::string tensor;
  };
  std::map<std::string, Use> seen;
  std::set<std::string> tensors;
  auto record = [&](const std::string &pattern, bool output, size_t index,
                    int rank) -> Status {
    std::string path = substituteRank(pattern, rank);
    // A tensor of a safetensors file: the file is what is read or written.
    std::string file, tensor;
    const bool safetensors = splitSafetensorsSpec(path, file, tensor);
    const std::string identity = fileIdentity(safetensors ? file : path);
    auto [it, fresh] = seen.emplace(
        identity, Use{output, index, rank, path, safetensors, tensor});
    const bool newTensor =
        !output || !safetensors ||
        tensors
            .insert(identity + "\n" + std::to_string(rank) + "\n" + tensor)
            .second;
    if (fresh || !output)
      return Status::ok();
    const Use &first = it->second;
    // Results of one rank may share a safetensors file, each its tensor.
    if (first.output && safetensors && first.safetensors &&
        first.rank == rank) {
      if (newTensor)
        return Status::ok();
      return Status::invalidArgument(
          "--out '" + path + "' (result " + std::to_string(index) +
          ") names the tensor '" + tensor + "' of '" + file +
          "' that another result writes: each result needs a tensor of "
          "its own");
    }
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
    // A checkpoint named without a tensor would get a .npy file's bytes.
    const std::string &out = config.outPaths[i];
    if (isSafetensorsFileName(out))
      return Status::invalidArgument(
          "--out '" + out + "' (result " + std::to_string(i) +
          ") names a safetensors file but no tensor in it: write '" + out +
          ":NAME' (a path without :NAME is written as one .npy array)");
    // Only rank 0 writes an output without {rank}.
    bool perRank = config.outPaths[i].find("{rank}") != std::string::npos;
    for (int r = 0; r < (perRank ? w : 1); ++r)
      SHARDLIN_RETURN_IF_ERROR(record(config.outPaths[i], true, i, r));
  }
  return Status::ok();
}


} // namespace shardlin::rt::detail
