//===- Runner.cpp - Run a program on every rank with .npy files -----------===//

#include "shardlin/runtime/backends/Registry.h"
#include "shardlin/runtime/tooling/Runner.h"

#include "shardlin/runtime/base/ChunkLayout.h"
#include "shardlin/runtime/tooling/Npy.h"
#include "shardlin/runtime/exec/Plan.h"

#include "backends/mpi/LaunchEnv.h"

#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <new>

#include <sys/stat.h>
#include <unistd.h>

namespace shardlin::rt {

std::string substituteRank(const std::string &path, int rank) {
  std::string out;
  const std::string key = "{rank}";
  size_t pos = 0;
  while (true) {
    size_t hit = path.find(key, pos);
    if (hit == std::string::npos) {
      out += path.substr(pos);
      return out;
    }
    out += path.substr(pos, hit - pos) + std::to_string(rank);
    pos = hit + key.size();
  }
}

void extractLocalChunk(const void *global,
                       const std::vector<int64_t> &globalShape, DType dtype,
                       const ChunkSpec &spec, int rank,
                       std::vector<uint8_t> &out) {
  // The chunk is `outer` rows of `size * inner` elements: [outer, n, inner].
  const int64_t d = spec.dim;
  int64_t outer = 1, inner = 1;
  for (int64_t k = 0; k < d; ++k)
    outer *= globalShape[k];
  for (size_t k = d + 1; k < globalShape.size(); ++k)
    inner *= globalShape[k];
  ChunkLayout layout(globalShape[d], spec.placements);
  Range r = layout.ofRank(rank);
  const size_t elt = dtypeSize(dtype);
  const size_t rowBytes = r.size * inner * elt;
  const auto *src = static_cast<const uint8_t *>(global);
  out.resize(outer * rowBytes);
  for (int64_t o = 0; o < outer; ++o)
    if (rowBytes)
      std::memcpy(out.data() + o * rowBytes,
                  src + (o * globalShape[d] + r.offset) * inner * elt,
                  rowBytes);
}

namespace {

/// Files of plain (not sharded) arguments, read once per process and shared
/// by the ranks that name them. Each file is read by the first rank that
/// asks, without holding up the ranks that read other files (one of them
/// may be a FIFO whose writer is slow).
class FileCache {
public:
  /// A FIFO among the files must deliver within `streamTimeoutSeconds`.
  explicit FileCache(double streamTimeoutSeconds)
      : streamTimeoutSeconds_(streamTimeoutSeconds) {}
  double streamTimeoutSeconds() const { return streamTimeoutSeconds_; }

