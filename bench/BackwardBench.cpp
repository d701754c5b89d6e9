//===- BackwardBench.cpp - Blocks' backward and training step, DTensor's --===//
//
// The backward and training-step rows of the blocks section (issue 26): the
// blocks of the forward rows (BlocksCommon.h), differentiated by
// --shardlin-generate-backward with every forward value saved
// (recompute=never), for the same three lowerings (fused, unfused,
// gather-weight) in interleaved rounds, on the threads backend, one BLAS
// thread per rank. Per variant, one run: @main_forward_saving is bound
// (RankCallbacks::run), executed once, and inside its run hook each rank
// runs @main_backward (rt::runRank on the same communicator and device)
// whose arguments are the forward's own buffers (@main's arguments, then dy,
// then the forward's saved results: nothing is copied between them). Two
// measurements with the linear section's protocol (timeOnRank):
//   backward  @main_backward alone (the saved values stay as they are);
//   step      @main_forward_saving then @main_backward (forward + backward).
// Bytes sent per rank and run are measured by the communicator and must
// equal the backward cost model exactly (estimateFusedBlockBackwardCost,
// estimateBackwardCost per linear otherwise); the step's must equal the
// forward's (expectedBlockBytes) plus the backward's. The fused backward's
// must also equal 2 (W-1) B H 4 plus the col-wise biases' chunks
// ((W-1) f_r 4 each), and the same block recomputing its forward values
// (recompute=always, run once for its bytes) must send (W-1) B H 4 more: the
// re-gather of x. Gradients of every rank are checked once against the
// float64 reference of GradTesting.h (every gradient, gradErrorBound) where
// the reference is cheap (BlockCase::cheapReference).
//
// PyTorch: bench/torch_blocks.py --backward runs the same blocks with the
// same Megatron-SP plan and times forward + loss.backward() and, with the
// graph kept, loss.backward() alone (one launch per W).
//
//===----------------------------------------------------------------------===//

#include "BenchCommon.h"
#include "BlocksCommon.h"

#include "GradTesting.h"

#include "shardlin/Analysis/CostModel.h"
#include "shardlin/runtime/backends/Registry.h"
#include "shardlin/runtime/base/Buffer.h"
#include "shardlin/runtime/base/ChunkLayout.h"
#include "shardlin/runtime/exec/Execute.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <map>

