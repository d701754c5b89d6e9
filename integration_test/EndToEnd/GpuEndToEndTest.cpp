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
// its W and strategy:
//  - cuda-local: W ranks as threads sharing cuda:0, W = 1..8;
//  - nccl: one GPU per rank, for every W up to the number of GPUs present.
// Each configuration is one run of the in-memory run API (rt::runProgram on
// the backend, as shardlin-run does): bind allocates the rank's device
// buffers and copies the first inputs in before the ranks agree that all
// are ready; the replay hook (RankCallbacks::run) then runs the plan twice
// with different inputs (compile once, run many), copying each output
// back, and each rank's traffic in the first run must equal the bytes the
// chunk tables give (expectedBytesSent).
//
// Without a usable GPU (or, for nccl, without enough GPUs or without NCCL
// in the build) every test skips with the reason. These tests need MLIR
// (they compile the configurations), so they run where both LLVM/MLIR 22
// and a GPU are; the GPU machine without LLVM runs the same kind of
// configurations from compiled programs (scripts/gpu-check.sh).
//
//===----------------------------------------------------------------------===//

#include "E2ESupport.h"

#include "shardlin/runtime/backends/Registry.h"
#include "shardlin/runtime/base/Buffer.h"
#include "shardlin/runtime/backends/Cuda.h"
#include "shardlin/runtime/exec/Execute.h"

#include <gtest/gtest.h>

#include <memory>
#include <ostream>
#include <string>
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

/// One rank's device buffers and the host data they are copied from (kept
/// until the copies are done: the next copy or the output's copy back waits
/// for them). The device memory comes from the rank's device and is freed
/// in release, while the device is alive.
struct RankState {
  std::vector<rt::Buffer> args;
  rt::Buffer result;
  std::vector<uint8_t> chunk, poison;
};

size_t bytesOf(const std::vector<int64_t> &shape, rt::DType t) {
  size_t n = rt::dtypeSize(t);
  for (int64_t d : shape)
    n *= static_cast<size_t>(d);
  return n;
}

/// Allocates the rank's device buffers for `plan` (once) and fills them in
/// `buffers` with `data`'s arguments; the result starts as 0xFF bytes (NaN),
/// so unwritten elements fail the check.
rt::Status copyInputs(const rt::Plan &plan, const rt::Program &program,
                      const LinearConfig &config, const LinearData &data,
                      rt::RankDevice &device, RankState &state,
                      rt::RankBuffers &buffers) {
  std::vector<const void *> hostArgs;
  SHARDLIN_RETURN_IF_ERROR(bindArguments(program, plan, config, data,
                                         plan.rank(), state.chunk, hostArgs));
  state.poison = poisonedOutput(plan);
  if (state.args.empty()) {
    state.args.resize(hostArgs.size());
    for (size_t i = 0; i < hostArgs.size(); ++i)
      SHARDLIN_RETURN_IF_ERROR(rt::Buffer::allocate(
          device.allocator(), bytesOf(plan.argShape(i), plan.argType(i)),
          state.args[i]));
    SHARDLIN_RETURN_IF_ERROR(rt::Buffer::allocate(
        device.allocator(), state.poison.size(), state.result));
  }
  buffers.args.clear();
  for (size_t i = 0; i < hostArgs.size(); ++i) {
    SHARDLIN_RETURN_IF_ERROR(device.copyFromHost(
        state.args[i].data(), hostArgs[i], state.args[i].bytes()));
    buffers.args.push_back(state.args[i].data());
  }
  buffers.results = {state.result.data()};
  return device.copyFromHost(state.result.data(), state.poison.data(),
                             state.poison.size());
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

  // The backend's runner makes the GPU communicators, which move the data,
  // and a threads group over the same ranks that carries the agreement that
  // every rank is ready (host flags), so a rank that fails to prepare stops
  // the others before the first collective instead of leaving them to time
  // out.
  rt::RunOptions options;
  options.backend = gc.backend;
  options.worldSize = w;
  options.device = 0; // cuda-local: the shared GPU; nccl: the first of W
  options.comm.timeoutSeconds = kCollectiveTimeoutSeconds;

  int failedConfigs = 0;
  for (const LinearConfig &config : configs) {
    rt::Program program;
    rt::Status compiled = compileLinear(config, program);
    ASSERT_TRUE(compiled.isOk()) << config.name() << ": " << compiled.message();
    const std::vector<LinearData> runs = {makeLinearData(config, 0),
                                          makeLinearData(config, 1)};
    std::vector<std::vector<std::vector<uint8_t>>> outputs(
        runs.size(), std::vector<std::vector<uint8_t>>(w));
    std::vector<size_t> completed(w, 0); // runs whose output came back
    std::vector<uint64_t> bytesSent(w, 0);
    std::vector<RankState> states(w);

    rt::RankCallbacks callbacks;
    callbacks.bind = [&](const rt::Plan &plan, rt::RankDevice &device,
                         rt::RankBuffers &buffers) {
      return copyInputs(plan, program, config, runs[0], device,
                        states[plan.rank()], buffers);
    };
    callbacks.run = [&](rt::RankRun &run) {
      const int r = run.plan().rank();
      for (size_t i = 0; i < runs.size(); ++i) {
        if (i > 0)
          SHARDLIN_RETURN_IF_ERROR(copyInputs(run.plan(), program, config,
                                              runs[i], run.device(), states[r],
                                              run.buffers()));
        SHARDLIN_RETURN_IF_ERROR(run.execute().withContext(
            "run " + std::to_string(i)));
        if (i == 0)
          bytesSent[r] = run.lastStats().bytesSent;
        std::vector<uint8_t> &output = outputs[i][r];
        output.resize(states[r].poison.size());
        SHARDLIN_RETURN_IF_ERROR(
            run.device()
                .copyToHost(output.data(), states[r].result.data(),
                            output.size())
                .withContext("run " + std::to_string(i)));
        completed[r] = i + 1;
      }
      return rt::Status::ok();
    };
    callbacks.release = [&](int r) { states[r] = RankState(); };
    std::vector<rt::RankResult> ranks;
    rt::Status ran = rt::runProgram(program, options, callbacks, &ranks);

    std::string report;
    if (ranks.size() != size_t(w))
      report += config.name() + ": " + ran.message() + "\n";
    for (size_t r = 0; r < ranks.size(); ++r) {
      const std::string who = config.name() + " rank " + std::to_string(r);
      for (size_t i = 0; i < completed[r]; ++i)
        checkOutput(config, runs[i], int(r), outputs[i][r], report);
      if (!ranks[r].status.isOk())
        report += who + ": " + ranks[r].status.message() + "\n";
      if (completed[r] > 0 && bytesSent[r] != expectedBytesSent(config, int(r)))
        report += who + ": sent " + std::to_string(bytesSent[r]) +
                  " bytes, the chunk tables say " +
                  std::to_string(expectedBytesSent(config, int(r))) + "\n";
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