  Status get(const std::string &path, std::shared_ptr<const NpyArray> &out) {
    std::shared_ptr<Entry> e;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      std::shared_ptr<Entry> &slot = files_[path];
      if (!slot)
        slot = std::make_shared<Entry>();
      e = slot;
    }
    std::call_once(e->once, [&] {
      auto array = std::make_shared<NpyArray>();
      e->status = readNpy(path, *array, streamTimeoutSeconds_);
      e->array = std::move(array);
    });
    if (!e->status)
      return e->status;
    out = e->array;
    return Status::ok();
  }

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

/// One argument as the plan wants it: either the file's data as is, or this
/// rank's chunk of a sharded (global) tensor.
struct BoundArg {
  std::shared_ptr<const NpyArray> file;
  std::vector<uint8_t> chunk;
  const void *data() const {
    return file ? static_cast<const void *>(file->data.data())
                : static_cast<const void *>(chunk.data());
  }
};

/// Binds sharded argument `i` from `path`. A file of the global shape is
/// the global tensor, of which only this rank's chunk is read
/// (NpyFile::readSlice). With `perRankPath` (a {rank} path) the file may
/// instead be a shard that holds exactly this rank's chunk. (Where the chunk
/// is the whole dim the two shapes agree, and so do the bytes.)
Status bindShardedArgument(const Program &program, const Plan &plan, size_t i,
                           const std::string &path, bool perRankPath,
                           double streamTimeoutSeconds, BoundArg &out) {
  const Argument &arg = program.args[i];
  const DType dt = plan.argType(i);
  const std::string what = "argument " + std::to_string(i) + " (" + path + ")";
  std::unique_ptr<NpyFile> file;
  // The reader's messages name the file already.
  SHARDLIN_RETURN_IF_ERROR(
      NpyFile::open(path, file, streamTimeoutSeconds)
          .withContext("argument " + std::to_string(i)));
  if (file->descr() != npyDescr(dt))
    return Status::invalidArgument(what + ": element type '" + file->descr() +
                         "' does not match the entry signature's " +
                         dtypeName(dt) + " (expected '" + npyDescr(dt) + "')");
  const int64_t d = arg.sharding.dim;
  const std::vector<int64_t> &global = arg.globalShape;
  const Range mine = ChunkLayout(global[size_t(d)], arg.sharding.placements)
                         .ofRank(plan.rank());
  if (file->shape() == global)
    return file->readSlice(d, mine, out.chunk)
        .withContext("argument " + std::to_string(i));
  if (!perRankPath)
    return Status::invalidArgument(what + ": shape " + formatShape(file->shape()) +
                         " does not match the entry signature's " +
                         formatShape(global) +
                         " (the global shape of a sharded argument; a "
                         "path with {rank} may name each rank's chunk "
                         "instead)");
  std::vector<int64_t> chunk = global;
  chunk[size_t(d)] = mine.size;
  if (file->shape() != chunk) {
    const std::string r = std::to_string(plan.rank());
    return Status::invalidArgument(
        what + ": rank " + r + "'s shard has shape " +
        formatShape(file->shape()) + ", but the chunk rule gives rank " + r +
        " the shape " + formatShape(chunk) + " (rows [" +
        std::to_string(mine.offset) + ", " +
        std::to_string(mine.offset + mine.size) + ") of dim " +
        std::to_string(d) + " of the global " + formatShape(global) +
        "; a file of the global shape is read as the global tensor)");
  }
  return file->readAll(out.chunk).withContext("argument " +
                                              std::to_string(i));
}

Status bindArgument(const Program &program, const Plan &plan, size_t i,
                    const std::string &pattern, FileCache &cache,
                    BoundArg &out) {
  const Argument &arg = program.args[i];
  const std::string path = substituteRank(pattern, plan.rank());
  if (arg.sharded)
    return bindShardedArgument(program, plan, i, path,
                               pattern.find("{rank}") != std::string::npos,
                               cache.streamTimeoutSeconds(), out);
  DType dt = plan.argType(i);
  std::string what = "argument " + std::to_string(i) + " (" + path + ")";
  std::shared_ptr<const NpyArray> file;
  // The reader's messages name the file already.
  SHARDLIN_RETURN_IF_ERROR(
      cache.get(path, file).withContext("argument " + std::to_string(i)));
  if (file->descr != npyDescr(dt))
    return Status::invalidArgument(what + ": element type '" + file->descr +
                         "' does not match the entry signature's " +
                         dtypeName(dt) + " (expected '" + npyDescr(dt) + "')");
  const std::vector<int64_t> &want = plan.argShape(i);
  if (file->shape != want)
    return Status::invalidArgument(what + ": shape " + formatShape(file->shape) +
                         " does not match the entry signature's " +
                         formatShape(want));
  out.file = std::move(file);
  return Status::ok();
}

/// Sizes and allocates the host buffer of result `i` of `plan`.
Status allocateHostResult(const Plan &plan, size_t i,
                          std::vector<uint8_t> &out) {
  int64_t n = 0;
  const size_t elt = dtypeSize(plan.resultType(i));
  SHARDLIN_RETURN_IF_ERROR(checkedNumElements(plan.resultShape(i), n, elt)
                               .withContext("result " + std::to_string(i)));
  const size_t bytes = static_cast<size_t>(n) * elt;
  const Status noMemory = Status::invalidArgument(
      "result " + std::to_string(i) + ": cannot allocate " +
      std::to_string(bytes) + " bytes of host memory for shape " +
      formatShape(plan.resultShape(i)));
  // More than the host's memory cannot work: say so before trying. (The
  // zero-filled buffer would be touched in full; and under
  // AddressSanitizer a failed allocation ends the process instead of
  // throwing std::bad_alloc.)
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long pageSize = ::sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && pageSize > 0 &&
      bytes / static_cast<uint64_t>(pageSize) >= static_cast<uint64_t>(pages))
    return Status::resourceExhausted("result " + std::to_string(i) + " of shape " +
                         formatShape(plan.resultShape(i)) + " needs " +
                         std::to_string(bytes) +
                         " bytes, more than this host's memory (" +
                         std::to_string(static_cast<uint64_t>(pages) *
                                        static_cast<uint64_t>(pageSize)) +
                         " bytes)");
  try {
    out.resize(bytes);
  } catch (const std::bad_alloc &) {
    return noMemory;
  }
  return Status::ok();
}


/// What the file runner keeps for one rank between binding and writing.
struct FileRank {
  std::vector<BoundArg> bound;
  /// The results in host memory, staged into the output files.
  std::vector<std::vector<uint8_t>> hostResults;
  /// On a device: the device copies of the arguments and the results.
  std::vector<Buffer> deviceArgs, deviceResults;
};

/// Binds rank plan.rank()'s arguments from the files (and, on a device,
/// uploads them once) and allocates its results.
Status bindFromFiles(const Program &program, const RunConfig &config,
                     FileCache &cache, const Plan &plan, RankDevice &device,
                     FileRank &state, RankBuffers &buffers) {
  const bool onHost = device.kind() == DeviceKind::Host;
  state.bound.resize(program.args.size());
  for (size_t i = 0; i < program.args.size(); ++i) {
    SHARDLIN_RETURN_IF_ERROR(bindArgument(program, plan, i,
                                          config.argPaths[i], cache,
                                          state.bound[i]));
    if (onHost) {
      buffers.args.push_back(state.bound[i].data());
      continue;
    }
    // The plan checked that every shape's bytes fit.
    int64_t n = 0;
    const size_t elt = dtypeSize(plan.argType(i));
    SHARDLIN_RETURN_IF_ERROR(checkedNumElements(plan.argShape(i), n, elt));
    const size_t bytes = static_cast<size_t>(n) * elt;
    const std::string what = "argument " + std::to_string(i);
    Buffer copy;
    SHARDLIN_RETURN_IF_ERROR(Buffer::allocate(device.allocator(), bytes, copy)
                                 .withContext(what));
    SHARDLIN_RETURN_IF_ERROR(
        device.copyFromHost(copy.data(), state.bound[i].data(), bytes)
            .withContext(what));
    buffers.args.push_back(copy.data());
    state.deviceArgs.push_back(std::move(copy));
  }
  // The results' host buffers, allocated before the agreement too: a result
  // too large for this host is then a clean error on every rank, not a
  // std::bad_alloc (which ends the process) in the middle of the run.
  state.hostResults.resize(program.results.size());
  for (size_t i = 0; i < state.hostResults.size(); ++i) {
    // A compiled program's result that its run sizes: the run hands it over
    // (RankBuffers::resultShapes), on host memory (wrapContext's rule).
    if (hasDynamicDim(plan.resultShape(i))) {
      buffers.results.push_back(nullptr);
      continue;
    }
    SHARDLIN_RETURN_IF_ERROR(allocateHostResult(plan, i, state.hostResults[i]));
    if (onHost) {
      buffers.results.push_back(state.hostResults[i].data());
      continue;
    }
    Buffer result;
    SHARDLIN_RETURN_IF_ERROR(
        Buffer::allocate(device.allocator(), state.hostResults[i].size(),
                         result)
            .withContext("result " + std::to_string(i)));
    buffers.results.push_back(result.data());
    state.deviceResults.push_back(std::move(result));
  }
  return Status::ok();
}

/// Writes rank plan.rank()'s results. Outputs appear only if every rank
/// wrote all of its own: each rank stages its files under temporary names,
/// the ranks agree, then rename.
Status writeOutputs(const RunConfig &config, const Plan &plan,
                    RankDevice &device, FileRank &state,
                    const RankBuffers &buffers, Communicator &agree) {
  const int rank = plan.rank();
  // A failed copy back (or a device fault it reveals) is a failure to write
  // this rank's outputs, agreed on below like one.
  Status staged = Status::ok();
  for (size_t i = 0; staged && i < state.deviceResults.size(); ++i)
    staged = device
                 .copyToHost(state.hostResults[i].data(),
                             state.deviceResults[i].data(),
                             state.hostResults[i].size())
                 .withContext("result " + std::to_string(i));
  std::vector<std::unique_ptr<PendingNpy>> pending;
  for (size_t i = 0; staged && i < state.hostResults.size(); ++i) {
    const std::string &pattern = config.outPaths[i];
    bool perRank = pattern.find("{rank}") != std::string::npos;
    if (!perRank && rank != 0)
      continue;
    const void *data = state.hostResults[i].data();
    const std::vector<int64_t> *shape = &plan.resultShape(i);
    if (hasDynamicDim(*shape)) {
      if (i >= buffers.resultShapes.size() ||
          buffers.resultShapes[i].size() != shape->size()) {
        staged = Status::internal("result " + std::to_string(i) +
                                  " has the shape " + formatShape(*shape) +
                                  ", but its run gave no size for it");
        break;
      }
      data = buffers.results[i];
      shape = &buffers.resultShapes[i];
    }
    std::unique_ptr<PendingNpy> file;
    staged = PendingNpy::stage(substituteRank(pattern, rank),
                               plan.resultType(i), *shape, data, file)
                 .withContext("result " + std::to_string(i));
    pending.push_back(std::move(file));
  }
  double writeFailed = staged ? 0.0 : 1.0;
  SHARDLIN_RETURN_IF_ERROR(
      agree.allReduce(&writeFailed, &writeFailed, 1, DType::F64));
  if (!staged)
    return staged;
  if (writeFailed > 0)
    return Status::aborted("no output written because another rank "
                           "failed to write its outputs");
  for (std::unique_ptr<PendingNpy> &file : pending)
    SHARDLIN_RETURN_IF_ERROR(file->commit());
  return Status::ok();
}

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

} // namespace

