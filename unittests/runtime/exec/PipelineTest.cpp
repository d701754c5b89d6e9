//===- PipelineTest.cpp - Fused blocks in row chunks, collectives overlapped ===//
//
// exec/Pipeline.cpp and exec/CommLane.cpp on the threads backend and, where
// a GPU is (shardlin-gpu-tests compiles this file too), on cuda-local, whose
// lane runs the collectives on a second stream: a fused
// MLP block (all_gather, gemm + bias, tanh, gemm, reduce_scatter, the form
// --lower-sharded-linear emits) written as program text, run in sequence
// and pipelined in 2 to 7 row chunks on a threaded lane (and on an inline
// one), W = 1 to 4, placements in and out of rank order, static rows and
// per-rank run-time rows (empty ones included). Every rank's output is
// checked against a float64 reference (f32 storage, K, F <= 24: relative
// error <= 1e-5 of the output's scale), the pipelined outputs against the
// sequential ones within the bound of a change of summation order
// (orderBound below), and, on threads, the inline lane's outputs against
// the threaded lane's bit for bit (the same GEMMs on the same chunks, the
// same collectives in the same order, on another thread). Pipelined and
// sequential are not bit for bit: each element is computed by the same
// operations from the same inputs and summed over the ranks in the same
// order, but a chunk's GEMMs have fewer rows than the sequential run's, and
// a BLAS picks its kernel (and with it the order in which a dot product's
// terms are added, and where FMAs form) by the shape: OpenBLAS's Haswell,
// Zen and Prescott kernels give other bits for a chunk's rows than for the
// same rows in the whole matrix, SkylakeX's the same ones at these sizes,
// and cuBLAS may pick another kernel too. The traffic is the sequential
// run's, in 2 collectives per chunk. Then the blocks the
// plan refuses to pipeline and why, a faulty rank in a pipeline
// (integration_test/Fault/FaultyCommunicator.h), and CommLane's own rules.
//
//===----------------------------------------------------------------------===//

#include "shardlin/runtime/backends/Registry.h"
#include "shardlin/runtime/exec/CommLane.h"
#include "shardlin/runtime/exec/Execute.h"
#include "shardlin/runtime/program/ProgramText.h"
#include "shardlin/runtime/tooling/Runner.h"

#include "FaultyCommunicator.h"
#include "RandomValues.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <ostream>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

namespace rt = shardlin::rt;
namespace fault = shardlin::fault;
using shardlin::rt::test::randomValues;

