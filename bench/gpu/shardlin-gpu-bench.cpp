//===- shardlin-gpu-bench.cpp - GPU timings of the runtime ----------------===//
//
//   shardlin-gpu-bench [--device=N] [--gemm-size=8192] [--gemm-reps=30]
//                      [--coll-sizes=64K,64M,256M] [--coll-reps=20]
//                      [--ranks=2,8]
//                      [--no-gemm] [--no-collectives]
//                      [--blocks=DIR] [--blocks-reps=20]
//                      [--blocks-backend=cuda-local|threads]
//                      [--torch-blocks=FILE] [--bias-experiments]
//
// Three measurements, runtime only (no MLIR), printed as tables; the third,
// (c) blocks, only with --blocks (GpuBlocks.h says what it does):
//
//  (a) GEMM overhead. A W = 1 sharded linear y = x A^T (+ b) of m = n = k =
//      --gemm-size (the program shardlin-run emits for it), run through the
//      in-memory run API on the cuda-local backend (its cuBLAS GEMM), against
//      a plain cublasGemmEx of the same shape and operands, for bf16 and f32
//      (f32 without TF32, as the backend runs it). The linear without and
//      with the bias are one run each; in a run, the replay hook
//      (RankCallbacks::run) times the plan and the plain call with CUDA
//      events around each call on the run's stream, after warm-up,
//      interleaved call by call so they see the same clocks; medians are
//      reported. ratio = linear / plain (1.00 = no overhead), each variant
//      against the plain calls of its own run; the plain column is the
//      median of all of them. In the run without the bias a sample of the
//      outputs is compared, so the two are known to compute the same
//      product.
//
//  (b) cuda-local collectives: W ranks as threads sharing the GPU. Each rank
//      times every call on the host (a cuda-local collective has completed
//      when it returns); rank 0's median is reported, with nccl-tests'
//      definitions: S = the all-reduce's buffer, the all-gather's whole
//      output, the reduce-scatter's whole input, the all-to-all's send
//      buffer; algbw = S / t; busbw = algbw * 2(W-1)/W for all-reduce and
//      algbw * (W-1)/W for the others. The yardstick is a device-to-device
//      cudaMemcpyAsync of S bytes measured in the same run (bandwidth S / t,
//      i.e. each byte counted once though it is read and written). On one
//      GPU every byte a collective moves is such a copy, so busbw / memcpy
//      shows how close the backend comes to the memory system's limit; as
//      the W ranks share that memory, it cannot reach 1 (oneGpuLimit gives
//      the most it can reach, and "of limit" the fraction reached). Sizes:
//      --coll-sizes (64 KiB shows the per-call latency).
//
//  (c) fused MLP and SwiGLU blocks from DIR (shardlin-write-block-suite
//      --bench) on cuda-local at each W, checked, against PyTorch's times
//      (--torch-blocks: bench/gpu/torch_gpu_blocks.py's output) for the same
//      blocks on the same GPU. --blocks-backend=threads runs it on the CPU
//      instead (the self-test: no GPU needed with --no-gemm
//      --no-collectives).
//
//  (d) --bias-experiments: which cuBLAS settings give a bf16 GEMM with a
//      bias one rounding, and at what cost (BiasExperiments.h).
//
// Every CUDA, cuBLAS and runtime call is checked; the first failure prints
// one line and exits 1.
//
//===----------------------------------------------------------------------===//

#include "BiasExperiments.h"
#include "GpuBenchSupport.h"
#include "GpuBenchOptions.h"
#include "GpuBlocks.h"

#include "shardlin/runtime/backends/Registry.h"
#include "shardlin/runtime/program/ProgramText.h"
#include "shardlin/runtime/backends/Cuda.h"
#include "shardlin/runtime/exec/Execute.h"
#include "shardlin/runtime/program/Program.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace rt = shardlin::rt;
using shardlin::gpubench::fixed;
using shardlin::gpubench::median;
using shardlin::gpubench::Table;
using shardlin::gpubench::Options;
using shardlin::gpubench::parseOptions;