Status runProgramWithFiles(const Program &program, const RunConfig &config,
                           std::vector<RankResult> *ranks) {
  // The options' ranges before any per-rank work (a world size of a
  // million would otherwise check a million paths first).
  SHARDLIN_RETURN_IF_ERROR(checkRunOptions(config));
  if (config.argPaths.size() != program.args.size())
    return Status::invalidArgument(
        "the entry '" + program.name + "' takes " +
        std::to_string(program.args.size()) + " argument(s) but " +
        std::to_string(config.argPaths.size()) + " --arg were given");
  if (config.outPaths.size() != program.results.size())
    return Status::invalidArgument(
        "the entry '" + program.name + "' returns " +
        std::to_string(program.results.size()) + " result(s) but " +
        std::to_string(config.outPaths.size()) + " --out were given");
  SHARDLIN_RETURN_IF_ERROR(checkOutputPaths(program, config));
  // What the callbacks use, owned by them: a rank that is given up on
  // (abandonLateRanks, below) may still be in bind after this returns.
  struct FileRun {
    FileRun(const Program &program, const RunConfig &config)
        : program(program), config(config),
          cache(config.comm.timeoutSeconds) {}
    const Program program;
    const RunConfig config;
    FileCache cache;
    std::mutex mutex;
    std::map<int, FileRank> states; // Nodes stay put while ranks insert.
    FileRank &stateOf(int rank) {
      std::lock_guard<std::mutex> lock(mutex);
      return states[rank];
    }
  };
  auto run = std::make_shared<FileRun>(program, config);
  RankCallbacks callbacks;
  // Dynamic dims (run-time batch sizes) come from the .npy headers of each
  // rank's files; the plan then checks every dim again when it binds them.
  callbacks.argShapes = [run](int rank,
                              std::vector<std::vector<int64_t>> &shapes,
                              std::vector<std::string> &names) {
    const Program &program = run->program;
    shapes.assign(program.args.size(), {});
    names.assign(program.args.size(), {});
    for (const DynamicDim &d : dynamicArgDims(program)) {
      if (!shapes[d.arg].empty())
        continue;
      names[d.arg] = substituteRank(run->config.argPaths[d.arg], rank);
      std::shared_ptr<const NpyArray> file;
      SHARDLIN_RETURN_IF_ERROR(run->cache.get(names[d.arg], file).withContext(
          "argument " + std::to_string(d.arg)));
      shapes[d.arg] = file->shape;
    }
    return Status::ok();
  };
  callbacks.bind = [run](const Plan &plan, RankDevice &device,
                         RankBuffers &buffers) {
    return bindFromFiles(run->program, run->config, run->cache, plan, device,
                         run->stateOf(plan.rank()), buffers);
  };
  callbacks.finish = [run](const Plan &plan, RankDevice &device,
                           const RankBuffers &buffers, Communicator &agree) {
    return writeOutputs(run->config, plan, device, run->stateOf(plan.rank()),
                        buffers, agree);
  };
  callbacks.executor = config.executor;
  callbacks.release = [run](int rank) {
    FileRank &state = run->stateOf(rank);
    state.deviceArgs.clear();
    state.deviceResults.clear();
  };
  // Every wait on another rank is bounded by the timeout: a rank stuck in
  // reading its inputs or writing its outputs (outside any collective) is
  // given up on once the others have failed waiting for it.
  RunOptions options = config;
  options.abandonLateRanks = true;
  return runProgram(run->program, options, callbacks, ranks);
}

} // namespace shardlin::rt