namespace {

constexpr int64_t kK = 12, kF = 24, kN = 10;

/// The block's shape: W ranks, placements, rows per rank (run-time sizes
/// when `dynamic`, else all rows[0]).
struct BlockCase {
  int w = 2;
  std::vector<int> placements;
  std::vector<int64_t> rows;
  bool dynamic = false;
};

// For gtest's messages and ctest's names (instead of a byte dump).
void PrintTo(const BlockCase &c, std::ostream *os) {
  *os << "W" << c.w << (c.dynamic ? " rows" : " static");
  for (int64_t r : c.rows)
    *os << " " << r;
}

std::string specText(const BlockCase &c, int dim) {
  std::ostringstream os;
  os << dim << ' ' << c.w;
  for (int p : c.placements)
    os << ' ' << p;
  return os.str();
}

/// y = tanh(x A1^T + b1) A2^T, A1 (F x K) split on dim 0 and A2 (N x F)
/// on dim 1 with the same placements: the fused lowering of the MLP.
std::string blockProgram(const BlockCase &c, const std::string &extra = "") {
  const int64_t f = kF / c.w;
  const std::string b = c.dynamic ? "?" : std::to_string(c.rows[0]);
  const std::string wb =
      c.dynamic ? "?" : std::to_string(c.rows[0] * c.w);
  std::ostringstream os;
  os << "shardlin-program v1\nname block\nworld_size " << c.w
     << "\nvalues 12\n"
     << "value 0 f32 2 " << b << ' ' << kK << "\n"
     << "value 1 f32 2 " << f << ' ' << kK << "\n"
     << "value 2 f32 2 " << kN << ' ' << f << "\n"
     << "value 3 f32 1 " << kF << "\n"
     << "value 4 f32 2 " << wb << ' ' << kK << "\n"
     << "value 5 f32 2 " << f << ' ' << kK << "\n"
     << "value 6 f32 1 " << f << "\n"
     << "value 7 f32 2 " << wb << ' ' << f << "\n"
     << "value 8 f32 2 " << wb << ' ' << f << "\n"
     << "value 9 f32 2 " << kN << ' ' << f << "\n"
     << "value 10 f32 2 " << wb << ' ' << kN << "\n"
     << "value 11 f32 2 " << b << ' ' << kN << "\n"
     << "arg 0 plain\n"
     << "arg 1 sharded 2 " << kF << ' ' << kK << " spec " << specText(c, 0)
     << "\narg 2 sharded 2 " << kN << ' ' << kF << " spec " << specText(c, 1)
     << "\narg 3 plain\n"
     << "instr all_gather result 4 operands 1 0 chunk " << specText(c, 0)
     << extra << " loc t:1\n"
     << "instr local_shard result 5 operands 1 1 loc t:2\n"
     << "instr local_chunk result 6 operands 1 3 chunk " << specText(c, 0)
     << " loc t:3\n"
     << "instr gemm result 7 operands 3 4 5 6 trans 0 1 loc t:4\n"
     << "instr elementwise result 8 operands 1 7 expr 2 input 0 tanh 0 loc "
        "t:5\n"
     << "instr local_shard result 9 operands 1 2 loc t:6\n"
     << "instr gemm result 10 operands 2 8 9 trans 0 1 loc t:7\n"
     << "instr reduce_scatter result 11 operands 1 10 chunk " << specText(c, 0)
     << " loc t:8\nresults 1 11\nend\n";
  return os.str();
}

struct RankData {
  std::vector<float> x, y, extra;
  /// On a GPU: the arguments and results in device memory.
  std::vector<rt::Buffer> device;
  rt::CommStats stats;
  std::vector<uint8_t> a1, a2;
  std::vector<rt::PipelineInfo> pipelines;
};

struct BlockRun {
  rt::Status status = rt::Status::ok();
  std::vector<RankData> ranks;
  std::vector<rt::RankResult> results;
};

class Block {
public:
  explicit Block(BlockCase c) : c_(std::move(c)) {
    a1_ = randomValues(kF * kK, 11);
    a2_ = randomValues(kN * kF, 12);
    b1_ = randomValues(kF, 13);
    for (int r = 0; r < c_.w; ++r)
      xs_.push_back(randomValues(rowsOf(r) * kK, 100 + r));
  }

  int64_t rowsOf(int r) const {
    return c_.dynamic ? c_.rows[size_t(r)] : c_.rows[0];
  }

