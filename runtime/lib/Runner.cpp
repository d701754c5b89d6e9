//===- Runner.cpp - Run a program on every rank with .npy files -----------===//

#include "shardlin/runtime/Runner.h"

#include "shardlin/runtime/ChunkLayout.h"
#include "shardlin/runtime/Gemm.h"
#include "shardlin/runtime/MpiCommunicator.h"
#include "shardlin/runtime/Npy.h"
#include "shardlin/runtime/Plan.h"
#include "shardlin/runtime/ThreadsCommunicator.h"

#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

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

std::string availableBackends() {
  std::string s = "threads";
  if (mpiAvailable())
    s += ", mpi";
  return s;
}

namespace {

/// Files read once per process and shared by the ranks that name them.
class FileCache {
public:
  Status get(const std::string &path, std::shared_ptr<const NpyArray> &out) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = files_.find(path);
    if (it == files_.end()) {
      Entry e;
      auto array = std::make_shared<NpyArray>();
      e.status = readNpy(path, *array);
      e.array = std::move(array);
      it = files_.emplace(path, std::move(e)).first;
    }
    if (!it->second.status)
      return it->second.status;
    out = it->second.array;
    return Status::ok();
  }

private:
  struct Entry {
    Status status;
    std::shared_ptr<const NpyArray> array;
  };
  std::mutex mutex_;
  std::map<std::string, Entry> files_;
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

Status bindArgument(const Program &program, const Plan &plan, size_t i,
                    const std::string &path, FileCache &cache, BoundArg &out) {
  const Argument &arg = program.args[i];
  DType dt = plan.argType(i);
  std::string what = "argument " + std::to_string(i) + " (" + path + ")";
  std::shared_ptr<const NpyArray> file;
  // The reader's messages name the file already.
  SHARDLIN_RETURN_IF_ERROR(
      cache.get(path, file).withContext("argument " + std::to_string(i)));
  if (file->descr != npyDescr(dt))
    return Status::error(what + ": element type '" + file->descr +
                         "' does not match the entry signature's " +
                         dtypeName(dt) + " (expected '" + npyDescr(dt) + "')");
  const std::vector<int64_t> &want =
      arg.sharded ? arg.globalShape : plan.argShape(i);
  if (file->shape != want)
    return Status::error(what + ": shape " + formatShape(file->shape) +
                         " does not match the entry signature's " +
                         formatShape(want) +
                         (arg.sharded ? " (the global shape of a sharded "
                                        "argument)"
                                      : ""));
  if (!arg.sharded) {
    out.file = std::move(file);
    return Status::ok();
  }
  extractLocalChunk(file->data.data(), want, dt, arg.sharding, plan.rank(),
                    out.chunk);
  return Status::ok();
}

struct RankOutcome {
  Status status;
  /// True if this rank failed only because another rank did.
  bool secondary = false;
};

RankOutcome runRank(const Program &program, const RunConfig &config,
                    Communicator &comm, FileCache &cache) {
  const int rank = comm.rank();
  RankOutcome outcome;
  auto fail = [&](Status s) {
    outcome.status = s.withContext("rank " + std::to_string(rank));
    return outcome;
  };

  // Everything that can fail because of the inputs happens before the first
  // collective of the program.
  std::unique_ptr<Plan> plan;
  std::vector<BoundArg> bound(program.args.size());
  std::unique_ptr<GemmBackend> gemm = createCpuGemm();
  Status prepared =
      Plan::build(program, rank, comm.worldSize(), hostAllocator(), plan);
  for (size_t i = 0; prepared && i < program.args.size(); ++i)
    prepared = bindArgument(program, *plan, i,
                            substituteRank(config.argPaths[i], rank), cache,
                            bound[i]);

  double failed = prepared ? 0.0 : 1.0;
  Status agreed = comm.allReduce(&failed, &failed, 1, DType::F64);
  if (!agreed)
    return fail(agreed);
  if (!prepared)
    return fail(prepared);
  if (failed > 0) {
    outcome.secondary = true;
    return fail(Status::error("stopped because another rank failed to "
                              "prepare its inputs"));
  }

  std::vector<std::vector<uint8_t>> results(program.results.size());
  std::vector<const void *> argPtrs;
  std::vector<void *> resultPtrs;
  for (const BoundArg &b : bound)
    argPtrs.push_back(b.data());
  for (size_t i = 0; i < results.size(); ++i) {
    int64_t n = 1;
    for (int64_t d : plan->resultShape(i))
      n *= d;
    results[i].resize(n * dtypeSize(plan->resultType(i)));
    resultPtrs.push_back(results[i].data());
  }
  Status ran = plan->run(comm, *gemm, argPtrs, resultPtrs);
  if (!ran)
    return fail(ran);

  // Outputs appear only if every rank wrote all of its own: each rank
  // stages its files under temporary names, the ranks agree, then rename.
  std::vector<std::unique_ptr<PendingNpy>> pending;
  Status staged = Status::ok();
  for (size_t i = 0; staged && i < results.size(); ++i) {
    const std::string &pattern = config.outPaths[i];
    bool perRank = pattern.find("{rank}") != std::string::npos;
    if (!perRank && rank != 0)
      continue;
    std::unique_ptr<PendingNpy> file;
    staged = PendingNpy::stage(substituteRank(pattern, rank),
                               plan->resultType(i), plan->resultShape(i),
                               results[i].data(), file)
                 .withContext("result " + std::to_string(i));
    pending.push_back(std::move(file));
  }
  double writeFailed = staged ? 0.0 : 1.0;
  agreed = comm.allReduce(&writeFailed, &writeFailed, 1, DType::F64);
  if (!agreed)
    return fail(agreed);
  if (!staged)
    return fail(staged);
  if (writeFailed > 0) {
    outcome.secondary = true;
    return fail(Status::error("no output written because another rank "
                              "failed to write its outputs"));
  }
  for (std::unique_ptr<PendingNpy> &file : pending) {
    Status committed = file->commit();
    if (!committed)
      return fail(committed);
  }
  return outcome;
}

int autoBlasThreads(int ranksPerHost) {
  unsigned cores = std::thread::hardware_concurrency();
  if (cores == 0)
    cores = 1;
  return std::max(1, static_cast<int>(cores) / std::max(1, ranksPerHost));
}

} // namespace

