//===- GpuEndToEndTest.cpp - shardlin.linear on the GPU backends ----------===//
//
// The threads suite's configurations (threadsConfigs(): both sharding dims,
// W = 1..8, uneven and empty chunks, every placement of W = 4, 1-D to 4-D
// inputs, bias or not, every dtype on a subset, both strategies) compiled
// from MLIR text and run on a GPU backend, each rank's output compared with
// the float64 reference within errorBound(): the same bounds as on the CPU,
// f32 included (the cuBLAS backend does not use TF32 unless asked to).
//
// One ctest test per backend, W and strategy ("gpu.e2e.Backends/GpuLinear.
// Run/cuda_local_W4_activations", ...), each running every configuration of
// its W and strategy on one group of communicators, so a whole W shares the
// GPU setup (streams, cuBLAS handles) the way a replayed plan would:
//  - cuda-local: W ranks as threads sharing cuda:0, W = 1..8;
//  - nccl: one GPU per rank, for every W up to the number of GPUs present.
// Each configuration runs twice on the same plans with different inputs
// (compile once, run many), and each rank's traffic counter must equal the
// bytes the chunk tables give (expectedBytesSent).
//
// Without a usable GPU (or, for nccl, without enough GPUs or without NCCL
// in the build) every test skips with the reason. These tests need MLIR
// (they compile the configurations), so they run where both LLVM/MLIR 22
// and a GPU are; the GPU machine without LLVM runs the same kind of
// configurations from compiled programs (scripts/gpu-check.sh).
//
//===----------------------------------------------------------------------===//

#include "E2ESupport.h"

#include "shardlin/runtime/Buffer.h"
#include "shardlin/runtime/Cuda.h"
#include "shardlin/runtime/LocalOps.h"
#include "shardlin/runtime/ThreadsCommunicator.h"

#include <gtest/gtest.h>

#include <memory>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