namespace shardlin::bench {

namespace {

using testkit::BlockKind;

/// The bytes each rank sends in one run of the block's backward, with
/// every forward value saved or (`recompute`) recomputed, from the
/// backward cost model.
std::vector<uint64_t> backwardBytes(const testkit::BlockSpec &s,
                                    bool recompute) {
  const int w = s.worldSize();
  const int64_t e = int64_t(rt::dtypeSize(s.dtype));
  if (testkit::blockIsFused(s)) {
    // rows, k, f, n (H -> F -> H), the col-wise linears, the placements.
    BlockShape b{s.rows(), s.h, s.f, s.h, s.colLinears(), s.placements, e};
    return estimateFusedBlockBackwardCost(b, MachineModel(), recompute,
                                          s.colBias ? s.colLinears() : 0)
        .bytesSent;
  }
  const Strategy st = std::string(s.strategy) == "gather-weight"
                          ? Strategy::GatherWeight
                          : Strategy::Activations;
  LinearShape col{s.rows(), s.f, s.h, 0, s.placements, e};
  LinearShape row{s.rows(), s.h, s.f, 1, s.rowWeightPlacements(), e};
  std::vector<uint64_t> c =
      estimateBackwardCost(col, st, MachineModel(), recompute, s.colBias)
          .bytesSent;
  std::vector<uint64_t> r =
      estimateBackwardCost(row, st, MachineModel(), recompute, s.rowBias)
          .bytesSent;
  std::vector<uint64_t> out(size_t(w), 0);
  for (int i = 0; i < w; ++i)
    out[size_t(i)] = uint64_t(s.colLinears()) * c[size_t(i)] + r[size_t(i)];
  // An unfused SwiGLU's two col-wise linears gather x once (the lowering's
  // collective simplification, docs/lowering.md): their dx partial sums are
  // added first and reduce-scattered once, (W-1) B H elements less.
  if (s.colLinears() > 1 && st == Strategy::Activations)
    for (int i = 0; i < w; ++i)
      out[size_t(i)] -= uint64_t(s.colLinears() - 1) * uint64_t(w - 1) *
                        uint64_t(s.rows()) * uint64_t(s.h) * uint64_t(e);
  return out;
}

/// The figure for a fused block's backward, per rank: 2 (W-1) B H
/// elements (dy's all_gather, dx's reduce_scatter), each col-wise bias's
/// chunks (W-1) f_r, and with `recompute` the re-gather of x, (W-1) B H.
std::vector<uint64_t> fusedBackwardFormula(const BlockCase &c, bool recompute) {
  const uint64_t w = uint64_t(c.w), b = uint64_t(c.rows), h = uint64_t(c.h);
  const int cols = c.kind == BlockKind::SwiGlu ? 2 : 1;
  std::vector<int64_t> placements(size_t(c.w));
  for (int r = 0; r < c.w; ++r)
    placements[size_t(r)] = r;
  rt::ChunkLayout layout(c.f, placements);
  std::vector<uint64_t> out;
  for (int r = 0; r < c.w; ++r)
    out.push_back(((recompute ? 3 : 2) * (w - 1) * b * h +
                   uint64_t(cols) * (w - 1) * uint64_t(layout.ofRank(r).size)) *
                  4);
  return out;
}

/// The CPU time the calling thread has used, in seconds (user and system;
/// not the time it waited for a core or in a blocking collective).
double threadCpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

/// What one variant of a shape measured.
struct BackwardResult {
  std::vector<double> backward, step;       // one median per round, s per run
  /// Per round: the rank threads' CPU time per run of @main_backward (each
  /// rank's median over the timed calls, summed over the ranks). On a
  /// machine shared with other work it is what the ranks computed and
  /// copied, without the waits for a core that the wall times include.
  std::vector<double> backwardCpu;
  std::vector<uint64_t> bwBytes, stepBytes; // per rank, one run
  std::vector<uint64_t> bwPredicted, stepPredicted;
  bool consistent = true;
  int64_t checkFailures = 0;
  std::string report, error;

