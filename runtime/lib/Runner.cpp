//===- Runner.cpp - Run a program on every rank with .npy files -----------===//

#include "shardlin/runtime/Runner.h"

#include "shardlin/runtime/ChunkLayout.h"
#include "shardlin/runtime/Gemm.h"
#include "shardlin/runtime/MpiCommunicator.h"
#include "shardlin/runtime/Npy.h"
#include "shardlin/runtime/Plan.h"
#include "shardlin/runtime/ThreadsCommunicator.h"
#if defined(SHARDLIN_HAVE_CUDA)
#include "shardlin/runtime/Cuda.h"
#endif

#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <thread>

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

std::string availableBackends() {
  std::string s = "threads";
  if (mpiAvailable())
    s += ", mpi";
#if defined(SHARDLIN_HAVE_CUDA)
  s += ", cuda-local";
  if (ncclAvailable())
    s += ", nccl";
#endif
  return s;
}

bool isBackendName(const std::string &name) {
  return name == "threads" || name == "mpi" || name == "cuda-local" ||
         name == "nccl";
}

bool backendNeedsMpiSession(const std::string &backend) {
  return backend == "mpi" || (backend == "nccl" && launchedByMpi());
}

std::string availableGemmBackends() {
#if defined(SHARDLIN_HAVE_CUDA)
  return "openblas, cublas";
#else
  return "openblas";
#endif
}