namespace {

[[noreturn]] void die(const std::string &message) {
  std::cerr << ("shardlin-gpu-bench: error: " + message + "\n") << std::flush;
  std::exit(1);
}

void check(const rt::Status &st, const std::string &what) {
  if (!st.isOk())
    die(what + ": " + st.message());
}

void checkCuda(cudaError_t e, const char *call) {
  if (e != cudaSuccess)
    die(std::string(call) + " failed: " + cudaGetErrorName(e) + " (" +
        cudaGetErrorString(e) + ")");
}

void checkCublas(cublasStatus_t s, const char *call) {
  if (s != CUBLAS_STATUS_SUCCESS)
    die(std::string(call) + " failed: " + cublasGetStatusName(s) + " (" +
        cublasGetStatusString(s) + ")");
}

#define CUDA_CHECK(expr) checkCuda((expr), #expr)
#define CUBLAS_CHECK(expr) checkCublas((expr), #expr)


/// Timing events (created with timing, destroyed with the object).
class EventPair {
public:
  EventPair() {
    CUDA_CHECK(cudaEventCreate(&start_));
    CUDA_CHECK(cudaEventCreate(&stop_));
  }
  ~EventPair() {
    (void)cudaEventDestroy(start_);
    (void)cudaEventDestroy(stop_);
  }
  EventPair(const EventPair &) = delete;
  EventPair &operator=(const EventPair &) = delete;
  void start(cudaStream_t s) { CUDA_CHECK(cudaEventRecord(start_, s)); }
  void stop(cudaStream_t s) { CUDA_CHECK(cudaEventRecord(stop_, s)); }
  /// Milliseconds between the two (both must have completed).
  double ms() const {
    float t = 0;
    CUDA_CHECK(cudaEventElapsedTime(&t, start_, stop_));
    return t;
  }

private:
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
};

class CublasHandle {
public:
  CublasHandle() { CUBLAS_CHECK(cublasCreate(&h_)); }
  ~CublasHandle() { (void)cublasDestroy(h_); }
  CublasHandle(const CublasHandle &) = delete;
  CublasHandle &operator=(const CublasHandle &) = delete;
  cublasHandle_t get() const { return h_; }

private:
  cublasHandle_t h_ = nullptr;
};

cudaStream_t native(const rt::ExecutionStream &s) {
  return static_cast<cudaStream_t>(s.nativeHandle());
}

/// Fills `elements` of device memory with random values of `dtype` in
/// +-[0.25, 1]: one random tile made on the host, copied over and over (the
/// values only need to be realistic for the tensor cores, not independent).
rt::Status fillRandom(rt::RankDevice &device, void *dst, size_t elements,
                      rt::DType dtype, uint64_t seed) {
  const size_t tile = std::min<size_t>(elements, size_t(1) << 20);
  std::vector<double> values(tile);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> mag(0.25, 1.0);
  for (double &v : values)
    v = (rng() & 1 ? -1 : 1) * mag(rng);
  const size_t es = rt::dtypeSize(dtype);
  std::vector<unsigned char> bytes(tile * es);
  rt::convertFromF64(dtype, values.data(), bytes.data(), tile);
  for (size_t at = 0; at < elements; at += tile) {
    const size_t n = std::min(tile, elements - at);
    SHARDLIN_RETURN_IF_ERROR(device.copyFromHost(
        static_cast<unsigned char *>(dst) + at * es, bytes.data(), n * es));
  }
  return rt::Status::ok();
}

/// The program `shardlin-run --emit-program` writes for a W = 1 linear
/// y[m x n] = x[m x k] A[n x k]^T (+ b[n]): the weight's one chunk is the
/// whole weight, so it is one GEMM (bias fused) and no collective.
std::string linearProgram(rt::DType t, int64_t m, int64_t n, int64_t k,
                          bool bias) {
  const std::string d = rt::dtypeName(t);
  const std::string M = std::to_string(m), N = std::to_string(n),
                    K = std::to_string(k);
  std::string s = "shardlin-program v1\nname main\nworld_size 1\n";
  s += bias ? "values 5\n" : "values 4\n";
  int v = 0;
  auto value = [&](const std::string &dims) {
    s += "value " + std::to_string(v++) + " " + d + " " + dims + "\n";
  };
  value("2 " + M + " " + K); // x
  value("2 " + N + " " + K); // A (sharded, one chunk)
  if (bias)
    value("1 " + N);         // b
  value("2 " + N + " " + K); // local shard of A
  value("2 " + M + " " + N); // y
  const int shard = bias ? 3 : 2, y = bias ? 4 : 3;
  s += "arg 0 plain\narg 1 sharded 2 " + N + " " + K + " spec 1 1 0\n";
  if (bias)
    s += "arg 2 plain\n";
  s += "instr local_shard result " + std::to_string(shard) + " operands 1 1\n";
  s += "instr gemm result " + std::to_string(y) + " operands " +
       (bias ? "3 0 " + std::to_string(shard) + " 2"
             : "2 0 " + std::to_string(shard)) +
       " trans 0 1\n";
  s += "results 1 " + std::to_string(y) + "\nend\n";
  return s;
}

//===----------------------------------------------------------------------===//
// (a) GEMM
//===----------------------------------------------------------------------===//

/// The CUDA event times (ms) of one run: the plan's calls and the plain
/// cublasGemmEx calls interleaved with them; and, for the linear without
/// the bias, the largest relative difference between the two outputs over a
/// sample (-1 when not compared).
struct GemmTimes {
  std::vector<double> plain, linear;
  double worst = -1;
};

/// One run of the W = 1 linear of dtype `t` (with the bias or not) on
/// cuda-local through the run API; the replay hook times it.
GemmTimes timeLinear(const Options &o, rt::DType t, bool bias) {
  const int64_t m = o.gemmSize, n = o.gemmSize, k = o.gemmSize;
  const int warmup = 5;
  const size_t es = rt::dtypeSize(t);
  rt::Program program;
  check(rt::parseProgram(linearProgram(t, m, n, k, bias), program),
        "the W = 1 program");
  rt::RunOptions options;
  options.backend = "cuda-local";
  options.worldSize = 1;
  options.device = o.device;

  // Device memory of the run's rank, freed in release while its device
  // lives.
  rt::Buffer x, w, b, yPlain, yLinear;
  GemmTimes times;
  rt::RankCallbacks callbacks;
  callbacks.bind = [&](const rt::Plan &, rt::RankDevice &device,
                       rt::RankBuffers &buffers) -> rt::Status {
    rt::Allocator &alloc = device.allocator();
    SHARDLIN_RETURN_IF_ERROR(
        rt::Buffer::allocate(alloc, size_t(m * k) * es, x));
    SHARDLIN_RETURN_IF_ERROR(
        rt::Buffer::allocate(alloc, size_t(n * k) * es, w));
    SHARDLIN_RETURN_IF_ERROR(rt::Buffer::allocate(alloc, size_t(n) * es, b));
    SHARDLIN_RETURN_IF_ERROR(
        rt::Buffer::allocate(alloc, size_t(m * n) * es, yPlain));
    SHARDLIN_RETURN_IF_ERROR(
        rt::Buffer::allocate(alloc, size_t(m * n) * es, yLinear));
    SHARDLIN_RETURN_IF_ERROR(fillRandom(device, x.data(), size_t(m * k), t, 1));
    SHARDLIN_RETURN_IF_ERROR(fillRandom(device, w.data(), size_t(n * k), t, 2));
    SHARDLIN_RETURN_IF_ERROR(fillRandom(device, b.data(), size_t(n), t, 3));
    buffers.args = {x.data(), w.data()};
    if (bias)
      buffers.args.push_back(b.data());
    buffers.results = {yLinear.data()};
    return rt::Status::ok();
  };
  callbacks.run = [&](rt::RankRun &run) -> rt::Status {
    std::shared_ptr<rt::ExecutionStream> stream = rt::cudaStreamOf(run.comm());
    if (!stream)
      return rt::Status::internal("the cuda-local communicator has no stream");
    const cudaStream_t s = native(*stream);
    // The current device is per thread, and this is the rank's thread.
    CUDA_CHECK(cudaSetDevice(o.device));
    CublasHandle plain;
    CUBLAS_CHECK(cublasSetStream(plain.get(), s));
    const float one = 1.0f, zero = 0.0f;
    const cudaDataType_t ct = t == rt::DType::BF16 ? CUDA_R_16BF : CUDA_R_32F;
    auto runPlain = [&] {
      // Row-major y = x A^T is the column-major y^T = A x^T (see
      // CublasGemm.cpp): A read transposed, x as is.
      CUBLAS_CHECK(cublasGemmEx(
          plain.get(), CUBLAS_OP_T, CUBLAS_OP_N, int(n), int(m), int(k), &one,
          w.data(), ct, int(k), x.data(), ct, int(k), &zero, yPlain.data(), ct,
          int(n), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    };
    auto runLinear = [&] { check(run.execute(), "plan run"); };

    for (int i = 0; i < warmup; ++i) {
      runPlain();
      runLinear();
    }
    check(stream->synchronize(), "warm-up");
    std::vector<std::unique_ptr<EventPair>> events;
    for (int i = 0; i < 2 * o.gemmReps; ++i)
      events.push_back(std::make_unique<EventPair>());
    for (int i = 0; i < o.gemmReps; ++i) {
      events[2 * i]->start(s);
      runPlain();
      events[2 * i]->stop(s);
      events[2 * i + 1]->start(s);
      runLinear();
      events[2 * i + 1]->stop(s);
    }
    check(stream->synchronize(), "timed runs");
    for (int i = 0; i < o.gemmReps; ++i) {
      times.plain.push_back(events[2 * i]->ms());
      times.linear.push_back(events[2 * i + 1]->ms());
    }
    if (bias)
      return rt::Status::ok();

    // The last call of each left its product: compare a sample.
    const size_t sample = std::min<size_t>(size_t(m * n), 1 << 16);
    std::vector<unsigned char> a(sample * es), c(sample * es);
    SHARDLIN_RETURN_IF_ERROR(
        run.device().copyToHost(a.data(), yPlain.data(), a.size()));
    SHARDLIN_RETURN_IF_ERROR(
        run.device().copyToHost(c.data(), yLinear.data(), c.size()));
    std::vector<double> av(sample), cv(sample);
    rt::convertToF64(t, a.data(), av.data(), sample);
    rt::convertToF64(t, c.data(), cv.data(), sample);
    times.worst = 0;
    for (size_t i = 0; i < sample; ++i)
      times.worst = std::max(times.worst,
                             std::fabs(av[i] - cv[i]) /
                                 std::max(std::fabs(av[i]), 1e-30));
    return rt::Status::ok();
  };
  callbacks.release = [&](int) {
    x = rt::Buffer();
    w = rt::Buffer();
    b = rt::Buffer();
    yPlain = rt::Buffer();
    yLinear = rt::Buffer();
  };
  check(rt::runProgram(program, options, callbacks),
        std::string("the W = 1 linear") + (bias ? " with the bias" : ""));
  return times;
}

void benchGemm(const Options &o, Table &table) {
  const int64_t m = o.gemmSize, n = o.gemmSize, k = o.gemmSize;
  const double flops = 2.0 * double(m) * double(n) * double(k);
  for (rt::DType t : {rt::DType::BF16, rt::DType::F32}) {
    const GemmTimes linear = timeLinear(o, t, false);
    const GemmTimes biased = timeLinear(o, t, true);
    std::vector<double> allPlain = linear.plain;
    allPlain.insert(allPlain.end(), biased.plain.begin(), biased.plain.end());
    const double p = median(allPlain), l = median(linear.linear),
                 lb = median(biased.linear);
    const double ratio = l / median(linear.plain),
                 ratioBias = lb / median(biased.plain);
    const std::string shape =
        std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
    table.add({std::string(rt::dtypeName(t)) +
                   (t == rt::DType::F32 ? " (no TF32)" : ""),
               shape, fixed(p, 3), fixed(flops / p * 1e-9, 1), fixed(l, 3),
               fixed(flops / l * 1e-9, 1), fixed(ratio, 3), fixed(lb, 3),
               fixed(ratioBias, 3), fixed(linear.worst, 6)});
  }
}

//===----------------------------------------------------------------------===//
// (b) cuda-local collectives
//===----------------------------------------------------------------------===//

enum class Coll { AllReduce, AllGather, ReduceScatter, AllToAll };

const char *collName(Coll c) {
  switch (c) {
  case Coll::AllReduce:
    return "all_reduce";
  case Coll::AllGather:
    return "all_gather";
  case Coll::ReduceScatter:
    return "reduce_scatter";
  case Coll::AllToAll:
    return "all_to_all";
  }
  return "?";
}

double memcpyBandwidth(const Options &o, size_t bytes, double &msOut) {
  std::shared_ptr<rt::ExecutionStream> stream;
  check(rt::ExecutionStream::create(o.device, stream), "stream");
  std::unique_ptr<rt::Allocator> alloc;
  check(rt::createCudaAllocator(o.device, alloc), "allocator");
  rt::Buffer src, dst;
  check(rt::Buffer::allocate(*alloc, bytes, src), "memcpy source");
  check(rt::Buffer::allocate(*alloc, bytes, dst), "memcpy destination");
  CUDA_CHECK(cudaSetDevice(o.device));
  const cudaStream_t s = native(*stream);
  CUDA_CHECK(cudaMemsetAsync(src.data(), 1, bytes, s));
  for (int i = 0; i < 3; ++i)
    CUDA_CHECK(cudaMemcpyAsync(dst.data(), src.data(), bytes,
                               cudaMemcpyDeviceToDevice, s));
  std::vector<std::unique_ptr<EventPair>> events;
  for (int i = 0; i < o.collReps; ++i) {
    events.push_back(std::make_unique<EventPair>());
    events.back()->start(s);
    CUDA_CHECK(cudaMemcpyAsync(dst.data(), src.data(), bytes,
                               cudaMemcpyDeviceToDevice, s));
    events.back()->stop(s);
  }
  check(stream->synchronize(), "memcpy");
  std::vector<double> t;
  for (auto &e : events)
    t.push_back(e->ms());
  msOut = median(t);
  return double(bytes) / (msOut * 1e-3) * 1e-9;
}

/// The most busbw / memcpy a collective can reach with its W ranks on one
/// GPU, where every byte it moves goes through the same memory: at least
/// the device bytes it must move (out of place; each byte read and written
/// counted once, (read + written) / 2, as the memcpy's S / t counts them),
/// at the copy's bandwidth. nccl-tests' busbw assumes a link per rank, so
/// on one GPU busbw / memcpy cannot reach 1:
///   all_gather, all_to_all: each rank reads and writes S: W S moved,
///     busbw = (W-1)/W S / t <= (W-1)/W^2 of the copy bandwidth;
///   reduce_scatter: W S read, S written: (W+1) S / 2 moved,
///     busbw = (W-1)/W S / t <= 2(W-1) / (W(W+1));
///   all_reduce: W S read, W S written (one pass: every output element is
///     the sum of the W inputs' elements): W S moved,
///     busbw = 2(W-1)/W S / t <= 2(W-1)/W^2.
/// 0 for W = 1 (busbw is 0: nothing crosses ranks).
double oneGpuLimit(Coll c, int w) {
  const double W = w;
  switch (c) {
  case Coll::AllGather:
  case Coll::AllToAll:
    return (W - 1) / (W * W);
  case Coll::ReduceScatter:
    return 2 * (W - 1) / (W * (W + 1));
  case Coll::AllReduce:
    return 2 * (W - 1) / (W * W);
  }
  return 0;
}

std::string sizeText(size_t bytes) {
  return bytes % (size_t(1) << 20) == 0
             ? std::to_string(bytes >> 20) + " MiB"
             : std::to_string(bytes >> 10) + " KiB";
}

void benchCollectivesAt(const Options &o, size_t bytes, Table &table) {
  const rt::DType t = rt::DType::F32;
  const size_t es = rt::dtypeSize(t);
  double memcpyMs = 0;
  const double copyGBs = memcpyBandwidth(o, bytes, memcpyMs);
  table.add({"memcpy D2D", "-", sizeText(bytes), fixed(memcpyMs * 1e3, 1),
             fixed(copyGBs, 1), fixed(copyGBs, 1), "1.000", "-", "-"});

  for (int w : o.ranks) {
    std::vector<std::unique_ptr<rt::Communicator>> comms;
    rt::CommOptions options;
    options.timeoutSeconds = 120;
    check(rt::createCudaLocalGroup(w, o.device, options, comms),
          "cuda-local group of " + std::to_string(w));
    for (Coll c : {Coll::AllReduce, Coll::AllGather, Coll::ReduceScatter,
                   Coll::AllToAll}) {
      // Elements of S, rounded down to a multiple of W so that every rank's
      // block is equal (nccl-tests does the same).
      const int64_t total = int64_t(bytes / es) / w * w;
      const int64_t block = total / w;
      std::vector<double> times;
      std::vector<std::string> errors(w);
      std::vector<std::thread> threads;
      for (int r = 0; r < w; ++r)
        threads.emplace_back([&, r] {
          rt::Communicator &comm = *comms[r];
          std::unique_ptr<rt::Allocator> alloc;
          rt::Status st = rt::createCudaAllocator(o.device, alloc);
          rt::Buffer send, recv;
          const int64_t sendCount =
              c == Coll::AllGather ? block : total; // in elements
          const int64_t recvCount = c == Coll::ReduceScatter ? block : total;
          if (st.isOk())
            st = rt::Buffer::allocate(*alloc, size_t(sendCount) * es, send);
          if (st.isOk())
            st = rt::Buffer::allocate(*alloc, size_t(recvCount) * es, recv);
          std::shared_ptr<rt::ExecutionStream> stream = rt::cudaStreamOf(comm);
          // Defined contents (every float 0x3F3F3F3F, about 0.75): the
          // values do not matter to the timing, only that sums stay finite.
          // The current device is per thread.
          if (st.isOk()) {
            cudaError_t e = cudaSetDevice(o.device);
            if (e == cudaSuccess && sendCount > 0)
              e = cudaMemsetAsync(send.data(), 0x3F, size_t(sendCount) * es,
                                  native(*stream));
            if (e != cudaSuccess)
              st = rt::Status::internal(std::string("filling the send buffer: ") +
                                     cudaGetErrorString(e));
            else
              st = stream->synchronize();
          }
          std::vector<int64_t> counts(w, block), displs(w);
          for (int p = 0; p < w; ++p)
            displs[p] = p * block;
          auto once = [&]() -> rt::Status {
            switch (c) {
            case Coll::AllReduce:
              return comm.allReduce(send.data(), recv.data(), total, t);
            case Coll::AllGather:
              return comm.allGatherV(send.data(), block, recv.data(), counts,
                                     displs, t);
            case Coll::ReduceScatter:
              return comm.reduceScatterV(send.data(), counts, displs,
                                         recv.data(), t);
            case Coll::AllToAll:
              return comm.allToAllV(send.data(), counts, displs, recv.data(),
                                    counts, displs, t);
            }
            return rt::Status::internal("unknown collective");
          };
          // Every rank makes the same calls even after a local failure (a
          // skipped call would leave the others waiting until the timeout).
          std::vector<double> mine;
          for (int i = 0; i < 3 + o.collReps; ++i) {
            const auto t0 = std::chrono::steady_clock::now();
            rt::Status called = st.isOk() ? once() : comm.barrier();
            const auto t1 = std::chrono::steady_clock::now();
            if (st.isOk() && !called.isOk())
              st = called;
            if (i >= 3)
              mine.push_back(std::chrono::duration<double>(t1 - t0).count());
          }
          if (!st.isOk())
            errors[r] = st.message();
          if (r == 0)
            times = mine;
        });
      for (auto &th : threads)
        th.join();
      for (int r = 0; r < w; ++r)
        if (!errors[r].empty())
          die(std::string(collName(c)) + " W=" + std::to_string(w) + " rank " +
              std::to_string(r) + ": " + errors[r]);
      const double sec = median(times);
      const double sBytes = double(total) * double(es);
      const double algbw = sBytes / sec * 1e-9;
      const double factor =
          c == Coll::AllReduce ? 2.0 * (w - 1) / w : double(w - 1) / w;
      const double busbw = algbw * factor;
      const double limit = oneGpuLimit(c, w);
      table.add({collName(c), std::to_string(w), sizeText(size_t(sBytes)),
                 fixed(sec * 1e6, 1), fixed(algbw, 1), fixed(busbw, 1),
                 fixed(busbw / copyGBs, 3),
                 limit > 0 ? fixed(limit, 3) : "-",
                 limit > 0 ? fixed(busbw / copyGBs / limit, 3) : "-"});
    }
  }
}

void benchCollectives(const Options &o, Table &table) {
  for (size_t bytes : o.collBytes)
    benchCollectivesAt(o, bytes, table);
}


} // namespace

int main(int argc, char **argv) {
  Options o = parseOptions(argc, argv);
  o.blocks.device = o.device;
  // Only the CPU self-test of the blocks section runs without a GPU.
  const bool cpuOnly = !o.gemm && !o.collectives && !o.biasExperiments &&
                       !o.blocks.dir.empty() && o.blocks.backend == "threads";
  std::string why;
  if (cpuOnly)
    std::cout << "shardlin-gpu-bench: the blocks section on threads (CPU "
                 "self-test)\n";
  else if (!rt::cudaDevicesAvailable(&why))
    die("no usable CUDA device: " + why);
  else
    std::cout << "shardlin-gpu-bench: " << rt::describeCudaDevices()
              << "; using cuda:" << o.device << "\n";
  if (o.gemm) {
    Table table({"dtype", "m x n x k", "cublasGemmEx ms", "TFLOP/s",
                 "linear W=1 ms", "linear TFLOP/s", "linear/plain",
                 "linear+bias ms", "linear+bias/plain", "max rel diff"});
    benchGemm(o, table);
    std::cout << "\n(a) GEMM: W = 1 sharded linear (run API, cuda-local, "
                 "cuBLAS) vs plain cublasGemmEx, median of "
              << o.gemmReps
              << " per variant (CUDA events, after 5 warm-up; each ratio "
                 "against the plain calls of its run)\n";
    table.print();
  }
  if (o.collectives) {
    Table table({"collective", "W", "S", "time us", "algbw GB/s", "busbw GB/s",
                 "busbw / memcpy", "1-GPU limit", "of limit"});
    benchCollectives(o, table);
    std::cout << "\n(b) cuda-local collectives (f32, W ranks on one GPU) vs "
                 "device-to-device cudaMemcpy of S, median of "
              << o.collReps
              << " (host clock, after 3 warm-up); 1-GPU limit: the most "
                 "busbw / memcpy a collective can reach when its W ranks "
                 "share one GPU's memory (oneGpuLimit), of limit: the "
                 "fraction of it reached\n";
    table.print();
  }
  const bool blocksPassed =
      o.blocks.dir.empty() || shardlin::gpubench::runBlocksSection(o.blocks);
  if (o.biasExperiments)
    shardlin::gpubench::runBiasExperiments(o.device, o.gemmSize, o.gemmReps);
  return blocksPassed ? 0 : 1;
}