  /// Runs `text` on `backend` with plan options `overlap` (-1: the
  /// program's), on the device's lane or, with `inlineLane`, on the plan's
  /// own inline one.
  BlockRun run(const std::string &text, int overlap, bool inlineLane = false,
               const std::string &backend = "threads") {
    BlockRun out;
    rt::Program program;
    out.status = rt::parseProgram(text, program);
    if (!out.status)
      return out;
    out.ranks.resize(size_t(c_.w));
    std::mutex mu;
    rt::RankCallbacks cb;
    cb.planOptions.overlapChunks = overlap;
    cb.argShapes = [&](int r, std::vector<std::vector<int64_t>> &shapes,
                       std::vector<std::string> &) {
      shapes.assign(4, {});
      shapes[0] = {rowsOf(r), kK};
      return rt::Status::ok();
    };
    cb.bind = [&](const rt::Plan &plan, rt::RankDevice &device,
                  rt::RankBuffers &buffers) {
      RankData &d = out.ranks[size_t(plan.rank())];
      d.x = xs_[size_t(plan.rank())];
      rt::extractLocalChunk(a1_.data(), program.args[1].globalShape,
                            rt::DType::F32, program.args[1].sharding,
                            plan.rank(), d.a1);
      rt::extractLocalChunk(a2_.data(), program.args[2].globalShape,
                            rt::DType::F32, program.args[2].sharding,
                            plan.rank(), d.a2);
      d.y.assign(size_t(plan.resultShape(0)[0] * plan.resultShape(0)[1]),
                 NAN);
      d.pipelines = plan.pipelines();
      buffers.args = {d.x.data(), d.a1.data(), d.a2.data(), b1_.data()};
      buffers.results = {d.y.data()};
      if (plan.numResults() == 2) { // a test's second result (the gather)
        d.extra.assign(
            size_t(plan.resultShape(1)[0] * plan.resultShape(1)[1]), NAN);
        buffers.results.push_back(d.extra.data());
      }
      if (device.kind() == rt::DeviceKind::Host)
        return rt::Status::ok();
      // Each host array to device memory, the results' (NaN) too.
      const std::vector<std::pair<const void *, size_t>> host = {
          {d.x.data(), d.x.size() * 4}, {d.a1.data(), d.a1.size()},
          {d.a2.data(), d.a2.size()},  {b1_.data(), b1_.size() * 4},
          {d.y.data(), d.y.size() * 4}, {d.extra.data(), d.extra.size() * 4}};
      d.device.resize(host.size());
      for (size_t i = 0; i < host.size(); ++i) {
        SHARDLIN_RETURN_IF_ERROR(rt::Buffer::allocate(
            device.allocator(), std::max<size_t>(host[i].second, 4),
            d.device[i]));
        SHARDLIN_RETURN_IF_ERROR(device.copyFromHost(
            d.device[i].data(), host[i].first, host[i].second));
      }
      buffers.args = {d.device[0].data(), d.device[1].data(),
                      d.device[2].data(), d.device[3].data()};
      buffers.results = {d.device[4].data()};
      if (plan.numResults() == 2)
        buffers.results.push_back(d.device[5].data());
      return rt::Status::ok();
    };
    cb.finish = [&](const rt::Plan &plan, rt::RankDevice &device,
                    const rt::RankBuffers &, rt::Communicator &) {
      RankData &d = out.ranks[size_t(plan.rank())];
      if (device.kind() == rt::DeviceKind::Host)
        return rt::Status::ok();
      SHARDLIN_RETURN_IF_ERROR(
          device.copyToHost(d.y.data(), d.device[4].data(), d.y.size() * 4));
      return device.copyToHost(d.extra.data(), d.device[5].data(),
                               d.extra.size() * 4);
    };
    cb.release = [&](int rank) { out.ranks[size_t(rank)].device.clear(); };
    cb.run = [&, inlineLane](rt::RankRun &run) {
      RankData &d = out.ranks[size_t(run.plan().rank())];
      if (!inlineLane) {
        rt::Status st = run.execute();
        d.stats = run.lastStats();
        return st;
      }
      // Plan::run without a lane: the plan's inline one.
      const rt::CommStats before = run.comm().stats();
      rt::Status st =
          const_cast<rt::Plan &>(run.plan())
              .run(run.comm(), run.device().gemm(), run.device().localOps(),
                   run.buffers().args, run.buffers().results);
      d.stats.bytesSent = run.comm().stats().bytesSent - before.bytesSent;
      d.stats.calls = run.comm().stats().calls - before.calls;
      return st;
    };
    rt::RunOptions options;
    options.backend = backend;
    options.worldSize = c_.w;
    options.comm.timeoutSeconds = 60;
    out.status = rt::runProgram(program, options, cb, &out.results);
    return out;
  }

