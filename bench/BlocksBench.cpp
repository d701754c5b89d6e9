//===- BlocksBench.cpp - Transformer blocks: fused, unfused, DTensor ------===//
//
// The `blocks` section (issue 13): an MLP block (linear -> GELU-tanh ->
// linear, F = 4H) and a SwiGLU block (down(silu(gate(x)) * up(x)), F = 8H/3
// rounded up to a multiple of 64), f32, biases on every linear, B rows per
// rank, the col-wise weights split on F and the row-wise one on F with the
// same placements (BlockTesting.h). Per shape, three lowerings of the same
// block on the same data, in interleaved rounds (fused, unfused,
// gather-weight, fused, ...):
//   fused          strategy=activations: all_gather -> GEMM(s) -> chain ->
//                  GEMM -> reduce_scatter, 2 (W-1) B H elements per rank;
//   unfused        strategy=activations, fuse-blocks=false: each linear moves
//                  activations on its own (all_to_all between them);
//   gather-weight  every linear gathers its weight.
// Each measurement is the timing protocol of the linear section (timeOnRank
// in the RankCallbacks::run hook of runBlock: warm-ups, trials, medians);
// the figure of a shape is the median over the rounds. Bytes sent per rank
// (measured by the communicator) must equal the cost model exactly, and the
// fused form's must equal 2 (W-1) B H 4; a mismatch fails the bench. The
// communication share is the time the ranks spent inside the program's
// collectives (a timing wrapper around each rank's communicator) over the
// wall time of the same executions, averaged over ranks. Every output is
// checked once against the float64 reference (BlockTesting.h), on every row
// for small shapes and on rows {0, B/2, B-1} of every rank for large ones.
//
// Backends: threads (W ranks as threads of this process) and mpi (W
// processes under mpirun: one launch per W runs every shape's rounds in the
// worker mode, --mpi-blocks-worker, each rank writing its figures to a file
// of its own), with the same data, protocol and checks; the two backends'
// rounds are not interleaved with each other.
//
// PyTorch: bench/torch_blocks.py runs the same blocks with DTensor's
// ColwiseParallel / RowwiseParallel and sequence-parallel (Shard(0)) inputs
// on gloo, W processes with one thread each, with the same protocol; one
// launch per W after the shardlin rounds. shardlin runs with one BLAS
// thread per rank, so that both use W threads in all.
//
// This file measures; BlocksTable.cpp prints the rows (BlocksRows.h).
//
//===----------------------------------------------------------------------===//

#include "BenchCommon.h"
#include "BenchRun.h"
#include "BlocksCommon.h"
#include "BlocksRows.h"

#include "BlockTesting.h"
#include "LinearTesting.h"

#include "shardlin/Analysis/CostModel.h"
#include "shardlin/runtime/backends/Host.h"
#include "shardlin/runtime/exec/Execute.h"
#include "shardlin/runtime/exec/Gemm.h"
#include "shardlin/runtime/backends/Mpi.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <tuple>

namespace shardlin::bench {

namespace {

using testkit::BlockKind;
using testkit::BlockSpec;

/// Whether `program` has the form `v` asks for: fused, no all_to_all and
/// every GEMM marked "fused"; otherwise no fused GEMM. Empty if it does,
/// else what is wrong.
std::string checkForm(const rt::Program &program, const BlockCase &c,
                      const BlockVariant &v) {
  int allToAll = 0, fusedGemms = 0, gemms = 0;
  for (const rt::Instr &in : program.instrs) {
    allToAll += in.op == rt::OpCode::AllToAll;
    gemms += in.op == rt::OpCode::Gemm;
    fusedGemms += in.op == rt::OpCode::Gemm && in.strategy == "fused";
  }
  const int lin = c.kind == BlockKind::SwiGlu ? 2 : 1;
  const bool wantFused = v.fuse && std::string(v.strategy) == "activations";
  if (wantFused && (allToAll != 0 || fusedGemms != lin + 1))
    return "not fused: " + std::to_string(allToAll) + " all_to_all, " +
           std::to_string(fusedGemms) + " fused GEMMs (want 0 and " +
           std::to_string(lin + 1) + ")";
  if (!wantFused && fusedGemms != 0)
    return "fused although " + std::string(v.name) + " was asked for";
  if (gemms == 0)
    return "no GEMM in the program";
  return {};
}

/// Forwards every collective to the rank's communicator and adds up the
/// wall time spent in them, for the communication share.
class TimedCommunicator final : public rt::Communicator {
public:
  explicit TimedCommunicator(std::unique_ptr<rt::Communicator> inner)
      : inner_(std::move(inner)) {}