Status runProgramWithFiles(const Program &program, const RunConfig &config) {
  if (config.argPaths.size() != program.args.size())
    return Status::error("the entry '" + program.name + "' takes " +
                         std::to_string(program.args.size()) +
                         " argument(s) but " +
                         std::to_string(config.argPaths.size()) +
                         " --arg were given");
  if (config.outPaths.size() != program.results.size())
    return Status::error("the entry '" + program.name + "' returns " +
                         std::to_string(program.results.size()) +
                         " result(s) but " +
                         std::to_string(config.outPaths.size()) +
                         " --out were given");
  FileCache cache;

  if (config.backend == "threads") {
    int w = config.worldSize;
    if (w == 0)
      w = program.worldSize == 0 ? 1 : static_cast<int>(program.worldSize);
    if (w < 1 || w > 4096)
      return Status::error("world size must be in [1, 4096], got " +
                           std::to_string(w));
    if (program.worldSize != 0 && program.worldSize != w)
      return Status::error("--world-size=" + std::to_string(w) +
                           " does not match the " +
                           std::to_string(program.worldSize) +
                           " placements of the program's sharded values");
    setBlasThreads(config.blasThreads > 0 ? config.blasThreads
                                          : autoBlasThreads(w));
    std::vector<std::unique_ptr<Communicator>> comms =
        createThreadsGroup(w, config.comm);
    std::vector<RankOutcome> outcomes(w);
    std::vector<std::thread> threads;
    for (int r = 0; r < w; ++r)
      threads.emplace_back([&, r] {
        outcomes[r] = runRank(program, config, *comms[r], cache);
      });
    for (std::thread &t : threads)
      t.join();
    for (const RankOutcome &o : outcomes)
      if (!o.status && !o.secondary)
        return o.status;
    for (const RankOutcome &o : outcomes)
      if (!o.status)
        return o.status;
    return Status::ok();
  }

  if (config.backend == "mpi") {
    std::unique_ptr<Communicator> comm;
    SHARDLIN_RETURN_IF_ERROR(createMpiCommunicator(config.comm, comm));
    int w = comm->worldSize();
    if (config.worldSize != 0 && config.worldSize != w)
      return Status::error("--world-size=" + std::to_string(config.worldSize) +
                           " does not match the MPI world size " +
                           std::to_string(w));
    if (program.worldSize != 0 && program.worldSize != w)
      return Status::error("the MPI world size " + std::to_string(w) +
                           " does not match the " +
                           std::to_string(program.worldSize) +
                           " placements of the program's sharded values");
    int local = 1;
    if (const char *s = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE"))
      local = std::max(1, std::atoi(s));
    setBlasThreads(config.blasThreads > 0 ? config.blasThreads
                                          : autoBlasThreads(local));
    RankOutcome o = runRank(program, config, *comm, cache);
    return o.status;
  }

  return Status::error("unknown backend '" + config.backend +
                       "' (available: " + availableBackends() + ")");
}

} // namespace shardlin::rt
