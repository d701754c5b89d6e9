//===- CudaBackends.cpp - The cuda-local and nccl backends ----------------===//
//
// The GPU device of a rank and the runners of the two GPU backends, and the
// GPU module's entry point: the registry entries are in Backends.cpp, which
// loads this module (GpuModule.cpp) the first time one of them is run; the
// initializer at the end of this file hands it the runners.
//
//===----------------------------------------------------------------------===//

#include "backends/Backends.h"

#include "backends/LaunchEnv.h"
#include "exec/ThreadLauncher.h"
#include "shardlin/runtime/backends/Cuda.h"
#include "shardlin/runtime/backends/Mpi.h"
#include "shardlin/runtime/backends/Host.h"

namespace shardlin::rt::detail {

namespace {

/// A rank on one GPU: the stream is its communicator's (cuda-local or nccl),
/// so the plan's copies, kernels, GEMMs and collectives are all ordered on
/// it. f32 GEMMs do not use TF32 (GemmOptions' default): the results meet
/// the same bound as the CPU backends'.
class CudaRankDevice final : public RankDevice {
public:
  DeviceKind kind() const override { return DeviceKind::Cuda; }

  Status prepare(const Communicator &comm) override {
    stream_ = cudaStreamOf(comm);
    if (!stream_)
      return Status::internal(std::string("the ") + comm.backendName() +
                              " communicator has no CUDA stream");
    const int device = stream_->device();
    SHARDLIN_RETURN_IF_ERROR(createCudaAllocator(device, allocator_));
    SHARDLIN_RETURN_IF_ERROR(createCublasGemm(stream_, GemmOptions(), gemm_));
    SHARDLIN_RETURN_IF_ERROR(createCudaLocalOps(stream_, ops_));
    return Status::ok();
  }

  Allocator &allocator() override { return *allocator_; }
  GemmBackend &gemm() override { return *gemm_; }
  LocalOps &localOps() override { return *ops_; }

