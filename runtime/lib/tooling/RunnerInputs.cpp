//===- RunnerInputs.cpp - Binding every rank's arguments from .npy files --===//
//
// The file runner's bind step (RunnerSteps.h): each rank reads its
// arguments (a sharded one: only its own chunk of the global tensor, with
// pread), checks them against the entry's signature, uploads them to its
// device if it has one, and allocates its results' host memory, all before
// the ranks agree that they are ready.
//
//===----------------------------------------------------------------------===//

#include "tooling/RunnerSteps.h"

#include "shardlin/runtime/base/ChunkLayout.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <new>

namespace shardlin::rt {

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
  ChunkLayout layout(globalShape[d], spec);
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

namespace detail {

bool isPerRankPath(const std::string &pattern) {
  return pattern.find("{rank}") != std::string::npos;
}

Status FileCache::get(const std::string &path,
                      std::shared_ptr<const NpyArray> &out,
                      uint64_t *readBytes) {
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
    e->status = readArraySpec(path, *array, streamTimeoutSeconds_);
    if (readBytes && e->status)
      *readBytes += array->data.size();
    e->array = std::move(array);
  });
  if (!e->status)
    return e->status;
  out = e->array;
  return Status::ok();
}

Status allocateHostBytes(size_t bytes, const std::vector<int64_t> &shape,
                         const std::string &what, std::vector<uint8_t> &out) {
  // More than the host's memory cannot work: say so before trying. (The
  // zero-filled buffer would be touched in full; and under
  // AddressSanitizer a failed allocation ends the process instead of
  // throwing std::bad_alloc.)
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long pageSize = ::sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && pageSize > 0 &&
      bytes / static_cast<uint64_t>(pageSize) >= static_cast<uint64_t>(pages))
    return Status::resourceExhausted(
        what + " of shape " + formatShape(shape) + " needs " +
        std::to_string(bytes) + " bytes, more than this host's memory (" +
        std::to_string(static_cast<uint64_t>(pages) *
                       static_cast<uint64_t>(pageSize)) +
        " bytes)");
  try {
    out.resize(bytes);
  } catch (const std::bad_alloc &) {
    return Status::resourceExhausted(what + ": cannot allocate " +
                                     std::to_string(bytes) +
                                     " bytes of host memory for shape " +
                                     formatShape(shape));
  }
  return Status::ok();
}

namespace {

/// The file's descr must be one that holds `dt` (npyDescrMatches), or for
/// a tensor of a safetensors file its dtype must be `dt`'s.
Status checkDescr(const std::string &what, const std::string &descr,
                  DType dt) {
  DType stored;
  if (safetensorsDtypeOf(descr, stored)) {
    if (stored == dt)
      return Status::ok();
    return Status::invalidArgument(
        what + ": safetensors dtype " + descr +
        " does not match the entry signature's " + dtypeName(dt) +
        " (expected " + safetensorsDtypeName(dt) + ")");
  }
  if (npyDescrMatches(descr, dt))
    return Status::ok();
  return Status::invalidArgument(what + ": element type '" + descr +
                                 "' does not match the entry signature's " +
                                 dtypeName(dt) + " (expected " +
                                 npyDescrsAccepted(dt) + ")");
}

/// On a grid of `replicas` (> 1) replicas, what a file of the wrong shape
/// most likely means: the whole grid's data given where each replica reads
/// its own.
std::string eachReplicaReadsItsOwn(int replicas, const char *orPerRank) {
  return "on a grid of " + std::to_string(replicas) +
         " replicas each replica reads its own, so give one file per "
         "replica with {replica} in the path, e.g. x.{replica}.npy" +
         orPerRank;
}

/// Whether a sharded argument's file of shape `shape` holds the global
/// tensor (`global`) or, as a {rank} path may, exactly this rank's chunk;
/// any other shape is an error. `mine` is the rank's range of the split dim.
/// On a grid (`replicas` > 1) the global tensor is one replica's.
Status classifyShardedFile(const Argument &arg, int rank, int replicas,
                           const std::string &what,
                           const std::vector<int64_t> &shape,
                           bool perRankPath, bool &global, Range &mine) {
  const int64_t d = arg.sharding.dim;
  const std::vector<int64_t> &whole = arg.globalShape;
  mine = ChunkLayout(whole[size_t(d)], arg.sharding).ofRank(rank);
  // Where the chunk is the whole dim the two shapes agree, and so do the
  // bytes.
  global = shape == whole;
  if (global)
    return Status::ok();
  if (!perRankPath)
    return Status::invalidArgument(
        what + ": shape " + formatShape(shape) +
        " does not match the entry signature's " + formatShape(whole) +
        (replicas > 1
             ? " (one replica's global shape of a sharded argument: " +
                   eachReplicaReadsItsOwn(
                       replicas, ", or with {replica} and {rank}, one per "
                                 "rank of each replica") +
                   ")"
             : " (the global shape of a sharded argument; a path with {rank} "
               "may name each rank's chunk instead)"));
  std::vector<int64_t> chunk = whole;
  chunk[size_t(d)] = mine.size;
  if (shape == chunk)
    return Status::ok();
  const std::string r = std::to_string(rank);
  return Status::invalidArgument(
      what + ": rank " + r + "'s shard has shape " + formatShape(shape) +
      ", but the chunk spec gives rank " + r + " the shape " +
      formatShape(chunk) + " (rows [" + std::to_string(mine.offset) + ", " +
      std::to_string(mine.offset + mine.size) + ") of dim " +
      std::to_string(d) + " of the global " + formatShape(whole) +
      "; a file of the global shape is read as the global tensor)");
}

/// Binds sharded argument `i` from `path`. A file of the global shape is
/// the global tensor, of which only this rank's chunk is read
/// (NpyFile::readSlice). With `perRankPath` (a {rank} path) the file may
/// instead be a shard that holds exactly this rank's chunk. A FIFO or pipe
/// can be read only once: it comes whole from the cache, read by the first
/// rank of this process that asks, and each rank copies its chunk from it.
Status bindShardedArgument(const Program &program, const Plan &plan, size_t i,
                           const std::string &path, bool perRankPath,
                           int replicas, FileCache &cache, BoundArg &out,
                           uint64_t &bytesRead) {
  const Argument &arg = program.args[i];
  const DType dt = plan.argType(i);
  const std::string argument = "argument " + std::to_string(i);
  const std::string what = argument + " (" + path + ")";
  bool global = false;
  Range mine;
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && S_ISFIFO(st.st_mode)) {
    std::shared_ptr<const NpyArray> file;
    // The reader's messages name the file already.
    SHARDLIN_RETURN_IF_ERROR(
        cache.get(path, file, &bytesRead).withContext(argument));
    SHARDLIN_RETURN_IF_ERROR(checkDescr(what, file->descr, dt));
    SHARDLIN_RETURN_IF_ERROR(classifyShardedFile(arg, plan.rank(), replicas,
                                                 what, file->shape,
                                                 perRankPath, global, mine));
    if (!global) {
      out.file = std::move(file);
      return Status::ok();
    }
    extractLocalChunk(file->data.data(), file->shape, dt, arg.sharding,
                      plan.rank(), out.chunk);
    return Status::ok();
  }
  std::unique_ptr<NpyFile> file;
  SHARDLIN_RETURN_IF_ERROR(
      NpyFile::openSpec(path, file, cache.streamTimeoutSeconds())
          .withContext(argument));
  SHARDLIN_RETURN_IF_ERROR(checkDescr(what, file->descr(), dt));
  SHARDLIN_RETURN_IF_ERROR(classifyShardedFile(arg, plan.rank(), replicas,
                                               what, file->shape(),
                                               perRankPath, global, mine));
  Status read = global ? file->readSlice(arg.sharding.dim, mine, out.chunk)
                       : file->readAll(out.chunk);
  bytesRead += file->bytesRead();
  return read.withContext(argument);
}