std::string describeGpus() {
#if defined(SHARDLIN_HAVE_CUDA)
  return describeCudaDevices();
#else
  return "not built with CUDA";
#endif
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

/// The accelerator side of a rank whose plan runs on a device rather than on
/// host memory: the plan's allocator, GEMM and local ops, and the copies at
/// the program's edges. The host binds the arguments from the files as
/// usual; upload() then copies them to device memory once, the plan runs on
/// the device, and download() copies the results back for the usual staging
/// of the outputs. Nothing else crosses between host and device.
class RankDevice {
public:
  virtual ~RankDevice() = default;
  /// Creates the device-side objects for `comm`'s rank.
  virtual Status prepare(const Communicator &comm) = 0;
  virtual Allocator &allocator() = 0;
  /// Device copies of the bound arguments (`host[i]` holds plan.argShape(i)).
  virtual Status upload(const Plan &plan, const std::vector<const void *> &host,
                        std::vector<const void *> &device) = 0;
  /// Device buffers for the results.
  virtual Status allocateResults(const Plan &plan,
                                 std::vector<void *> &device) = 0;
  virtual Status run(Plan &plan, Communicator &comm,
                     const std::vector<const void *> &args,
                     const std::vector<void *> &results) = 0;
  /// Copies the results into `host` (sized by the caller); waits for the
  /// rank's device work, so an asynchronous failure shows here.
  virtual Status download(std::vector<std::vector<uint8_t>> &host) = 0;
};

#if defined(SHARDLIN_HAVE_CUDA)
/// A rank on one GPU: the stream is its communicator's (cuda-local or nccl),
/// so the plan's copies, kernels, GEMMs and collectives are all ordered on
/// it. f32 GEMMs do not use TF32 (GemmOptions' default): the results meet
/// the same bound as the CPU backends'.
class CudaRankDevice final : public RankDevice {
public:
  Status prepare(const Communicator &comm) override {
    stream_ = cudaStreamOf(comm);
    if (!stream_)
      return Status::error(std::string("the ") + comm.backendName() +
                           " communicator has no CUDA stream");
    const int device = stream_->device();
    SHARDLIN_RETURN_IF_ERROR(createCudaAllocator(device, allocator_));
    SHARDLIN_RETURN_IF_ERROR(createCublasGemm(stream_, GemmOptions(), gemm_));
    SHARDLIN_RETURN_IF_ERROR(createCudaLocalOps(stream_, ops_));
    return Status::ok();
  }

  Allocator &allocator() override { return *allocator_; }

  Status upload(const Plan &plan, const std::vector<const void *> &host,
                std::vector<const void *> &device) override {
    args_.clear();
    args_.resize(host.size());
    device.clear();
    for (size_t i = 0; i < host.size(); ++i) {
      const size_t bytes =
          elements(plan.argShape(i)) * dtypeSize(plan.argType(i));
      const std::string what = "argument " + std::to_string(i) +
                               ": copying to cuda:" +
                               std::to_string(stream_->device());
      SHARDLIN_RETURN_IF_ERROR(
          Buffer::allocate(*allocator_, bytes, args_[i]).withContext(what));
      SHARDLIN_RETURN_IF_ERROR(
          copyToDevice(*stream_, args_[i].data(), host[i], bytes)
              .withContext(what));
      device.push_back(args_[i].data());
    }
    return Status::ok();
  }

  Status allocateResults(const Plan &plan,
                         std::vector<void *> &device) override {
    results_.clear();
    results_.resize(plan.numResults());
    device.clear();
    for (size_t i = 0; i < plan.numResults(); ++i) {
      const size_t bytes =
          elements(plan.resultShape(i)) * dtypeSize(plan.resultType(i));
      SHARDLIN_RETURN_IF_ERROR(Buffer::allocate(*allocator_, bytes, results_[i])
                                   .withContext("result " + std::to_string(i)));
      device.push_back(results_[i].data());
    }
    return Status::ok();
  }

  Status run(Plan &plan, Communicator &comm,
             const std::vector<const void *> &args,
             const std::vector<void *> &results) override {
    return plan.run(comm, *gemm_, *ops_, args, results);
  }

  Status download(std::vector<std::vector<uint8_t>> &host) override {
    for (size_t i = 0; i < host.size() && i < results_.size(); ++i)
      SHARDLIN_RETURN_IF_ERROR(
          copyToHost(*stream_, host[i].data(), results_[i].data(),
                     host[i].size())
              .withContext("result " + std::to_string(i) +
                           ": copying from cuda:" +
                           std::to_string(stream_->device())));
    return Status::ok();
  }

private:
  static size_t elements(const std::vector<int64_t> &shape) {
    size_t n = 1; // The plan checked that every shape's bytes fit.
    for (int64_t d : shape)
      n *= size_t(d);
    return n;
  }

  std::shared_ptr<ExecutionStream> stream_;
  // Before the buffers: they return their memory to it when destroyed.
  std::unique_ptr<Allocator> allocator_;
  std::unique_ptr<GemmBackend> gemm_;
  std::unique_ptr<LocalOps> ops_;
  std::vector<Buffer> args_, results_;
};
#endif

/// Sizes and allocates the host buffer of result `i` of `plan`.
Status allocateHostResult(const Plan &plan, size_t i,
                          std::vector<uint8_t> &out) {
  int64_t n = 0;
  const size_t elt = dtypeSize(plan.resultType(i));
  SHARDLIN_RETURN_IF_ERROR(checkedNumElements(plan.resultShape(i), n, elt)
                               .withContext("result " + std::to_string(i)));
  const size_t bytes = static_cast<size_t>(n) * elt;
  const Status noMemory = Status::error(
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
    return Status::error("result " + std::to_string(i) + " of shape " +
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

/// A 48-bit hash of a program's text form (without source locations, which
/// do not change what runs), as three 16-bit terms t and their squares t^2.
/// Summed over W ranks, the sums equal W*t and W*t^2 for every term exactly
/// when all ranks hold the same t: any difference gives the sums a non-zero
/// variance, which every rank sees. All values stay exact in a double for W
/// up to 2^21.
class ProgramFingerprint {
public:
  explicit ProgramFingerprint(const Program &program) {
    Program bare = program;
    for (Instr &in : bare.instrs)
      in.location.clear();
    uint64_t h = 1469598103934665603ull; // FNV-1a
    for (unsigned char c : serializeProgram(bare)) {
      h ^= c;
      h *= 1099511628211ull;
    }
    for (int i = 0; i < 3; ++i)
      parts_[i] = static_cast<double>((h >> (16 * i)) & 0xffff);
  }
  std::vector<double> terms() const {
    std::vector<double> t;
    for (double p : parts_) {
      t.push_back(p);
      t.push_back(p * p);
    }
    return t;
  }
  bool sameOnAllRanks(const double *sums, int worldSize) const {
    for (int i = 0; i < 3; ++i)
      if (sums[2 * i] != worldSize * parts_[i] ||
          sums[2 * i + 1] != worldSize * parts_[i] * parts_[i])
        return false;
    return true;
  }

private:
  double parts_[3];
};

struct RankOutcome {
  Status status;
  /// True if this rank failed only because another rank did.
  bool secondary = false;
};

/// `agree`, if given, is a host-memory communicator over the same ranks that
/// carries the agreements instead of `comm` (whose buffers may have to be
/// device memory). `device`, if given, runs the plan on it (it outlives the
/// plan, whose buffers come from its allocator).
RankOutcome runRank(const Program &program, const RunConfig &config,
                    Communicator &comm, FileCache &cache,
                    Communicator *agree = nullptr,
                    RankDevice *device = nullptr) {
  Communicator &agreeOn = agree ? *agree : comm;
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
  std::unique_ptr<GemmBackend> gemm = device ? nullptr : createCpuGemm();
  Status prepared = device ? device->prepare(comm) : Status::ok();
  if (prepared)
    prepared = Plan::build(program, rank, comm.worldSize(),
                           device ? device->allocator() : hostAllocator(),
                           plan);
  for (size_t i = 0; prepared && i < program.args.size(); ++i)
    prepared = bindArgument(program, *plan, i,
                            substituteRank(config.argPaths[i], rank), cache,
                            bound[i]);
  // On a device, its memory is allocated and filled here too, so that
  // running out of it is agreed on like a bad input.
  std::vector<const void *> deviceArgs;
  std::vector<void *> deviceResults;
  if (prepared && device) {
    std::vector<const void *> hostArgs;
    for (const BoundArg &b : bound)
      hostArgs.push_back(b.data());
    prepared = device->upload(*plan, hostArgs, deviceArgs);
    if (prepared)
      prepared = device->allocateResults(*plan, deviceResults);
  }

  // The results' host buffers, allocated before the agreement too: a
  // result too large for this host is then a clean error on every rank, not
  // a std::bad_alloc (which ends the process) in the middle of the run.
  std::vector<std::vector<uint8_t>> results(program.results.size());
  for (size_t i = 0; prepared && i < results.size(); ++i)
    prepared = allocateHostResult(*plan, i, results[i]);

  // The agreement also checks that every rank runs the same program: ranks
  // started with different programs (e.g. an MPMD mpirun) would otherwise
  // issue different collectives, which MPI does not detect.
  ProgramFingerprint print(program);
  std::vector<double> agreement = print.terms();
  agreement.insert(agreement.begin(), prepared ? 0.0 : 1.0);
  Status agreed = agreeOn.allReduce(agreement.data(), agreement.data(),
                                    static_cast<int64_t>(agreement.size()),
                                    DType::F64);
  if (!agreed)
    return fail(agreed);
  if (!print.sameOnAllRanks(agreement.data() + 1, comm.worldSize()))
    return fail(Status::error(
        "the ranks do not all run the same program (its fingerprint "
        "differs between ranks); start every rank with the same program"));
  if (!prepared)
    return fail(prepared);
  if (agreement[0] > 0) {
    outcome.secondary = true;
    return fail(Status::error("stopped because another rank failed to "
                              "prepare its inputs"));
  }

  std::vector<const void *> argPtrs;
  std::vector<void *> resultPtrs;
  for (const BoundArg &b : bound)
    argPtrs.push_back(b.data());
  for (std::vector<uint8_t> &r : results)
    resultPtrs.push_back(r.data());
  Status ran = device ? device->run(*plan, comm, deviceArgs, deviceResults)
                      : plan->run(comm, *gemm, argPtrs, resultPtrs);
  if (!ran)
    return fail(ran);
  // A failed copy back (or a device fault it reveals) is a failure to write
  // this rank's outputs, agreed on below like one.
  Status downloaded = device ? device->download(results) : Status::ok();

  // Outputs appear only if every rank wrote all of its own: each rank
  // stages its files under temporary names, the ranks agree, then rename.
  std::vector<std::unique_ptr<PendingNpy>> pending;
  Status staged = downloaded;
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
  agreed = agreeOn.allReduce(&writeFailed, &writeFailed, 1, DType::F64);
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

/// The root cause among the ranks' outcomes: the first error of a rank that
/// failed on its own, else the first error.
Status rootCause(const std::vector<RankOutcome> &outcomes) {
  for (const RankOutcome &o : outcomes)
    if (!o.status && !o.secondary)
      return o.status;
  for (const RankOutcome &o : outcomes)
    if (!o.status)
      return o.status;
  return Status::ok();
}

/// W for backends whose ranks are threads of this process (the threads
/// backend's rules).
Status localWorldSize(const Program &program, const RunConfig &config, int &w) {
  w = config.worldSize;
  if (w == 0)
    w = program.worldSize == 0 ? 1 : static_cast<int>(program.worldSize);
  if (w < 1 || w > 4096)
    return Status::error("world size must be in [1, 4096], got " +
                         std::to_string(w));
  return checkWorldSize(program, w);
}

#if defined(SHARDLIN_HAVE_CUDA)

/// The number of usable devices, or the one-line reason there are none.
Status usableCudaDevices(int &count) {
  count = 0;
  std::string why;
  if (!cudaDevicesAvailable(&why))
    return Status::error("no usable CUDA device: " + why);
  return cudaDeviceCount(count);
}

std::string devicesText(int count) {
  return std::to_string(count) +
         (count == 1 ? " usable CUDA device" : " usable CUDA devices");
}

/// Runs rank r of `comms` (GPU communicators of one group, one per thread)
/// on its own thread. The agreements go through a threads group created
/// alongside: they are host-side flags, so they need no device memory and
/// still work when a rank's GPU side failed to come up.
Status runGpuThreads(const Program &program, const RunConfig &config,
                     FileCache &cache,
                     std::vector<std::unique_ptr<Communicator>> &comms) {
  const int w = static_cast<int>(comms.size());
  std::vector<std::unique_ptr<Communicator>> agree =
      createThreadsGroup(w, config.comm);
  std::vector<RankOutcome> outcomes(w);
  std::vector<std::thread> threads;
  for (int r = 0; r < w; ++r)
    threads.emplace_back([&, r] {
      CudaRankDevice device;
      outcomes[r] =
          runRank(program, config, *comms[r], cache, agree[r].get(), &device);
    });
  for (std::thread &t : threads)
    t.join();
  return rootCause(outcomes);
}

/// The number of processes mpirun (or another launcher) started, from its
/// environment, or -1 if unknown.
int launcherWorldSize() {
  for (const char *var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "MPI_LOCALNRANKS"})
    if (const char *v = std::getenv(var)) {
      char *end = nullptr;
      long n = std::strtol(v, &end, 10);
      if (end != v && *end == '\0' && n > 0 && n < 1 << 24)
        return static_cast<int>(n);
    }
  return -1;
}

/// cuda-local: W ranks as threads sharing one GPU.
Status runCudaLocal(const Program &program, const RunConfig &config,
                    FileCache &cache) {
  // Every process of an mpirun job would run all W ranks and write the same
  // outputs: a mistake, not a way to scale out.
  const int launched = launcherWorldSize();
  if (launched > 1)
    return Status::error("cuda-local runs all ranks as threads of one "
                         "process, but the launcher started " +
                         std::to_string(launched) +
                         " processes; under mpirun use --backend=nccl (one "
                         "process per GPU)");
  int w = 0, count = 0;
  SHARDLIN_RETURN_IF_ERROR(localWorldSize(program, config, w));
  SHARDLIN_RETURN_IF_ERROR(usableCudaDevices(count));
  const int device = config.device < 0 ? 0 : config.device;
  if (device >= count)
    return Status::error("--device=" + std::to_string(device) +
                         ": there is no cuda:" + std::to_string(device) +
                         " (" + devicesText(count) + ")");
  std::vector<std::unique_ptr<Communicator>> comms;
  SHARDLIN_RETURN_IF_ERROR(createCudaLocalGroup(w, device, config.comm, comms));
  return runGpuThreads(program, config, cache, comms);
}

/// nccl without mpirun: this process drives W GPUs, rank r on device
/// first + r, one thread each.
Status runNcclThreads(const Program &program, const RunConfig &config,
                      FileCache &cache) {
  int w = 0, count = 0;
  SHARDLIN_RETURN_IF_ERROR(localWorldSize(program, config, w));
  SHARDLIN_RETURN_IF_ERROR(usableCudaDevices(count));
  const int first = config.device < 0 ? 0 : config.device;
  if (first >= count || w > count - first) {
    std::string need = first == 0 ? std::to_string(w) + " GPUs"
                                   : "cuda:" + std::to_string(first) +
                                         "..cuda:" +
                                         std::to_string(first + w - 1);
    return Status::error("the nccl backend runs one rank per GPU: " +
                         std::to_string(w) + " ranks need " + need +
                         ", but this machine has " + devicesText(count) +
                         " (--backend=cuda-local runs several ranks on one "
                         "GPU; under mpirun, nccl runs one process per GPU)");
  }
  std::vector<std::shared_ptr<ExecutionStream>> streams(w);
  for (int r = 0; r < w; ++r)
    SHARDLIN_RETURN_IF_ERROR(ExecutionStream::create(first + r, streams[r]));
  std::vector<std::unique_ptr<Communicator>> comms;
  SHARDLIN_RETURN_IF_ERROR(createNcclThreadsGroup(streams, config.comm, comms));
  return runGpuThreads(program, config, cache, comms);
}

/// The node-local rank of this process as the launcher exports it (Open
/// MPI, MPICH's Hydra, Slurm), or -1.
int launcherLocalRank() {
  for (const char *var :
       {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"})
    if (const char *v = std::getenv(var)) {
      char *end = nullptr;
      long r = std::strtol(v, &end, 10);
      if (end != v && *end == '\0' && r >= 0 && r < 1 << 20)
        return static_cast<int>(r);
    }
  return -1;
}

/// nccl under mpirun: one process (rank) per GPU. The MPI communicator
/// hands out NCCL's unique id and carries every agreement, so a process
/// without a usable GPU fails all of them at once instead of leaving the
/// others in NCCL's initialization until the timeout.
Status runNcclMpi(const Program &program, const RunConfig &config,
                  FileCache &cache) {
  std::unique_ptr<Communicator> mpi;
  SHARDLIN_RETURN_IF_ERROR(
      createMpiCommunicator(config.comm, mpi)
          .withContext("the nccl backend under mpirun bootstraps NCCL "
                       "through MPI"));
  const int w = mpi->worldSize(), rank = mpi->rank();
  if (config.worldSize != 0 && config.worldSize != w)
    return Status::error("--world-size=" + std::to_string(config.worldSize) +
                         " does not match the MPI world size " +
                         std::to_string(w));
  if (program.worldSize != 0 && program.worldSize != w)
    return Status::error("the MPI world size " + std::to_string(w) +
                         " does not match the " +
                         std::to_string(program.worldSize) +
                         " placements of the program's sharded values");
  const std::string who = "rank " + std::to_string(rank);

  int count = 0, device = config.device;
  std::shared_ptr<ExecutionStream> stream;
  Status ready = usableCudaDevices(count);
  if (ready && device < 0) {
    // One process per GPU of a node: the node-local rank picks it.
    const int local = launcherLocalRank();
    device = (local >= 0 ? local : rank) % count;
  }
  if (ready && device >= count)
    ready = Status::error("--device=" + std::to_string(device) +
                          ": there is no cuda:" + std::to_string(device) +
                          " (" + devicesText(count) + ")");
  if (ready)
    ready = ExecutionStream::create(device, stream);
  double failed = ready ? 0.0 : 1.0;
  SHARDLIN_RETURN_IF_ERROR(
      mpi->allReduce(&failed, &failed, 1, DType::F64).withContext(who));
  if (!ready)
    return ready.withContext(who);
  if (failed > 0)
    return Status::error(who + ": stopped because another rank could not "
                               "open its GPU");

  std::unique_ptr<Communicator> nccl;
  SHARDLIN_RETURN_IF_ERROR(
      createNcclCommunicator(*mpi, stream, config.comm, nccl).withContext(who));
  CudaRankDevice rankDevice;
  return runRank(program, config, *nccl, cache, mpi.get(), &rankDevice).status;
}

#endif // SHARDLIN_HAVE_CUDA

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
  if (config.device < -1)
    return Status::error("--device must be a device number (>= 0), got " +
                         std::to_string(config.device));
  if (config.device >= 0 && config.backend != "cuda-local" &&
      config.backend != "nccl")
    return Status::error("--device applies to the GPU backends (cuda-local, "
                         "nccl), not to '" +
                         config.backend + "'");
  FileCache cache;

  if (config.backend == "threads") {
    int w = 0;
    SHARDLIN_RETURN_IF_ERROR(localWorldSize(program, config, w));
    setBlasThreads(config.blasThreads > 0 ? config.blasThreads
                                          : autoBlasThreads(w));
    std::vector<std::unique_ptr<Communicator>> comms =
        createThreadsGroup(w, config.comm);
    if (config.wrapCommunicator)
      for (std::unique_ptr<Communicator> &c : comms)
        c = config.wrapCommunicator(std::move(c));
    std::vector<RankOutcome> outcomes(w);
    std::vector<std::thread> threads;
    for (int r = 0; r < w; ++r)
      threads.emplace_back([&, r] {
        outcomes[r] = runRank(program, config, *comms[r], cache);
      });
    for (std::thread &t : threads)
      t.join();
    return rootCause(outcomes);
  }

  if (config.backend == "mpi") {
    std::unique_ptr<Communicator> comm;
    SHARDLIN_RETURN_IF_ERROR(createMpiCommunicator(config.comm, comm));
    if (config.wrapCommunicator)
      comm = config.wrapCommunicator(std::move(comm));
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

  if (config.backend == "cuda-local" || config.backend == "nccl") {
#if defined(SHARDLIN_HAVE_CUDA)
    if (config.backend == "cuda-local")
      return runCudaLocal(program, config, cache);
    if (!ncclAvailable())
      return Status::error("backend 'nccl' is not built into this runtime "
                           "(NCCL was not found at configure time; "
                           "available: " +
                           availableBackends() + ")");
    if (launchedByMpi())
      return runNcclMpi(program, config, cache);
    return runNcclThreads(program, config, cache);
#else
    return Status::error("backend '" + config.backend +
                         "' is not built into this runtime (it needs the "
                         "CUDA toolkit at configure time; available: " +
                         availableBackends() + ")");
#endif
  }

  return Status::error("unknown backend '" + config.backend +
                       "' (available: " + availableBackends() + ")");
}

Status checkWorldSize(const Program &program, int requested) {
  if (requested != 0 && program.worldSize != 0 &&
      program.worldSize != requested)
    return Status::error("--world-size=" + std::to_string(requested) +
                         " does not match the " +
                         std::to_string(program.worldSize) +
                         " placements of the program's sharded values");
  return Status::ok();
}

} // namespace shardlin::rt