  bool bytesMatch() const {
    return consistent && bwBytes == bwPredicted && stepBytes == stepPredicted;
  }
};

/// One shape: its variants' programs and results.
struct BackwardRow {
  BlockCase c;
  testkit::GradCase grad[kNumBlockVariants];
  testkit::BackwardPrograms programs[kNumBlockVariants];
  BackwardResult v[kNumBlockVariants];
  /// The fused block recomputing its forward values: bytes of one run.
  std::vector<uint64_t> recomputeBytes, recomputePredicted;
  bool check = false;
  std::string error;
  bool haveTorch = false;
  double torchForward = 0, torchStep = 0, torchBackward = 0, torchError = 0;
};

testkit::GradCase gradCaseOf(const BlockCase &c, const BlockVariant &v,
                             const char *recompute) {
  testkit::GradCase g;
  g.model = testkit::GradCase::Model::Block;
  g.block = c.spec(v);
  g.recompute = recompute;
  return g;
}

/// Allocates `bytes` on the rank's device, copies `host` (if any) there,
/// keeps the buffer in `keep` and returns its address.
rt::Status upload(rt::RankDevice &device, const std::vector<uint8_t> &host,
                  size_t bytes, std::vector<rt::Buffer> &keep, void *&out) {
  keep.emplace_back();
  SHARDLIN_RETURN_IF_ERROR(rt::Buffer::allocate(
      device.allocator(), std::max<size_t>(bytes, 1), keep.back()));
  if (!host.empty())
    SHARDLIN_RETURN_IF_ERROR(
        device.copyFromHost(keep.back().data(), host.data(), host.size()));
  out = keep.back().data();
  return rt::Status::ok();
}

int64_t elementsOf(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

/// One measurement of one variant on the threads backend: the saving
/// forward bound, the backward bound on its buffers inside its run hook,
/// both timed (backward alone, then the step). With `check`, every rank's
/// gradients against the float64 reference.
void measureBackward(const testkit::GradCase &g,
                     const testkit::BackwardPrograms &programs,
                     const testkit::GradData &data, const TimingOptions &opt,
                     bool check, BackwardResult &out) {
  const int w = g.worldSize();
  const size_t numArgs = testkit::gradArguments(g).size();
  const rt::Program &forward =
      programs.numSaved ? programs.saving : programs.forward;
  const rt::SharedProgram backward(programs.backward);
  const size_t nr = static_cast<size_t>(w);
  std::vector<Timing> bwT(nr), stepT(nr);
  std::vector<std::vector<double>> bwCpu(nr);
  std::vector<uint64_t> bwB(nr), stepB(nr);
  std::vector<char> consistent(nr, 1);
  std::vector<std::vector<testkit::RankTensor>> forwardResults,
      grads(nr);
  testkit::TensorCallbacks io(
      w,
      [&](int rank) {
        std::vector<testkit::RankTensor> args;
        for (size_t i = 0; i < numArgs; ++i)
          args.push_back(testkit::argumentOf(g, data, i, rank));
        return args;
      },
      forwardResults);
  rt::RankCallbacks callbacks = io.callbacks();
  callbacks.run = [&](rt::RankRun &fw) -> rt::Status {
    SHARDLIN_RETURN_IF_ERROR(fw.execute()); // the saved values
    const int r = fw.plan().rank();
    std::vector<rt::Buffer> mine;
    rt::RankCallbacks bc;
    bc.bind = [&](const rt::Plan &plan, rt::RankDevice &device,
                  rt::RankBuffers &bound) -> rt::Status {
      // @main's arguments and the saved values: the forward's buffers.
      for (size_t i = 0; i < numArgs; ++i)
        bound.args.push_back(fw.buffers().args[i]);
      void *p = nullptr;
      const std::vector<uint8_t> &dy = data.dy[size_t(r)].bytes;
      SHARDLIN_RETURN_IF_ERROR(upload(device, dy, dy.size(), mine, p));
      bound.args.push_back(p);
      for (size_t i = 1; i <= programs.numSaved; ++i)
        bound.args.push_back(fw.buffers().results[i]);
      for (size_t i = 0; i < plan.numResults(); ++i) {
        const size_t n = size_t(elementsOf(plan.resultShape(i))) *
                         rt::dtypeSize(plan.resultType(i));
        // NaN (0xFF bytes), so that unwritten elements show.
        SHARDLIN_RETURN_IF_ERROR(
            upload(device, std::vector<uint8_t>(n, uint8_t(0xFF)), n, mine, p));
        bound.results.push_back(p);
      }
      return rt::Status::ok();
    };
    bc.run = [&](rt::RankRun &bw) -> rt::Status {
      bool c1 = true, c2 = true;
      SHARDLIN_RETURN_IF_ERROR(timeOnRank(
          bw.comm(), opt,
          [&] {
            const double c0 = threadCpuSeconds();
            rt::Status st = bw.execute();
            bwCpu[size_t(r)].push_back(threadCpuSeconds() - c0);
            return st;
          },
          bwT[size_t(r)], bwB[size_t(r)], c1));
      SHARDLIN_RETURN_IF_ERROR(timeOnRank(
          bw.comm(), opt,
          [&]() -> rt::Status {
            SHARDLIN_RETURN_IF_ERROR(fw.execute());
            return bw.execute();
          },
          stepT[size_t(r)], stepB[size_t(r)], c2));
      consistent[size_t(r)] = c1 && c2;
      return rt::Status::ok();
    };
    bc.finish = [&](const rt::Plan &plan, rt::RankDevice &device,
                    const rt::RankBuffers &bound,
                    rt::Communicator &) -> rt::Status {
      std::vector<testkit::RankTensor> &res = grads[size_t(r)];
      res.assign(plan.numResults(), {});
      for (size_t i = 0; i < plan.numResults(); ++i) {
        res[i].shape = plan.resultShape(i);
        res[i].bytes.resize(size_t(elementsOf(res[i].shape)) *
                            rt::dtypeSize(plan.resultType(i)));
        if (!res[i].bytes.empty())
          SHARDLIN_RETURN_IF_ERROR(device.copyToHost(
              res[i].bytes.data(), bound.results[i], res[i].bytes.size()));
      }
      return rt::Status::ok();
    };
    return rt::runRank(backward, fw.comm(), fw.device(), bc).status;
  };
  rt::RunOptions options;
  options.backend = "threads";
  options.blasThreads = 1; // W threads in all, as DTensor's W processes
  std::vector<rt::RankResult> ranks;
  rt::Status s = rt::runProgram(forward, options, callbacks, &ranks);
  if (!s) {
    out.error = s.message().substr(0, 600);
    return;
  }
  // Timings are gathered: every rank has the same.
  out.backward.push_back(bwT[0].median());
  out.step.push_back(stepT[0].median());
  double cpu = 0;
  for (const std::vector<double> &c : bwCpu)
    cpu += medianOf(c);
  out.backwardCpu.push_back(cpu);
  out.bwBytes = bwB;
  out.stepBytes = stepB;
  for (char c : consistent)
    out.consistent &= c != 0;
  if (check)
    out.checkFailures += testkit::checkAllRanks(g, data, grads, out.report);
}

/// The bytes per rank of one run of the fused block's backward with its
/// forward values recomputed (no saving forward; timing not needed).
rt::Status recomputedBytes(const testkit::GradCase &g,
                           const testkit::BackwardPrograms &programs,
                           const testkit::GradData &data,
                           std::vector<uint64_t> &bytes) {
  rt::RunOptions options;
  options.backend = "threads";
  options.blasThreads = 1;
  std::vector<std::vector<testkit::RankTensor>> results;
  std::vector<rt::RankResult> ranks;
  const size_t numArgs = testkit::gradArguments(g).size();
  SHARDLIN_RETURN_IF_ERROR(testkit::runWithTensors(
      programs.backward, options,
      [&](int rank) {
        std::vector<testkit::RankTensor> args;
        for (size_t i = 0; i < numArgs; ++i)
          args.push_back(testkit::argumentOf(g, data, i, rank));
        args.push_back({data.dy[size_t(rank)].bytes, g.outputShapeOf(rank)});
        return args;
      },
      results, {}, &ranks));
  bytes.assign(size_t(g.worldSize()), 0);
  for (const rt::RankResult &r : ranks)
    bytes[size_t(r.rank)] = r.stats.bytesSent;
  return rt::Status::ok();
}

/// Compiles the row's variants and predicts their bytes.
void prepareBackwardRow(BackwardRow &row) {
  const BlockCase &c = row.c;
  row.check = c.cheapReference();
  for (int i = 0; i < kNumBlockVariants; ++i) {
    row.grad[i] = gradCaseOf(c, kBlockVariants[i], "never");
    rt::Status s = testkit::compileBackward(row.grad[i], row.programs[i]);
    if (!s) {
      row.error = std::string(kBlockVariants[i].name) + ": " +
                  s.message().substr(0, 400);
      return;
    }
    const testkit::BlockSpec spec = row.grad[i].block;
    BackwardResult &v = row.v[i];
    v.bwPredicted = backwardBytes(spec, false);
    v.stepPredicted = testkit::expectedBlockBytes(spec);
    for (size_t r = 0; r < v.stepPredicted.size(); ++r)
      v.stepPredicted[r] += v.bwPredicted[r];
  }
  // The figure for the fused backward.
  if (row.v[0].bwPredicted != fusedBackwardFormula(c, false))
    row.error = "the backward cost model's fused bytes differ from "
                "2(W-1)BH*4 + the col-wise biases' chunks";
}

void measureBackwardRow(BackwardRow &row, int rounds,
                        const TimingOptions &timing) {
  const testkit::GradData data = testkit::makeGradData(row.grad[0], 7);
  for (int round = 0; round < rounds && row.error.empty(); ++round)
    for (int i = 0; i < kNumBlockVariants; ++i) {
      BackwardResult &v = row.v[i];
      measureBackward(row.grad[i], row.programs[i], data, timing,
                      round == 0 && row.check, v);
      if (!v.error.empty()) {
        row.error = std::string(kBlockVariants[i].name) + ": " + v.error;
        return;
      }
    }
  // The fused block recomputing its forward values: its bytes.
  testkit::GradCase g = gradCaseOf(row.c, kBlockVariants[0], "always");
  testkit::BackwardPrograms programs;
  rt::Status s = testkit::compileBackward(g, programs);
  if (s)
    s = recomputedBytes(g, programs, data, row.recomputeBytes);
  if (!s) {
    row.error = "fused, recomputed: " + s.message().substr(0, 400);
    return;
  }
  row.recomputePredicted = backwardBytes(g.block, true);
}

/// "1.2 MiB", with '!' if `ok` is false.
std::string maxBytes(const std::vector<uint64_t> &v, bool ok) {
  const uint64_t mx = v.empty() ? 0 : *std::max_element(v.begin(), v.end());
  return humanBytes(double(mx)) + (ok ? "" : "!");
}

/// The fused backward against the unfused one over the shapes: wall time
/// (what the target is about) and the ranks' CPU time (the same work
/// without the waits for a core, on a machine shared with other work).
void printFusedAgainstUnfused(const std::vector<double> &wall,
                              const std::vector<double> &cpu) {
  if (wall.empty())
    return;
  auto describe = [](const std::vector<double> &v) {
    int atMost = 0;
    for (double r : v)
      atMost += r <= 1.0;
    char text[96];
    std::snprintf(text, sizeof text, "%d of %zu shapes (%.2fx to %.2fx)",
                  atMost, v.size(), *std::min_element(v.begin(), v.end()),
                  *std::max_element(v.begin(), v.end()));
    return std::string(text);
  };
  std::printf("fused backward no slower than unfused: wall time (fus/unf) at "
              "%s; the rank threads' CPU time per run (cpu f/u: each rank's "
              "median, summed over ranks) at %s\n",
              describe(wall).c_str(), describe(cpu).c_str());
}

} // namespace

void runBlocksBackward(const Options &o, const std::vector<BlockCase> &cases,
                       int rounds, bool &failed) {
  std::printf("\n== blocks, backward and training step: the same blocks "
              "differentiated (--shardlin-generate-backward, forward values "
              "saved), f32, threads, 1 BLAS thread per rank; fused / unfused "
              "/ gather-weight in %d interleaved round(s); load %.2f ==\n",
              rounds, loadAverage());
  std::vector<BackwardRow> rows;
  rows.reserve(cases.size());
  for (const BlockCase &c : cases) {
    BackwardRow row;
    row.c = c;
    prepareBackwardRow(row);
    if (row.error.empty())
      measureBackwardRow(row, rounds, o.timing);
    rows.push_back(std::move(row));
  }
  for (BackwardRow &row : rows) {
    for (const BackwardResult &v : row.v)
      if (!v.bytesMatch() || v.checkFailures)
        failed = true;
    if (row.recomputeBytes != row.recomputePredicted ||
        (!row.recomputeBytes.empty() &&
         row.recomputeBytes != fusedBackwardFormula(row.c, true)))
      failed = true;
    if (!row.error.empty()) {
      std::printf("  %s backward: FAILED: %s\n", row.c.label().c_str(),
                  row.error.c_str());
      failed = true;
    }
  }

  // PyTorch DTensor: forward + loss.backward(), and backward alone.
  std::string torchVersion;
  std::map<TorchKey, std::vector<double>> torch;
  const std::string torchMessage = runTorchBlocks(
      o, cases, " --backward",
      [&](const TorchKey &key, std::istream &ls) {
        std::vector<double> &f = torch[key];
        f.resize(4);
        ls >> f[0] >> f[1] >> f[2] >> f[3]; // forward, step, backward, error
      },
      torchVersion);
  for (BackwardRow &row : rows) {
    auto it = torch.find(torchKey(row.c));
    if (it == torch.end())
      continue;
    row.haveTorch = true;
    row.torchForward = it->second[0];
    row.torchStep = it->second[1];
    row.torchBackward = it->second[2];
    row.torchError = it->second[3];
  }

  std::printf("%-8s %2s %5s %5s %5s | %9s %9s %9s | %9s %9s %9s | %7s %7s | "
              "%10s %10s %10s | %6s | %9s %9s | %6s %6s\n",
              "block", "W", "H", "F", "B", "bw fus ms", "bw unf ms", "bw gw ms",
              "stp fus", "stp unf", "stp gw", "fus/unf", "cpu f/u", "bw fused/rk",
              "unfused", "gw", "check", "DT stp ms", "DT bw ms", "stp/DT",
              "bw/DT");
  int fasterStep = 0, fasterBw = 0, torchShapes = 0, bytesChecked = 0,
      bytesOk = 0, recomputeOk = 0, recomputeChecked = 0;
  std::vector<double> wallRatios, cpuRatios;
  double logStep = 0, logBw = 0, torchError = 0;
  for (const BackwardRow &row : rows) {
    const BlockCase &c = row.c;
    if (row.v[0].backward.empty())
      continue;
    double bw[kNumBlockVariants], step[kNumBlockVariants];
    std::string bytes[kNumBlockVariants];
    int64_t failures = 0;
    for (int i = 0; i < kNumBlockVariants; ++i) {
      const BackwardResult &v = row.v[i];
      bw[i] = medianOf(v.backward);
      step[i] = medianOf(v.step);
      bytes[i] = maxBytes(v.bwBytes, v.bytesMatch());
      failures += v.checkFailures;
      ++bytesChecked;
      bytesOk += v.bytesMatch();
    }
    if (!row.recomputeBytes.empty()) {
      ++recomputeChecked;
      recomputeOk += row.recomputeBytes == row.recomputePredicted &&
                     row.recomputeBytes == fusedBackwardFormula(c, true);
    }
    const std::string check = failures ? "FAIL" : row.check ? "all" : "-";
    std::string tStep = "-", tBw = "-", rStep = "-", rBw = "-";
    if (row.haveTorch) {
      tStep = fmt("%.3f", 1e3 * row.torchStep);
      tBw = fmt("%.3f", 1e3 * row.torchBackward);
      const double a = step[0] / row.torchStep, b = bw[0] / row.torchBackward;
      rStep = fmt("%.2fx", a);
      rBw = fmt("%.2fx", b);
      ++torchShapes;
      fasterStep += a < 1.0;
      fasterBw += b < 1.0;
      logStep += std::log(a);
      logBw += std::log(b);
      torchError = std::max(torchError, row.torchError);
    }
    const double cpuFused = medianOf(row.v[0].backwardCpu),
                 cpuUnfused = medianOf(row.v[1].backwardCpu);
    wallRatios.push_back(bw[1] > 0 ? bw[0] / bw[1] : 0.0);
    cpuRatios.push_back(cpuUnfused > 0 ? cpuFused / cpuUnfused : 0.0);
    std::printf("%-8s %2d %5lld %5lld %5lld | %9.3f %9.3f %9.3f | %9.3f %9.3f "
                "%9.3f | %6.2fx %6.2fx | %10s %10s %10s | %6s | %9s %9s | "
                "%6s %6s\n",
                testkit::blockKindName(c.kind), c.w, (long long)c.h,
                (long long)c.f, (long long)c.rows, 1e3 * bw[0], 1e3 * bw[1],
                1e3 * bw[2], 1e3 * step[0], 1e3 * step[1], 1e3 * step[2],
                wallRatios.back(), cpuRatios.back(), bytes[0].c_str(),
                bytes[1].c_str(), bytes[2].c_str(), check.c_str(),
                tStep.c_str(), tBw.c_str(), rStep.c_str(), rBw.c_str());
    auto list = [](const std::vector<uint64_t> &v) {
      std::string s;
      for (uint64_t b : v)
        s += " " + std::to_string(b);
      return s;
    };
    for (int i = 0; i < kNumBlockVariants; ++i) {
      const BackwardResult &v = row.v[i];
      if (!v.bytesMatch())
        std::printf("  MISMATCH %s %s: backward bytes per rank measured%s, "
                    "predicted%s; step measured%s, predicted%s%s\n",
                    c.label().c_str(), kBlockVariants[i].name,
                    list(v.bwBytes).c_str(), list(v.bwPredicted).c_str(),
                    list(v.stepBytes).c_str(), list(v.stepPredicted).c_str(),
                    v.consistent ? "" : " (inconsistent over trials)");
      if (v.checkFailures)
        std::printf("  WRONG GRADIENTS %s %s: %lld elements\n%s",
                    c.label().c_str(), kBlockVariants[i].name,
                    (long long)v.checkFailures, v.report.c_str());
    }
    if (!row.recomputeBytes.empty() &&
        (row.recomputeBytes != row.recomputePredicted ||
         row.recomputeBytes != fusedBackwardFormula(c, true)))
      std::printf("  MISMATCH %s fused, recomputed: measured%s, predicted%s, "
                  "formula%s\n",
                  c.label().c_str(), list(row.recomputeBytes).c_str(),
                  list(row.recomputePredicted).c_str(),
                  list(fusedBackwardFormula(c, true)).c_str());
  }
  std::printf(
      "bw: @main_backward alone; stp: a training step, @main_forward_saving "
      "then @main_backward (no optimizer). bytes: the backward's per rank "
      "and run, max over ranks, measured by the communicator ('!' = the "
      "backward's or the step's differ from the cost model); equal at %d "
      "of %d (shape, lowering) pairs, the step's = the forward's + the "
      "backward's. fused backward = 2(W-1)*B*H*4 + (W-1)*f_r*4 per col-wise "
      "bias exactly; recomputing the forward values adds (W-1)*B*H*4 (x "
      "gathered again): measured equal at %d of %d shapes. check: every "
      "gradient of every rank against the float64 reference (- : not "
      "checked, the reference is too costly).\n",
      bytesOk, bytesChecked, recomputeOk, recomputeChecked);
  printFusedAgainstUnfused(wallRatios, cpuRatios);
  if (!torchMessage.empty())
    std::printf("DTensor backward: %s\n", torchMessage.c_str());
  else if (torchShapes)
    std::printf("DTensor (torch %s, gloo, W processes x 1 thread, the same "
                "Megatron-SP plan; DT stp = forward + loss.backward(), DT bw "
                "= loss.backward() alone on a kept graph): fused shardlin "
                "faster at %d of %d shapes for the step (geometric mean "
                "%.2fx) and %d of %d for the backward (%.2fx); DTensor's "
                "gradients within %.2g of the unsharded module's (max "
                "|diff| / max |g|)\n",
                torchVersion.c_str(), fasterStep, torchShapes,
                std::exp(logStep / torchShapes), fasterBw, torchShapes,
                std::exp(logBw / torchShapes), torchError);
}

} // namespace shardlin::bench