  int rank() const override { return inner_->rank(); }
  int worldSize() const override { return inner_->worldSize(); }
  const char *backendName() const override { return inner_->backendName(); }
  rt::Device device() const override { return inner_->device(); }

  double seconds() const { return seconds_; }
  void resetSeconds() { seconds_ = 0; }

protected:
  rt::Status doAllGatherV(const rt::CollectiveCall &c) override {
    return timed([&] {
      return inner_->allGatherV(c.send, c.count, c.recv, *c.recvCounts,
                                *c.recvDispls, c.dtype);
    });
  }
  rt::Status doAllToAllV(const rt::CollectiveCall &c) override {
    return timed([&] {
      return inner_->allToAllV(c.send, *c.sendCounts, *c.sendDispls, c.recv,
                               *c.recvCounts, *c.recvDispls, c.dtype);
    });
  }
  rt::Status doReduceScatterV(const rt::CollectiveCall &c) override {
    return timed([&] {
      return inner_->reduceScatterV(c.send, *c.sendCounts, *c.sendDispls,
                                    c.recv, c.dtype);
    });
  }
  rt::Status doAllReduce(const rt::CollectiveCall &c) override {
    return timed(
        [&] { return inner_->allReduce(c.send, c.recv, c.count, c.dtype); });
  }
  rt::Status doBroadcast(const rt::CollectiveCall &c) override {
    return timed(
        [&] { return inner_->broadcast(c.recv, c.count, c.dtype, c.root); });
  }
  rt::Status doBarrier(const rt::CollectiveCall &) override {
    return timed([&] { return inner_->barrier(); });
  }

private:
  template <typename F> rt::Status timed(F &&f) {
    const double t0 = nowSeconds();
    rt::Status s = f();
    seconds_ += nowSeconds() - t0;
    return s;
  }