/// Binds argument `i` from `pattern` (the rank's path once {rank} is
/// substituted); `replicas` > 1 on a grid.
Status bindArgument(const Program &program, const Plan &plan, size_t i,
                    const std::string &pattern, int replicas,
                    FileCache &cache, BoundArg &out, uint64_t &bytesRead) {
  const Argument &arg = program.args[i];
  const std::string path = substituteRank(pattern, plan.rank());
  if (arg.sharded)
    return bindShardedArgument(program, plan, i, path, isPerRankPath(pattern),
                               replicas, cache, out, bytesRead);
  DType dt = plan.argType(i);
  std::string what = "argument " + std::to_string(i) + " (" + path + ")";
  std::shared_ptr<const NpyArray> file;
  // The reader's messages name the file already.
  SHARDLIN_RETURN_IF_ERROR(cache.get(path, file, &bytesRead)
                               .withContext("argument " + std::to_string(i)));
  SHARDLIN_RETURN_IF_ERROR(checkDescr(what, file->descr, dt));
  const std::vector<int64_t> &want = plan.argShape(i);
  if (file->shape != want)
    return Status::invalidArgument(
        what + ": shape " + formatShape(file->shape) +
        " does not match the entry signature's " + formatShape(want) +
        (replicas > 1
             ? " (one replica's shape: " + eachReplicaReadsItsOwn(replicas, "") +
                   ")"
             : ""));
  out.file = std::move(file);
  return Status::ok();
}

/// Sizes and allocates the host buffer of result `i` of `plan`.
Status allocateHostResult(const Plan &plan, size_t i,
                          std::vector<uint8_t> &out) {
  int64_t n = 0;
  const size_t elt = dtypeSize(plan.resultType(i));
  const std::string what = "result " + std::to_string(i);
  SHARDLIN_RETURN_IF_ERROR(checkedNumElements(plan.resultShape(i), n, elt)
                               .withContext(what));
  return allocateHostBytes(static_cast<size_t>(n) * elt, plan.resultShape(i),
                           what, out);
}

} // namespace

Status bindFromFiles(const Program &program, const RunConfig &config,
                     FileCache &cache, const Plan &plan, RankDevice &device,
                     FileRank &state, RankBuffers &buffers) {
  const bool onHost = device.kind() == DeviceKind::Host;
  state.bound.resize(program.args.size());
  for (size_t i = 0; i < program.args.size(); ++i) {
    SHARDLIN_RETURN_IF_ERROR(bindArgument(program, plan, i,
                                          config.argPaths[i], config.replicas,
                                          cache, state.bound[i],
                                          state.bytesRead));
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

} // namespace detail
} // namespace shardlin::rt