  /// Rank r's float64 outputs (b x kN, row-major) and, for each, the most
  /// that two runs of the block whose GEMMs add each dot product's terms in
  /// different orders can differ by (any order, with or without FMA: a
  /// dot product of n terms, the bias counted as one, is within gamma(n) =
  /// n u / (1 - n u) of the sum of the terms' magnitudes, u = 2^-24). With
  /// h = x A1^T + b1 exact, t = tanh(h), a = |b1| + |x| |A1|^T per feature:
  ///  - the two runs' h are within 2 gamma(K+1) a of each other, so their
  ///    tanh within (1 - t^2 + gamma(K+1) a) 2 gamma(K+1) a (tanh'' <= 0.77),
  ///    and the rounded tanh within that plus 3u |tanh| for each run
  ///    (VectorMath.h's tanh: 1.7e-7 relative, docs/runtime.md);
  ///  - each rank's second GEMM (F/W terms) adds 2 gamma(F/W) of the sum of
  ///    its terms' magnitudes, and the reduce_scatter, which adds the ranks
  ///    in the same order in both runs, 2 gamma(W-1) of the same; summed
  ///    over the ranks, these are sums over all F features.
  void reference(int r, std::vector<double> &ref,
                 std::vector<double> &orderBound) const {
    const std::vector<float> &x = xs_[size_t(r)];
    const int64_t b = rowsOf(r);
    const double u = std::ldexp(1.0, -24);
    auto gamma = [u](int64_t n) { return double(n) * u / (1 - double(n) * u); };
    const double g1 = gamma(kK + 1);
    const double g2 = gamma(kF / c_.w) + gamma(c_.w - 1);
    ref.assign(size_t(b * kN), 0.0);
    orderBound.assign(size_t(b * kN), 0.0);
    for (int64_t i = 0; i < b; ++i) {
      for (int64_t f = 0; f < kF; ++f) {
        double h = b1_[size_t(f)], mag = std::fabs(b1_[size_t(f)]);
        for (int64_t k = 0; k < kK; ++k) {
          const double p =
              double(x[size_t(i * kK + k)]) * a1_[size_t(f * kK + k)];
          h += p;
          mag += std::fabs(p);
        }
        const double t = std::tanh(h);
        // |tanh| of either run's h, and the two runs' tanh apart.
        const double tMag = (std::fabs(t) + g1 * mag) * (1 + 3 * u);
        const double tApart =
            (1 - t * t + g1 * mag) * 2 * g1 * mag + 6 * u * tMag;
        for (int64_t n = 0; n < kN; ++n) {
          const double a2 = std::fabs(a2_[size_t(n * kF + f)]);
          ref[size_t(i * kN + n)] += t * a2_[size_t(n * kF + f)];
          orderBound[size_t(i * kN + n)] +=
              a2 * (tApart + 2 * g2 * (1 + g2) * tMag);
        }
      }
    }
  }

  /// Every rank's output against the float64 reference.
  void expectMatchesReference(const BlockRun &run) const {
    std::vector<double> ref, orderBound;
    for (int r = 0; r < c_.w; ++r) {
      reference(r, ref, orderBound);
      double worst = 0, scale = 1e-30;
      for (double v : ref)
        scale = std::max(scale, std::fabs(v));
      for (size_t e = 0; e < ref.size(); ++e)
        worst = std::max(worst, std::fabs(ref[e] - run.ranks[size_t(r)].y[e]));
      EXPECT_LE(worst / scale, 1e-5) << "rank " << r;
    }
  }

  /// Every rank's pipelined output against the sequential one: each element
  /// within its orderBound (reference()), the most a change of the GEMMs'
  /// summation order can make. A wrong row, chunk or rank's share is off by
  /// about the output's magnitude, thousands of times more.
  void expectMatchesSequential(const BlockRun &seq,
                               const BlockRun &piped) const {
    ASSERT_EQ(seq.ranks.size(), piped.ranks.size());
    std::vector<double> ref, orderBound;
    for (int r = 0; r < c_.w; ++r) {
      reference(r, ref, orderBound);
      const std::vector<float> &a = seq.ranks[size_t(r)].y;
      const std::vector<float> &p = piped.ranks[size_t(r)].y;
      ASSERT_EQ(a.size(), ref.size());
      ASSERT_EQ(p.size(), ref.size());
      double scale = 1e-30, widest = 0;
      for (size_t e = 0; e < ref.size(); ++e) {
        scale = std::max(scale, std::fabs(ref[e]));
        widest = std::max(widest, orderBound[e]);
        ASSERT_LE(std::fabs(double(a[e]) - p[e]), orderBound[e])
            << "rank " << r << " element " << e << ": sequential " << a[e]
            << ", pipelined " << p[e];
      }
      // The bound stays far below the outputs (here about 2e-5 of their
      // scale; the differences seen are about 1% of it).
      EXPECT_LE(widest, 1e-4 * scale) << "rank " << r;
    }
  }