  std::unique_ptr<rt::Communicator> inner_;
  double seconds_ = 0;
};

/// One rank's figures of one measurement.
struct RankFigures {
  Timing timing;
  uint64_t bytes = 0;
  bool consistent = true;
  double commShare = -1;
};

/// The run hook: the timing protocol on the bound plan, then (if
/// `measureShare`) one trial's worth of executions with the time inside
/// the collectives added up, the share averaged over ranks.
rt::Status timeBlockOnRank(rt::RankRun &run, const TimingOptions &opt,
                           bool measureShare, RankFigures &me) {
  rt::Communicator &comm = run.comm();
  SHARDLIN_RETURN_IF_ERROR(timeOnRank(
      comm, opt, [&] { return run.execute(); }, me.timing, me.bytes,
      me.consistent));
  if (!measureShare)
    return rt::Status::ok();
  auto *timed = dynamic_cast<TimedCommunicator *>(&comm);
  if (!timed)
    return rt::Status::internal("the blocks bench's communicator is not "
                                "its timing wrapper");
  const int iters = std::max(1, me.timing.iters);
  SHARDLIN_RETURN_IF_ERROR(comm.barrier());
  timed->resetSeconds();
  const double t0 = nowSeconds();
  for (int i = 0; i < iters; ++i)
    SHARDLIN_RETURN_IF_ERROR(run.execute());
  const double wall = nowSeconds() - t0;
  const double share = wall > 0 ? timed->seconds() / wall : 0;
  std::vector<double> all;
  SHARDLIN_RETURN_IF_ERROR(gatherDoubles(comm, {share}, all));
  double sum = 0;
  for (double s : all)
    sum += s;
  me.commShare = sum / static_cast<double>(all.size());
  return rt::Status::ok();
}

/// The float64 reference of every rank's output, on every row (`full`) or
/// on rows {0, B/2, B-1}: a block with those rows as its input, the same
/// weights. `rowsOf[r]` lists the rows compared.
struct Reference {
  BlockSpec spec; // batch = the compared rows
  std::vector<std::vector<int64_t>> rowsOf;
  std::vector<testkit::BlockReference> ranks;
};

Reference makeReference(const BlockSpec &spec, testkit::BlockData &data,
                        bool full) {
  Reference ref;
  ref.spec = spec;
  const int64_t b = spec.rows(), h = spec.h;
  std::vector<int64_t> rows;
  if (full) {
    for (int64_t i = 0; i < b; ++i)
      rows.push_back(i);
  } else {
    rows = {0, b / 2, b - 1};
    rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  }
  ref.spec.batch = {static_cast<int64_t>(rows.size())};
  for (int r = 0; r < spec.worldSize(); ++r) {
    ref.rowsOf.push_back(rows);
    if (full) {
      ref.ranks.push_back(testkit::blockReference(ref.spec, data, r));
      continue;
    }
    // The reference reads data.inputs[r]: put the sampled rows there for
    // the call, then the whole input back.
    testkit::BlockData::Tensor sampled;
    for (int64_t i : rows)
      sampled.values.insert(sampled.values.end(),
                            data.inputs[r].values.begin() + i * h,
                            data.inputs[r].values.begin() + (i + 1) * h);
    std::swap(data.inputs[r], sampled);
    ref.ranks.push_back(testkit::blockReference(ref.spec, data, r));
    std::swap(data.inputs[r], sampled);
  }
  return ref;
}

/// Compares the outputs (f32 bytes, B x H) of the ranks in `which` (every
/// rank if empty) on the reference's rows.
int64_t checkOutputs(const Reference &ref,
                     const std::vector<std::vector<uint8_t>> &outputs,
                     const std::vector<int> &which, std::string &report) {
  const int64_t h = ref.spec.h;
  const size_t rowBytes = static_cast<size_t>(h) * sizeof(float);
  int64_t failures = 0;
  for (size_t r = 0; r < ref.ranks.size(); ++r) {
    if (!which.empty() &&
        std::find(which.begin(), which.end(), int(r)) == which.end())
      continue;
    std::vector<uint8_t> picked;
    for (int64_t i : ref.rowsOf[r]) {
      if ((i + 1) * rowBytes > outputs[r].size())
        return failures + 1; // compareWithReference reports the size
      picked.insert(picked.end(), outputs[r].begin() + i * rowBytes,
                    outputs[r].begin() + (i + 1) * rowBytes);
    }
    failures += testkit::compareWithReference(
        ref.spec.name() + " rank " + std::to_string(r), ref.spec.dtype,
        picked, h, ref.ranks[r].y, ref.ranks[r].scale,
        testkit::blockErrorBound(ref.spec), report);
  }
  return failures;
}

/// One measurement of one variant (a run of the program through runBlock
/// with the hook) on `backend`: threads (all W ranks here) or mpi (this
/// process's rank under mpirun; `out.bytes` then holds its own figure).
/// Fills `out` and, if `ref`, checks the outputs of the ranks run here.
void measure(const BlockCase &c, const BlockVariant &v,
             const rt::Program &program, const testkit::BlockData &data,
             const TimingOptions &opt, bool measureShare, const Reference *ref,
             const std::string &backend, VariantResult &out) {
  const BlockSpec spec = c.spec(v);
  std::vector<RankFigures> figures(c.w);
  rt::RunOptions options;
  options.backend = backend;
  options.blasThreads = 1; // W threads in all, as DTensor's W processes
  options.wrapCommunicator = [](std::unique_ptr<rt::Communicator> inner)
      -> std::unique_ptr<rt::Communicator> {
    return std::make_unique<TimedCommunicator>(std::move(inner));
  };
  std::vector<std::vector<uint8_t>> outputs;
  std::vector<rt::RankResult> ranks;
  rt::Status s = testkit::runBlock(
      program, spec, data, options, outputs, ranks,
      [&](rt::RankRun &run) {
        return timeBlockOnRank(run, opt, measureShare,
                               figures[run.plan().rank()]);
      });
  if (!s) {
    out.error = s.message();
    return;
  }
  // The ranks run here: all of them, or this process's.
  std::vector<int> here;
  for (const rt::RankResult &r : ranks)
    here.push_back(r.rank);
  if (here.empty())
    here.push_back(0);
  // Timings and shares are gathered: every rank has the same.
  const RankFigures &first = figures[size_t(here[0])];
  out.medians.push_back(first.timing.median());
  if (measureShare)
    out.commShare.push_back(first.commShare);
  out.bytes.clear();
  for (int r : here) {
    out.bytes.push_back(figures[size_t(r)].bytes);
    out.consistent &= figures[size_t(r)].consistent;
  }
  if (int(here.size()) == c.w)
    out.bytesMatch &= out.bytes == out.predicted && out.consistent;
  if (ref)
    out.checkFailures += checkOutputs(
        *ref, outputs, int(here.size()) == c.w ? std::vector<int>() : here,
        out.report);
}

/// Compiles the variants of row.c, checks their form and predicts their
/// bytes; row.error says what failed.
void prepareRow(BlockRow &row,
                rt::Program (&programs)[kNumBlockVariants]) {
  const BlockCase &c = row.c;
  // The outputs are checked on every row when the reference costs at most
  // ~2^28 multiply-adds per rank, else on rows {0, B/2, B-1} of every rank.
  row.fullCheck = c.cheapReference();
  for (int i = 0; i < kNumBlockVariants; ++i) {
    rt::Status s =
        testkit::compileBlock(c.spec(kBlockVariants[i]), programs[i]);
    std::string form = s ? checkForm(programs[i], c, kBlockVariants[i]) : "";
    if (!s || !form.empty()) {
      row.error = std::string(kBlockVariants[i].name) + ": " +
                  (s ? form : s.message().substr(0, 400));
      return;
    }
    row.v[i].predicted = expectedBlockBytes(c.spec(kBlockVariants[i]));
  }
  // The fused form's bytes, as the issue states them.
  const uint64_t exact = 2ull * (c.w - 1) * c.rows * c.h * 4;
  for (uint64_t p : row.v[0].predicted)
    if (p != exact)
      row.error = "the cost model predicts " + std::to_string(p) +
                  " fused bytes, not 2(W-1)BH*4 = " + std::to_string(exact);
}

/// The rounds of row.c's variants on row.backend (threads: every rank here;
/// mpi: this process's rank), interleaved, the outputs checked in the
/// first round.
void measureRow(BlockRow &row,
                const rt::Program (&programs)[kNumBlockVariants],
                int rounds, const TimingOptions &timing) {
  const BlockCase &c = row.c;
  // The same weights and inputs for every variant (they have the same
  // arguments) and on every backend.
  testkit::BlockData data =
      testkit::makeBlockData(c.spec(kBlockVariants[0]), 7);
  Reference ref = makeReference(c.spec(kBlockVariants[0]), data, row.fullCheck);
  for (int round = 0; round < rounds && row.error.empty(); ++round)
    for (int i = 0; i < kNumBlockVariants; ++i) {
      VariantResult &v = row.v[i];
      measure(c, kBlockVariants[i], programs[i], data, timing,
              /*measureShare=*/round == 0, round == 0 ? &ref : nullptr,
              row.backend, v);
      if (!v.error.empty()) {
        row.error = std::string(kBlockVariants[i].name) + ": " + v.error;
        break;
      }
    }
}

std::string escapeLine(std::string s) {
  for (size_t p = 0; (p = s.find('\n', p)) != std::string::npos;)
    s.replace(p, 1, "\\n");
  return s;
}

std::string unescapeLine(std::string s) {
  for (size_t p = 0; (p = s.find("\\n", p)) != std::string::npos; ++p)
    s.replace(p, 2, "\n");
  return s;
}

/// Runs the rows (all of one W) under mpirun, one process per rank
/// (blocksMpiWorkerMain), and fills their results: timings and shares as
/// every rank has them, bytes per rank, check failures summed.
rt::Status runBlocksMpi(const Options &o, int w, int rounds,
                        std::vector<BlockRow *> &rows) {
  const std::string dir = makeTempDir();
  const std::string casesPath = dir + "/blocks.txt", outPath = dir + "/out";
  {
    std::ofstream out(casesPath);
    for (size_t i = 0; i < rows.size(); ++i) {
      const BlockCase &c = rows[i]->c;
      out << i << " " << int(c.kind) << " " << c.w << " " << c.h << " " << c.f
          << " " << c.rows << " " << rounds << "\n";
    }
  }
  rt::Status launched = launchMpi(
      o.mpirun, w,
      " --mpi-blocks-worker=" + shellQuote(casesPath) +
          " --mpi-out=" + shellQuote(outPath) + timingFlags(o.timing),
      dir + "/log.txt");
  // Read what every rank wrote, even after a failure.
  std::vector<std::vector<bool>> seen(
      rows.size(), std::vector<bool>(kNumBlockVariants));
  for (int r = 0; r < w; ++r) {
    std::ifstream in(outPath + "." + std::to_string(r));
    std::string line;
    while (std::getline(in, line)) {
      std::istringstream ls(line);
      size_t id;
      int vi, nMedians, nShares, consistent;
      uint64_t bytes;
      int64_t failures;
      if (!(ls >> id >> vi) || id >= rows.size() || vi < 0 ||
          vi >= kNumBlockVariants)
        continue;
      VariantResult &v = rows[id]->v[vi];
      ls >> nMedians;
      std::vector<double> medians(size_t(std::max(0, nMedians)));
      for (double &m : medians)
        ls >> m;
      ls >> nShares;
      std::vector<double> shares(size_t(std::max(0, nShares)));
      for (double &x : shares)
        ls >> x;
      ls >> bytes >> consistent >> failures;
      std::string rest;
      std::getline(ls, rest);
      if (!rest.empty() && rest[0] == ' ')
        rest.erase(0, 1);
      if (r == 0) {
        v.medians = medians;
        v.commShare = shares;
        v.bytes.assign(size_t(w), 0);
        seen[id][size_t(vi)] = true;
      }
      if (v.bytes.size() == size_t(w))
        v.bytes[size_t(r)] = bytes;
      v.consistent &= consistent != 0;
      v.checkFailures += failures;
      if (rest.rfind("error ", 0) == 0) {
        v.error = "rank " + std::to_string(r) + ": " + unescapeLine(rest.substr(6));
      } else if (!rest.empty()) {
        v.report += unescapeLine(rest);
      }
    }
  }
  for (size_t i = 0; i < rows.size(); ++i)
    for (int vi = 0; vi < kNumBlockVariants; ++vi) {
      VariantResult &v = rows[i]->v[vi];
      if (!seen[i][size_t(vi)] && v.error.empty())
        v.error = launched ? "no result from the MPI worker"
                           : launched.message().substr(0, 600);
      v.bytesMatch = v.bytes == v.predicted && v.consistent;
      if (!v.error.empty() && rows[i]->error.empty())
        rows[i]->error = std::string(kBlockVariants[vi].name) + ": " + v.error;
    }
  std::string rm = "rm -rf " + shellQuote(dir);
  (void)std::system(rm.c_str());
  return launched;
}

} // namespace

int blocksMpiWorkerMain(int argc, char **argv, const std::string &casesPath,
                        const std::string &outPath, const TimingOptions &opt) {
  std::unique_ptr<rt::MpiSession> session;
  rt::Status s = rt::MpiSession::create(&argc, &argv, session);
  std::unique_ptr<rt::Communicator> comm;
  if (s)
    s = rt::createMpiCommunicator(rt::CommOptions(), comm);
  if (!s) {
    std::fprintf(stderr, "shardlin-bench blocks worker: %s\n",
                 s.message().c_str());
    return 1;
  }
  const int rank = comm->rank();
  rt::setBlasThreads(1); // W processes x 1 thread, as the threads rows
  std::ifstream in(casesPath);
  std::ofstream out(outPath + "." + std::to_string(rank));
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    size_t id;
    int kind, rounds;
    BlockRow row;
    row.backend = "mpi";
    ls >> id >> kind >> row.c.w >> row.c.h >> row.c.f >> row.c.rows >> rounds;
    row.c.kind = BlockKind(kind);
    rt::Program programs[kNumBlockVariants];
    prepareRow(row, programs);
    if (row.error.empty() && row.c.w != comm->worldSize())
      row.error = "a case for W = " + std::to_string(row.c.w) + " under " +
                  std::to_string(comm->worldSize()) + " processes";
    if (row.error.empty())
      measureRow(row, programs, rounds, opt);
    for (int i = 0; i < kNumBlockVariants; ++i) {
      const VariantResult &v = row.v[i];
      out << id << " " << i << " " << v.medians.size();
      char buf[64];
      for (double m : v.medians) {
        std::snprintf(buf, sizeof buf, " %.9g", m);
        out << buf;
      }
      out << " " << v.commShare.size();
      for (double x : v.commShare) {
        std::snprintf(buf, sizeof buf, " %.6g", x);
        out << buf;
      }
      out << " " << (v.bytes.empty() ? 0 : v.bytes[0]) << " "
          << (v.consistent ? 1 : 0) << " " << v.checkFailures << " ";
      if (!row.error.empty())
        out << "error " << escapeLine(row.error);
      else
        out << escapeLine(v.report);
      out << "\n";
      out.flush();
    }
  }
  return 0;
}