  Status copyFromHost(void *dst, const void *src, size_t bytes) override {
    return copyToDevice(*stream_, dst, src, bytes)
        .withContext("copying to cuda:" + std::to_string(stream_->device()));
  }
  Status copyToHost(void *dst, const void *src, size_t bytes) override {
    return rt::copyToHost(*stream_, dst, src, bytes)
        .withContext("copying from cuda:" + std::to_string(stream_->device()));
  }
  /// A threaded lane whose collectives run on a second stream
  /// (createCudaLaneOrdering), beside the GEMMs on this one.
  Status createCommLane(Communicator &comm,
                        std::unique_ptr<CommLane> &out) override {
    auto *cuda = dynamic_cast<CudaCommunicator *>(&comm);
    if (!cuda || cuda->stream() != stream_)
      return Status::internal(std::string("a GPU rank's lane needs its own ") +
                              "CUDA communicator, not " + comm.backendName());
    std::unique_ptr<LaneOrdering> ordering;
    SHARDLIN_RETURN_IF_ERROR(createCudaLaneOrdering(*cuda, stream_, ordering));
    out = CommLane::create(comm, comm.callableFromAnyThread(),
                           std::move(ordering));
    return Status::ok();
  }

private:
  std::shared_ptr<ExecutionStream> stream_;
  // Before the buffers a caller allocates from it: they return their memory
  // to it when destroyed, and the device outlives them.
  std::unique_ptr<Allocator> allocator_;
  std::unique_ptr<GemmBackend> gemm_;
  std::unique_ptr<LocalOps> ops_;
};

std::unique_ptr<RankDevice> makeCudaDevice() {
  return std::make_unique<CudaRankDevice>();
}

/// The number of usable devices, or the one-line reason there are none.
Status usableCudaDevices(int &count) {
  count = 0;
  std::string why;
  if (!cudaDevicesAvailable(&why))
    return Status::unavailable("no usable CUDA device: " + why);
  return cudaDeviceCount(count);
}

std::string devicesText(int count) {
  return std::to_string(count) +
         (count == 1 ? " usable CUDA device" : " usable CUDA devices");
}

/// Runs the GPU communicators of one group on a thread each. The agreements
/// go through a threads group created alongside: they are host-side flags,
/// so they need no device memory and still work when a rank's GPU side
/// failed to come up.
Status runGpuThreads(const SharedProgram &program, const RunOptions &options,
                     const RankCallbacks &callbacks,
                     std::vector<std::unique_ptr<Communicator>> &comms,
                     std::vector<RankResult> &ranks) {
  std::vector<std::unique_ptr<Communicator>> agree =
      createThreadsGroup(static_cast<int>(comms.size()), options.comm);
  return runRanksOnThreads(
      program, options, callbacks,
      ThreadRanks{std::move(comms), std::move(agree), makeCudaDevice}, ranks);
}

/// nccl without mpirun: this process drives W GPUs, rank r on device
/// first + r, one thread each.
Status runNcclThreads(const SharedProgram &program, const RunOptions &options,
                      const RankCallbacks &callbacks,
                      std::vector<RankResult> &ranks) {
  int w = 0, count = 0;
  SHARDLIN_RETURN_IF_ERROR(resolveLaunchedRanks(program.program(), options, 0, w));
  SHARDLIN_RETURN_IF_ERROR(usableCudaDevices(count));
  const int first = options.device < 0 ? 0 : options.device;
  if (first >= count || w > count - first) {
    std::string need = first == 0 ? std::to_string(w) + " GPUs"
                                   : "cuda:" + std::to_string(first) +
                                         "..cuda:" +
                                         std::to_string(first + w - 1);
    return Status::unavailable(
        "the nccl backend runs one rank per GPU: " + std::to_string(w) +
        " ranks need " + need + ", but this machine has " +
        devicesText(count) +
        " (the cuda-local backend runs several ranks on one GPU; under "
        "mpirun, nccl runs one process per GPU)");
  }
  std::vector<std::shared_ptr<ExecutionStream>> streams(w);
  for (int r = 0; r < w; ++r)
    SHARDLIN_RETURN_IF_ERROR(ExecutionStream::create(first + r, streams[r]));
  std::vector<std::unique_ptr<Communicator>> comms;
  SHARDLIN_RETURN_IF_ERROR(
      createNcclThreadsGroup(streams, options.comm, comms));
  return runGpuThreads(program, options, callbacks, comms, ranks);
}

/// nccl under mpirun: one process (rank) per GPU. The MPI communicator
/// hands out NCCL's unique id and carries every agreement, so a process
/// without a usable GPU fails all of them at once instead of leaving the
/// others in NCCL's initialization until the timeout.
Status runNcclMpi(const SharedProgram &program, const RunOptions &options,
                  const RankCallbacks &callbacks,
                  std::vector<RankResult> &ranks) {
  std::unique_ptr<Communicator> mpi;
  SHARDLIN_RETURN_IF_ERROR(
      createMpiCommunicator(options.comm, mpi)
          .withContext("the nccl backend under mpirun bootstraps NCCL "
                       "through MPI"));
  int w = 0;
  SHARDLIN_RETURN_IF_ERROR(
      resolveLaunchedRanks(program.program(), options, mpi->worldSize(), w));
  const int rank = mpi->rank();
  const std::string who = "rank " + std::to_string(rank);

  int count = 0, device = options.device;
  std::shared_ptr<ExecutionStream> stream;
  Status ready = usableCudaDevices(count);
  if (ready && device < 0) {
    // One process per GPU of a node: the node-local rank picks it.
    const int local = launchEnvironment().localRank;
    device = (local >= 0 ? local : rank) % count;
  }
  if (ready && device >= count)
    ready = Status::notFound("there is no cuda:" + std::to_string(device) +
                             " (" + devicesText(count) + ")")
                .withSubject("device");
  if (ready)
    ready = ExecutionStream::create(device, stream);
  double failed = ready ? 0.0 : 1.0;
  SHARDLIN_RETURN_IF_ERROR(
      mpi->allReduce(&failed, &failed, 1, DType::F64).withContext(who));
  if (!ready)
    return ready.withContext(who);
  if (failed > 0)
    return Status::aborted(who + ": stopped because another rank could not "
                                 "open its GPU");

  std::unique_ptr<Communicator> nccl;
  SHARDLIN_RETURN_IF_ERROR(
      createNcclCommunicator(*mpi, stream, options.comm, nccl)
          .withContext(who));
  CudaRankDevice rankDevice;
  ranks.push_back(runWorldRank(program, options.replicas, *nccl, rankDevice,
                               callbacks, mpi.get()));
  return ranks.back().status;
}

/// cuda-local: W ranks as threads sharing one GPU.
Status runCudaLocal(const SharedProgram &program, const RunOptions &options,
                    const RankCallbacks &callbacks,
                    std::vector<RankResult> &ranks) {
  SHARDLIN_RETURN_IF_ERROR(checkThreadsLaunch("cuda-local"));
  int w = 0, count = 0;
  SHARDLIN_RETURN_IF_ERROR(resolveLaunchedRanks(program.program(), options, 0, w));
  SHARDLIN_RETURN_IF_ERROR(usableCudaDevices(count));
  const int device = options.device < 0 ? 0 : options.device;
  if (device >= count)
    return Status::notFound("there is no cuda:" + std::to_string(device) +
                            " (" + devicesText(count) + ")")
        .withSubject("device");
  std::vector<std::unique_ptr<Communicator>> comms;
  SHARDLIN_RETURN_IF_ERROR(
      createCudaLocalGroup(w, device, options.comm, comms));
  return runGpuThreads(program, options, callbacks, comms, ranks);
}

Status runNccl(const SharedProgram &program, const RunOptions &options,
               const RankCallbacks &callbacks, std::vector<RankResult> &ranks) {
  if (launchEnvironment().launched)
    return runNcclMpi(program, options, callbacks, ranks);
  return runNcclThreads(program, options, callbacks, ranks);
}

/// Registers the runners when the module is loaded (or, in a program that
/// links the module, before main).
[[maybe_unused]] const bool registered = [] {
  GpuModuleEntries entries;
  entries.abi = kGpuModuleAbi;
  entries.runCudaLocal = runCudaLocal;
  entries.runNccl = runNccl;
  entries.describeDevices = describeCudaDevices;
  registerGpuModule(entries);
  return true;
}();

} // namespace

} // namespace shardlin::rt::detail