  const BlockCase &blockCase() const { return c_; }

private:
  BlockCase c_;
  std::vector<float> a1_, a2_, b1_;
  std::vector<std::vector<float>> xs_;
};

/// The two runs' outputs are the same bits, on every rank.
void expectSameBits(const BlockRun &a, const BlockRun &b) {
  ASSERT_EQ(a.ranks.size(), b.ranks.size());
  for (size_t r = 0; r < a.ranks.size(); ++r) {
    ASSERT_EQ(a.ranks[r].y.size(), b.ranks[r].y.size());
    if (a.ranks[r].y.empty())
      continue; // a rank without rows
    EXPECT_EQ(0, std::memcmp(a.ranks[r].y.data(), b.ranks[r].y.data(),
                             a.ranks[r].y.size() * sizeof(float)))
        << "rank " << r << ": the two lanes' outputs differ";
  }
}

std::vector<BlockCase> blockCases() {
  return {
      {1, {0}, {5}, false},
      {2, {0, 1}, {6}, false},
      {2, {1, 0}, {7}, false},
      {3, {2, 0, 1}, {4}, false},
      {4, {3, 1, 0, 2}, {5}, false},
      {3, {1, 2, 0}, {3, 0, 5}, true},
      {4, {0, 1, 2, 3}, {1, 6, 2, 4}, true},
      {4, {2, 3, 1, 0}, {0, 0, 9, 1}, true},
  };
}

class PipelinedBlock
    : public ::testing::TestWithParam<std::tuple<BlockCase, std::string>> {
protected:
  const BlockCase &blockCase() const { return std::get<0>(GetParam()); }
  const std::string &backend() const { return std::get<1>(GetParam()); }
};

TEST_P(PipelinedBlock, EqualsTheSequentialRunAndTheReference) {
  Block block(blockCase());
  const std::string text = blockProgram(blockCase());
  BlockRun sequential = block.run(text, 0, false, backend());
  if (sequential.status.code() == rt::StatusCode::Unavailable)
    GTEST_SKIP() << sequential.status.message();
  ASSERT_TRUE(sequential.status) << sequential.status.message();
  block.expectMatchesReference(sequential);
  int64_t maxRows = 0;
  for (int r = 0; r < blockCase().w; ++r)
    maxRows = std::max(maxRows, block.rowsOf(r));
  for (int chunks : {2, 3, 7}) {
    BlockRun threaded;
    for (bool inlineLane : {false, true}) {
      SCOPED_TRACE("chunks " + std::to_string(chunks) +
                   (inlineLane ? ", inline lane" : ", threaded lane"));
      BlockRun piped = block.run(text, chunks, inlineLane, backend());
      ASSERT_TRUE(piped.status) << piped.status.message();
      block.expectMatchesReference(piped);
      // On cuda-local the reference bound alone: orderBound's model (every
      // product and partial sum rounded to f32) is not what cuBLAS promises.
      if (backend() == "threads") {
        block.expectMatchesSequential(sequential, piped);
        // The inline lane runs the same GEMMs on the same chunks and the
        // same collectives in the same order as the threaded one, only on
        // the rank's thread: the same bits, by construction.
        if (inlineLane)
          expectSameBits(threaded, piped);
      }
      // Chunks with a row of some rank; fewer than 2: in sequence.
      const int64_t made = std::min<int64_t>(chunks, maxRows);
      for (size_t r = 0; r < piped.ranks.size(); ++r) {
        ASSERT_EQ(piped.ranks[r].pipelines.size(), 1u);
        const rt::PipelineInfo &info = piped.ranks[r].pipelines[0];
        EXPECT_EQ(info.instr, 0u);
        const rt::CommStats &seq = sequential.ranks[r].stats;
        const rt::CommStats &got = piped.ranks[r].stats;
        EXPECT_EQ(got.bytesSent, seq.bytesSent) << "rank " << r;
        if (made >= 2) {
          EXPECT_TRUE(info.why.empty()) << info.why;
          EXPECT_GE(info.chunks, 2);
          EXPECT_LE(info.chunks, made);
          EXPECT_EQ(info.end, 7u);
          EXPECT_EQ(got.calls, seq.calls - 2 + 2 * uint64_t(info.chunks))
              << "rank " << r;
        } else {
          EXPECT_EQ(info.chunks, 0);
          EXPECT_FALSE(info.why.empty());
          EXPECT_EQ(got.calls, seq.calls);
        }
      }
      if (!inlineLane)
        threaded = std::move(piped);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Backends, PipelinedBlock,
    ::testing::Combine(::testing::ValuesIn(blockCases()),
                       ::testing::Values("threads", "cuda-local")),
    [](const ::testing::TestParamInfo<std::tuple<BlockCase, std::string>>
           &info) {
      const BlockCase &c = std::get<0>(info.param);
      std::string name =
          std::get<1>(info.param) == "threads" ? "threads" : "cudalocal";
      name += "_W" + std::to_string(c.w);
      for (int p : c.placements)
        name += "_" + std::to_string(p);
      name += c.dynamic ? "_rows" : "_static";
      for (int64_t r : c.rows)
        name += "_" + std::to_string(r);
      return name;
    });

TEST(Pipeline, TheProgramsOverlapIsTakenAndTheOptionsOverrideIt) {
  Block block({2, {1, 0}, {8}, false});
  const std::string text = blockProgram(block.blockCase(), " overlap 4");
  BlockRun asked = block.run(text, -1);
  ASSERT_TRUE(asked.status) << asked.status.message();
  block.expectMatchesReference(asked);
  ASSERT_EQ(asked.ranks[0].pipelines.size(), 1u);
  EXPECT_EQ(asked.ranks[0].pipelines[0].chunks, 4);
  BlockRun off = block.run(text, 0);
  ASSERT_TRUE(off.status) << off.status.message();
  EXPECT_TRUE(off.ranks[0].pipelines.empty());
  block.expectMatchesSequential(off, asked);
  // The text form keeps it.
  rt::Program program;
  ASSERT_TRUE(rt::parseProgram(text, program));
  EXPECT_EQ(program.instrs[0].overlapChunks, 4);
  EXPECT_NE(rt::serializeProgram(program).find(" overlap 4 loc t:1"),
            std::string::npos);
}

TEST(Pipeline, OverlapIsOnlyAnAllGathersAndInRange) {
  Block block({2, {0, 1}, {4}, false});
  rt::Program program;
  rt::Status s = rt::parseProgram(
      blockProgram(block.blockCase(), " overlap 65"), program);
  ASSERT_FALSE(s);
  EXPECT_NE(s.message().find("65"), std::string::npos) << s.message();
  std::string text = blockProgram(block.blockCase());
  const std::string gemm = "trans 0 1 loc t:7";
  text.replace(text.find(gemm), gemm.size(), "trans 0 1 overlap 2 loc t:7");
  s = rt::parseProgram(text, program);
  ASSERT_FALSE(s);
  EXPECT_NE(s.message().find("only an all_gather overlaps, in 1 to 64 chunks"),
            std::string::npos)
      << s.message();
}

/// Blocks the plan runs in sequence, each with its reason.
TEST(Pipeline, BlocksThatCannotBePipelinedRunInSequenceAndSayWhy) {
  Block block({2, {0, 1}, {6}, false});
  const std::string base = blockProgram(block.blockCase());
  struct Refused {
    std::string from, to, why;
    bool sameResult;
  };
  const std::vector<Refused> cases = {
      // The gathered rows are also a result of the program.
      {"results 1 11\n", "results 2 11 4\n", "is also read outside it", true},
      // The reduce_scatter hands the rows to other ranks than they came
      // from (a valid program, of another result).
      {"operands 1 10 chunk 0 2 0 1", "operands 1 10 chunk 0 2 1 0",
       "gives rank 0 other rows than the all_gather gathered from it", false},
  };
  for (const Refused &c : cases) {
    std::string text = base;
    ASSERT_NE(text.find(c.from), std::string::npos) << c.from;
    text.replace(text.find(c.from), c.from.size(), c.to);
    BlockRun run = block.run(text, 3);
    ASSERT_TRUE(run.status) << run.status.message();
    ASSERT_EQ(run.ranks[0].pipelines.size(), 1u);
    EXPECT_EQ(run.ranks[0].pipelines[0].chunks, 0);
    EXPECT_NE(run.ranks[0].pipelines[0].why.find(c.why), std::string::npos)
        << run.ranks[0].pipelines[0].why;
    if (c.sameResult)
      block.expectMatchesReference(run);
  }
  // An all_gather whose rows end in no reduce_scatter: the block's result
  // is the gathered GEMM itself.
  std::string text = base;
  const std::string rs = "instr reduce_scatter result 11 operands 1 10 chunk ";
  text = text.substr(0, text.find(rs)) + "results 1 10\nend\n";
  text.replace(text.find("values 12"), 9, "values 11");
  const size_t v11 = text.find("value 11 ");
  text.erase(v11, text.find('\n', v11) + 1 - v11);
  BlockRun run = block.run(text, 3);
  ASSERT_TRUE(run.status) << run.status.message();
  ASSERT_EQ(run.ranks[0].pipelines.size(), 1u);
  EXPECT_EQ(run.ranks[0].pipelines[0].chunks, 0);
  EXPECT_NE(run.ranks[0].pipelines[0].why.find(
                "no reduce_scatter of its rows ends the block"),
            std::string::npos)
      << run.ranks[0].pipelines[0].why;
}

/// A rank whose lane's collective fails (FaultyCommunicator: rank 1 ends
/// its run at chunk 0's reduce_scatter without entering it) or that skips
/// one (chunk 1's all_gather: its next collective meets the others'
/// all_gather with a reduce_scatter): every rank fails well within the
/// timeout, and the error names the pipelined chunk's collective. Call 0 is
/// the agreement before the program; in 3 chunks the program's are AG0,
/// AG1, RS0, AG2, RS1, RS2.
TEST(Pipeline, AFaultyRankFailsEveryRankInTime) {
  struct Case {
    fault::FaultKind kind;
    int call;
    const char *names;
  };
  for (const Case &c : {Case{fault::FaultKind::Error, 3, "reduceScatterV"},
                        Case{fault::FaultKind::Skip, 2, "reduceScatterV"}}) {
    SCOPED_TRACE(fault::faultName(c.kind));
    Block block({3, {2, 0, 1}, {6}, false});
    const std::string text = blockProgram(block.blockCase(), " overlap 3");
    rt::Program program;
    ASSERT_TRUE(rt::parseProgram(text, program));
    std::vector<std::vector<float>> y(3);
    std::vector<std::vector<uint8_t>> chunks(6);
    std::vector<float> x = randomValues(6 * kK, 1), a1 = randomValues(kF * kK, 2),
                       a2 = randomValues(kN * kF, 3), b1 = randomValues(kF, 4);
    rt::RankCallbacks cb;
    cb.bind = [&](const rt::Plan &plan, rt::RankDevice &,
                  rt::RankBuffers &buffers) {
      const int r = plan.rank();
      rt::extractLocalChunk(a1.data(), program.args[1].globalShape,
                            rt::DType::F32, program.args[1].sharding, r,
                            chunks[size_t(2 * r)]);
      rt::extractLocalChunk(a2.data(), program.args[2].globalShape,
                            rt::DType::F32, program.args[2].sharding, r,
                            chunks[size_t(2 * r + 1)]);
      y[size_t(r)].assign(6 * kN, NAN);
      buffers.args = {x.data(), chunks[size_t(2 * r)].data(),
                      chunks[size_t(2 * r + 1)].data(), b1.data()};
      buffers.results = {y[size_t(r)].data()};
      return rt::Status::ok();
    };
    rt::RunOptions options;
    options.worldSize = 3;
    options.comm.timeoutSeconds = 1.0;
    options.wrapCommunicator = [&](std::unique_ptr<rt::Communicator> inner) {
      return std::unique_ptr<rt::Communicator>(new fault::FaultyCommunicator(
          std::move(inner), fault::FaultSpec{c.kind, 1, c.call}));
    };
    std::vector<rt::RankResult> ranks;
    const auto start = std::chrono::steady_clock::now();
    rt::Status st = rt::runProgram(program, options, cb, &ranks);
    const double seconds = std::chrono::duration<double>(
                               std::chrono::steady_clock::now() - start)
                               .count();
    ASSERT_FALSE(st) << "a faulty rank went unnoticed";
    std::printf("run (%.2f s): %s\n", seconds, st.message().c_str());
    EXPECT_LT(seconds, 4.0) << st.message();
    ASSERT_EQ(ranks.size(), 3u);
    for (const rt::RankResult &r : ranks)
      EXPECT_FALSE(r.status) << "rank " << r.rank << " succeeded";
    EXPECT_NE(st.message().find(c.names), std::string::npos) << st.message();
    EXPECT_NE(st.message().find("(pipelined, chunk "), std::string::npos)
        << st.message();
  }
}

//===----------------------------------------------------------------------===//
// CommLane
//===----------------------------------------------------------------------===//

TEST(CommLane, RunsInSubmitOrderOnItsOwnThreadAndStopsAtAFailure) {
  for (bool threaded : {true, false}) {
    SCOPED_TRACE(threaded ? "threaded" : "inline");
    // A lane over a communicator the jobs below never touch.
    struct Null : rt::Communicator {
      int rank() const override { return 0; }
      int worldSize() const override { return 1; }
      const char *backendName() const override { return "null"; }

    protected:
#define NULL_HOOK(kind, name)                                                  \
  rt::Status do##kind(const rt::CollectiveCall &) override {                   \
    return rt::Status::ok();                                                   \
  }
      SHARDLIN_FOR_EACH_COLLECTIVE(NULL_HOOK)
#undef NULL_HOOK
    } comm;
    std::unique_ptr<rt::CommLane> lane = rt::CommLane::create(comm, threaded);
    EXPECT_EQ(lane->threaded(), threaded);
    const std::thread::id self = std::this_thread::get_id();
    std::vector<int> order;
    std::mutex mu;
    std::atomic<int> onOtherThread{0};
    ASSERT_TRUE(lane->begin(6));
    std::vector<size_t> tickets;
    for (int i = 0; i < 3; ++i)
      tickets.push_back(lane->submit([&, i](rt::Communicator &) {
        std::lock_guard<std::mutex> lock(mu);
        order.push_back(i);
        onOtherThread += std::this_thread::get_id() != self;
        return rt::Status::ok();
      }));
    tickets.push_back(lane->submit([](rt::Communicator &) {
      return rt::Status::deadlineExceeded("the peers never came");
    }));
    bool ranAfter = false;
    tickets.push_back(lane->submit([&](rt::Communicator &) {
      ranAfter = true;
      return rt::Status::ok();
    }));
    EXPECT_TRUE(lane->wait(tickets[2]));
    rt::Status failed = lane->wait(tickets[4]);
    EXPECT_FALSE(failed);
    EXPECT_NE(failed.message().find("the peers never came"), std::string::npos);
    rt::Status ended = lane->end();
    EXPECT_FALSE(ended);
    EXPECT_NE(ended.message().find("the peers never came"), std::string::npos);
    EXPECT_FALSE(ranAfter) << "a collective after a failure ran";
    EXPECT_EQ(order, (std::vector<int>{0, 1, 2}));
    EXPECT_EQ(onOtherThread.load(), threaded ? 3 : 0);
    EXPECT_FALSE(lane->wait(99));
    // The next pipeline starts clean.
    ASSERT_TRUE(lane->begin(1));
    size_t t = lane->submit([](rt::Communicator &) { return rt::Status::ok(); });
    EXPECT_TRUE(lane->wait(t));
    EXPECT_TRUE(lane->end());
  }
}

} // namespace