void runBlocksSection(BenchRun &run) {
  run.beginSection("blocks");
  const Options &o = run.opts;
  if (!o.sections.count("blocks"))
    return;
  const bool quick = o.mode == "quick";
  const int rounds = quick ? 1 : o.mode == "full" ? 5 : 3;
  const std::vector<BlockCase> cases = blockCases(o);
  const bool threads = std::find(o.backends.begin(), o.backends.end(),
                                 "threads") != o.backends.end();
  const bool mpi =
      std::find(o.backends.begin(), o.backends.end(), "mpi") != o.backends.end();
  std::printf("\n== blocks: MLP (GELU-tanh, F = 4H) and SwiGLU (F = 8H/3 up "
              "to a multiple of 64), f32, %s%s%s, 1 BLAS thread per rank; "
              "fused / unfused / gather-weight in %d interleaved round(s); "
              "load %.2f ==\n",
              threads ? "threads" : "", threads && mpi ? " and " : "",
              mpi ? "mpi (W processes)" : "", rounds,
              run.sectionLoad["blocks"]);

  std::vector<BlockRow> rows;
  rows.reserve(cases.size() * 2);
  for (const std::string backend : {"threads", "mpi"}) {
    if (backend == "threads" ? !threads : !mpi)
      continue;
    for (const BlockCase &c : cases) {
      BlockRow row;
      row.c = c;
      row.backend = backend;
      rt::Program programs[kNumBlockVariants];
      prepareRow(row, programs);
      if (row.error.empty() && backend == "threads")
        measureRow(row, programs, rounds, o.timing);
      rows.push_back(std::move(row));
    }
  }
  if (mpi)
    for (int w : o.blockWorldSizes) {
      std::vector<BlockRow *> mine;
      for (BlockRow &row : rows)
        if (row.backend == "mpi" && row.c.w == w && row.error.empty())
          mine.push_back(&row);
      if (!mine.empty())
        (void)runBlocksMpi(o, w, rounds, mine); // errors land in the rows
    }
  for (BlockRow &row : rows) {
    for (const VariantResult &v : row.v)
      if (!v.bytesMatch || v.checkFailures)
        run.failed = true;
    if (!row.error.empty()) {
      std::printf("  %s %s: FAILED: %s\n", row.c.label().c_str(),
                  row.backend.c_str(), row.error.c_str());
      run.failed = true;
    }
  }

  // PyTorch DTensor, one launch per W.
  std::string torchVersion;
  std::map<TorchKey, TorchBlock> torch;
  const std::string torchMessage = runTorchBlocks(
      o, cases, "",
      [&](const TorchKey &key, std::istream &ls) {
        TorchBlock &t = torch[key];
        ls >> t.median >> t.min >> t.max >> t.maxError;
      },
      torchVersion);
  for (BlockRow &row : rows) {
    auto it = torch.find(torchKey(row.c));
    if (it != torch.end()) {
      row.torch = it->second;
      row.haveTorch = true;
    }
  }

  printBlocksTable(rows, quick, torchMessage, torchVersion);

  // The same blocks' backward and training step (BackwardBench.cpp).
  if (threads)
    runBlocksBackward(o, cases, rounds, run.failed);
}

} // namespace shardlin::bench