namespace shardlin::e2e {

namespace rt = ::shardlin::rt;

namespace {

/// A collective that a bug leaves waiting fails after this long instead of
/// hanging the test.
constexpr double kCollectiveTimeoutSeconds = 60;

/// Failing configurations reported in full per test; the rest are counted.
constexpr int kMaxReportedConfigs = 10;

struct GpuCase {
  std::string backend; // "cuda-local" or "nccl"
  int worldSize = 1;
  /// "activations" or "gather-weight" (W = 1 has one strategy: no
  /// collectives, one GEMM).
  std::string strategy = "activations";
};

std::string caseName(const ::testing::TestParamInfo<GpuCase> &info) {
  std::string s = info.param.backend == "nccl" ? "nccl" : "cuda_local";
  s += "_W" + std::to_string(info.param.worldSize);
  if (info.param.worldSize > 1)
    s += info.param.strategy == "gather-weight" ? "_gather_weight"
                                                : "_activations";
  return s;
}

std::vector<GpuCase> allCases() {
  std::vector<GpuCase> cases;
  for (const char *backend : {"cuda-local", "nccl"})
    for (int w = 1; w <= 8; ++w)
      for (const char *strategy : {"activations", "gather-weight"}) {
        if (w == 1 && std::string(strategy) == "gather-weight")
          continue;
        cases.push_back({backend, w, strategy});
      }
  return cases;
}

/// One rank's GPU side, kept across the configurations of a test: its
/// stream (the communicator's), device memory, cuBLAS and local ops.
struct GpuRank {
  std::shared_ptr<rt::ExecutionStream> stream;
  std::unique_ptr<rt::Allocator> allocator;
  std::unique_ptr<rt::GemmBackend> gemm;
  std::unique_ptr<rt::LocalOps> ops;
};

rt::Status makeGpuRank(const rt::Communicator &comm, GpuRank &out) {
  out.stream = rt::cudaStreamOf(comm);
  if (!out.stream)
    return rt::Status::error("communicator without a CUDA stream");
  SHARDLIN_RETURN_IF_ERROR(
      rt::createCudaAllocator(out.stream->device(), out.allocator));
  SHARDLIN_RETURN_IF_ERROR(
      rt::createCublasGemm(out.stream, rt::GemmOptions(), out.gemm));
  return rt::createCudaLocalOps(out.stream, out.ops);
}

/// The device copies of one run's arguments and result. Declared after the
/// plan that writes them, so they are freed first: both come from the
/// rank's allocator.
struct DeviceRun {
  std::vector<rt::Buffer> args;
  rt::Buffer result;
};

size_t bytesOf(const std::vector<int64_t> &shape, rt::DType t) {
  size_t n = rt::dtypeSize(t);
  for (int64_t d : shape)
    n *= static_cast<size_t>(d);
  return n;
}

/// Binds `data` for `plan`, copies it to the device, runs, copies the
/// result back into `output` (which it sizes). The device result starts as
/// 0xFF bytes (NaN), so unwritten elements fail the check.
rt::Status runOnDevice(rt::Plan &plan, const rt::Program &program,
                       const LinearConfig &config, const LinearData &data,
                       rt::Communicator &comm, GpuRank &gpu,
                       std::vector<uint8_t> &output) {
  std::vector<uint8_t> chunk;
  std::vector<const void *> hostArgs;
  SHARDLIN_RETURN_IF_ERROR(
      bindArguments(program, plan, config, data, comm.rank(), chunk, hostArgs));
  DeviceRun dev;
  dev.args.resize(hostArgs.size());
  std::vector<const void *> args;
  for (size_t i = 0; i < hostArgs.size(); ++i) {
    const size_t bytes = bytesOf(plan.argShape(i), plan.argType(i));
    SHARDLIN_RETURN_IF_ERROR(
        rt::Buffer::allocate(*gpu.allocator, bytes, dev.args[i]));
    SHARDLIN_RETURN_IF_ERROR(
        rt::copyToDevice(*gpu.stream, dev.args[i].data(), hostArgs[i], bytes));
    args.push_back(dev.args[i].data());
  }
  output = poisonedOutput(plan);
  SHARDLIN_RETURN_IF_ERROR(
      rt::Buffer::allocate(*gpu.allocator, output.size(), dev.result));
  SHARDLIN_RETURN_IF_ERROR(rt::copyToDevice(*gpu.stream, dev.result.data(),
                                            output.data(), output.size()));
  comm.resetStats();
  SHARDLIN_RETURN_IF_ERROR(
      plan.run(comm, *gpu.gemm, *gpu.ops, args, {dev.result.data()}));
  return rt::copyToHost(*gpu.stream, output.data(), dev.result.data(),
                        output.size());
}

int deviceCount() {
  int n = 0;
  return rt::cudaDeviceCount(n).isOk() ? n : 0;
}

class GpuLinear : public ::testing::TestWithParam<GpuCase> {};

/// How gtest prints a case (found by argument-dependent lookup).
void PrintTo(const GpuCase &c, std::ostream *os) {
  *os << c.backend << " W=" << c.worldSize << " " << c.strategy;
}

} // namespace

TEST_P(GpuLinear, Run) {
  const GpuCase &gc = GetParam();
  const int w = gc.worldSize;
  std::string why;
  if (!rt::cudaDevicesAvailable(&why))
    GTEST_SKIP() << "no usable CUDA device: " << why;
  if (gc.backend == "nccl") {
    if (!rt::ncclAvailable())
      GTEST_SKIP() << "this runtime was built without NCCL";
    const int n = deviceCount();
    if (n < w)
      GTEST_SKIP() << "nccl needs one GPU per rank: W = " << w << " needs " << w
                   << " GPUs, found " << n;
  }

  std::vector<LinearConfig> configs;
  for (const LinearConfig &c : threadsConfigs())
    if (c.worldSize() == w && (w == 1 || c.strategy == gc.strategy))
      configs.push_back(c);
  ASSERT_FALSE(configs.empty());

  // The GPU communicators move the data; a threads group over the same ranks
  // carries the agreement that every rank is ready (host flags, as the
  // runner does), so a rank that fails to prepare stops the others before
  // the first collective instead of leaving them to time out.
  rt::CommOptions options;
  options.timeoutSeconds = kCollectiveTimeoutSeconds;
  std::vector<std::unique_ptr<rt::Communicator>> comms;
  rt::Status made;
  if (gc.backend == "nccl") {
    std::vector<std::shared_ptr<rt::ExecutionStream>> streams(w);
    for (int r = 0; r < w && made.isOk(); ++r)
      made = rt::ExecutionStream::create(r, streams[r]);
    if (made.isOk())
      made = rt::createNcclThreadsGroup(streams, options, comms);
  } else {
    made = rt::createCudaLocalGroup(w, 0, options, comms);
  }
  ASSERT_TRUE(made.isOk()) << made.message();
  std::vector<std::unique_ptr<rt::Communicator>> agree =
      rt::createThreadsGroup(w, options);
  std::vector<GpuRank> gpus(w);
  for (int r = 0; r < w; ++r) {
    rt::Status st = makeGpuRank(*comms[r], gpus[r]);
    ASSERT_TRUE(st.isOk()) << "rank " << r << ": " << st.message();
  }

  int failedConfigs = 0;
  for (const LinearConfig &config : configs) {
    rt::Program program;
    rt::Status compiled = compileLinear(config, program);
    ASSERT_TRUE(compiled.isOk()) << config.name() << ": " << compiled.message();
    const std::vector<LinearData> runs = {makeLinearData(config, 0),
                                          makeLinearData(config, 1)};
    std::vector<std::vector<rt::Status>> status(runs.size(),
                                                std::vector<rt::Status>(w));
    std::vector<std::vector<std::vector<uint8_t>>> outputs(
        runs.size(), std::vector<std::vector<uint8_t>>(w));
    std::vector<uint64_t> bytesSent(w, 0);
    std::vector<rt::Status> built(w);

    std::vector<std::thread> threads;
    for (int r = 0; r < w; ++r)
      threads.emplace_back([&, r] {
        std::unique_ptr<rt::Plan> plan;
        built[r] = rt::Plan::build(program, r, w, *gpus[r].allocator, plan);
        double failed = built[r].isOk() ? 0.0 : 1.0;
        rt::Status agreed =
            agree[r]->allReduce(&failed, &failed, 1, rt::DType::F64);
        if (built[r].isOk() && !agreed.isOk())
          built[r] = agreed;
        else if (built[r].isOk() && failed > 0)
          built[r] = rt::Status::error(
              "stopped: another rank failed to build its plan");
        if (!built[r].isOk())
          return;
        for (size_t i = 0; i < runs.size(); ++i) {
          status[i][r] = runOnDevice(*plan, program, config, runs[i], *comms[r],
                                     gpus[r], outputs[i][r]);
          if (i == 0)
            bytesSent[r] = comms[r]->stats().bytesSent;
        }
      });
    for (std::thread &t : threads)
      t.join();

    std::string report;
    for (int r = 0; r < w; ++r) {
      const std::string who = config.name() + " rank " + std::to_string(r);
      if (!built[r].isOk()) {
        report += who + ": plan: " + built[r].message() + "\n";
        continue;
      }
      for (size_t i = 0; i < runs.size(); ++i) {
        if (!status[i][r].isOk()) {
          report += who + " run " + std::to_string(i) + ": " +
                    status[i][r].message() + "\n";
          continue;
        }
        checkOutput(config, runs[i], r, outputs[i][r], report);
      }
      if (status[0][r].isOk() && bytesSent[r] != expectedBytesSent(config, r))
        report += who + ": sent " + std::to_string(bytesSent[r]) +
                  " bytes, the chunk tables say " +
                  std::to_string(expectedBytesSent(config, r)) + "\n";
    }
    if (report.empty())
      continue;
    if (++failedConfigs <= kMaxReportedConfigs)
      ADD_FAILURE() << report;
  }
  EXPECT_EQ(failedConfigs, 0)
      << failedConfigs << " of " << configs.size() << " configurations failed";
  RecordProperty("configurations", static_cast<int>(configs.size()));
}

INSTANTIATE_TEST_SUITE_P(Backends, GpuLinear, ::testing::ValuesIn(allCases()),
                         caseName);

} // namespace shardlin::e2e
