//===- GpuBlocks.cpp - shardlin-gpu-bench's blocks section ----------------===//
//
// See GpuBlocks.h. Runtime only: the programs were compiled elsewhere, and
// every device operation goes through the rank's RankDevice, so the same
// code runs on cuda-local and (for the self-test) on threads.
//
//===----------------------------------------------------------------------===//

#include "GpuBlocks.h"
#include "GpuBenchSupport.h"

#include "shardlin/runtime/backends/Registry.h"
#include "shardlin/runtime/base/Buffer.h"
#include "shardlin/runtime/base/DType.h"
#include "shardlin/runtime/exec/Execute.h"
#include "shardlin/runtime/program/Program.h"
#include "shardlin/runtime/program/ProgramText.h"
#include "shardlin/runtime/tooling/Runner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <vector>

namespace shardlin::gpubench {

namespace {

namespace rt = ::shardlin::rt;

[[noreturn]] void die(const std::string &message) {
  std::cerr << ("shardlin-gpu-bench: error: blocks: " + message + "\n")
            << std::flush;
  std::exit(1);
}

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    die("cannot read " + path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

/// TFLOP/s with three significant digits.
std::string flopRate(double tflops) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.3g", tflops);
  return buf;
}

/// One line of blocks.txt.
struct BlockConfig {
  std::string name, kind, dtypeName, program, check;
  rt::DType dtype = rt::DType::BF16;
  int w = 1;
  int64_t rows = 0, h = 0, f = 0, checkRows = 0;
  std::vector<std::string> roles;

  /// Of the whole block: 2 M H F per GEMM, two for an MLP, three for a
  /// SwiGLU.
  double flops() const {
    return 2.0 * double(rows) * double(h) * double(f) *
           (kind == "swiglu" ? 3 : 2);
  }
  std::string shapeKey() const {
    return kind + " " + dtypeName + " " + std::to_string(rows) + " " +
           std::to_string(h) + " " + std::to_string(f);
  }
};

std::vector<BlockConfig> readConfigs(const std::string &dir) {
  std::vector<BlockConfig> configs;
  std::istringstream lines(readFile(dir + "/blocks.txt"));
  std::string line;
  int number = 0;
  while (std::getline(lines, line)) {
    ++number;
    if (line.empty())
      continue;
    std::istringstream in(line);
    BlockConfig c;
    std::string roles;
    in >> c.name >> c.kind >> c.dtypeName >> c.w >> c.rows >> c.h >> c.f >>
        c.program >> c.check >> c.checkRows >> roles;
    const std::optional<rt::DType> dtype = rt::parseDType(c.dtypeName);
    const bool typed = in && dtype.has_value();
    if (typed)
      c.dtype = *dtype;
    if (!typed || c.w < 1 || c.rows < 1 || c.rows % c.w != 0 || c.h < 1 ||
        c.f < 1 || c.checkRows < 1 || c.checkRows > c.rows ||
        (c.kind != "mlp" && c.kind != "swiglu"))
      die(dir + "/blocks.txt:" + std::to_string(number) +
          ": expected NAME KIND DTYPE W ROWS H F PROGRAM CHECK_PROGRAM "
          "CHECK_ROWS ROLES (shardlin-write-block-suite --bench), got '" +
          line + "'");
    std::istringstream split(roles);
    for (std::string role; std::getline(split, role, ',');)
      c.roles.push_back(role);
    configs.push_back(std::move(c));
  }
  if (configs.empty())
    die(dir + "/blocks.txt lists no configuration");
  return configs;
}

rt::Program loadProgram(const std::string &path) {
  rt::Program program;
  rt::Status s = rt::parseProgram(readFile(path), program);
  if (!s)
    die(path + ": " + s.message());
  return program;
}

/// A tensor on the host, as dtype bytes.
struct HostTensor {
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
  int64_t elements() const {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    return n;
  }
};

/// Random values +-[0.25, 1] * scale (SplitMix: fast enough for the
/// 67M-element weights of the large blocks).
HostTensor randomTensor(std::vector<int64_t> shape, rt::DType dtype,
                        double scale, uint64_t seed) {
  HostTensor t;
  t.shape = std::move(shape);
  const int64_t n = t.elements();
  const size_t es = rt::dtypeSize(dtype);
  t.bytes.resize(size_t(n) * es);
  SplitMix random(seed);
  std::vector<double> values;
  const int64_t block = int64_t(1) << 20;
  for (int64_t at = 0; at < n; at += block) {
    const int64_t m = std::min(block, n - at);
    values.resize(size_t(m));
    for (double &v : values)
      v = random.signedUnit() * scale;
    rt::convertFromF64(dtype, values.data(), t.bytes.data() + size_t(at) * es,
                       size_t(m));
  }
  return t;
}

/// Rows [first, first + count) of a row-major tensor whose last dim is
/// `width`.
std::vector<uint8_t> rowsOf(const HostTensor &t, int64_t first, int64_t count,
                            int64_t width, rt::DType dtype) {
  const size_t row = size_t(width) * rt::dtypeSize(dtype);
  return std::vector<uint8_t>(t.bytes.begin() + first * row,
                              t.bytes.begin() + (first + count) * row);
}

/// The host rendezvous of the ranks' repetitions. abort() releases every
/// waiter (a rank that failed must not leave the others waiting).
class HostBarrier {
public:
  explicit HostBarrier(int n) : n_(n) {}
  /// False once aborted.
  bool wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    if (aborted_)
      return false;
    const uint64_t generation = generation_;
    if (++count_ == n_) {
      count_ = 0;
      ++generation_;
      changed_.notify_all();
      return true;
    }
    changed_.wait(lock,
                  [&] { return aborted_ || generation_ != generation; });
    return !aborted_;
  }
  void abort() {
    std::lock_guard<std::mutex> lock(mutex_);
    aborted_ = true;
    changed_.notify_all();
  }

private:
  std::mutex mutex_;
  std::condition_variable changed_;
  const int n_;
  int count_ = 0;
  uint64_t generation_ = 0;
  bool aborted_ = false;
};

/// The global arguments of a block (the input's slot empty), made once per
/// block and dtype and kept for every W and M.
using Weights = std::vector<HostTensor>;

Weights makeWeights(const BlockConfig &c, const rt::Program &program) {
  Weights weights(program.args.size());
  for (size_t i = 0; i < program.args.size(); ++i) {
    if (c.roles[i] == "x")
      continue;
    const rt::Argument &a = program.args[i];
    std::vector<int64_t> shape =
        a.sharded ? a.globalShape : program.values[i].shape;
    // Weights [out, in]: 1 / sqrt(in) keeps each product near 1; biases
    // small next to it.
    const bool bias = shape.size() == 1;
    const double scale = bias ? 0.1 : 1.0 / std::sqrt(double(shape.back()));
    weights[i] = randomTensor(shape, c.dtype, scale, 100 + i);
  }
  return weights;
}

/// Runs `program` (W = 1) on the threads backend with host buffers: the
/// reference of the check.
std::vector<uint8_t> runOnHost(const rt::Program &program,
                               const std::vector<const void *> &args,
                               const std::string &what) {
  std::vector<uint8_t> out;
  rt::RunOptions options;
  options.backend = "threads";
  options.worldSize = 1;
  rt::RankCallbacks callbacks;
  callbacks.bind = [&](const rt::Plan &plan, rt::RankDevice &,
                       rt::RankBuffers &buffers) -> rt::Status {
    buffers.args = args;
    int64_t n = 1;
    for (int64_t d : plan.resultShape(0))
      n *= d;
    out.assign(size_t(n) * rt::dtypeSize(plan.resultType(0)), 0);
    buffers.results = {out.data()};
    return rt::Status::ok();
  };
  rt::Status s = rt::runProgram(program, options, callbacks);
  if (!s)
    die(what + ": the host check: " + s.message());
  return out;
}

double checkBound(rt::DType t) {
  switch (t) {
  case rt::DType::BF16:
    return 0x1p-5;
  case rt::DType::F16:
    return 0x1p-8;
  case rt::DType::F32:
    return 0x1p-14;
  default:
    return 0x1p-40;
  }
}

struct Measured {
  double ms = 0;
  double worst = 0; // max |gpu - host| / max |host| over the checked rows
  bool passed = false;
  /// With timeComm: the block's all_gather and reduce_scatter alone.
  double commMs = 0;
  /// The chunks the plan pipelined the block in (0: in sequence).
  int chunks = 0;
};

/// A collective of the block's, alone: its counts on this rank and the
/// device buffers it moves between.
struct LoneCollective {
  rt::DType dtype = rt::DType::F32;
  int64_t own = 0;                     // this rank's elements
  std::vector<int64_t> counts, displs; // every rank's, in the whole
  rt::Buffer send, recv;
};

/// The fused block's all_gather and reduce_scatter with the program's
/// counts (static shapes, rows split evenly: the bench's programs), with
/// device buffers of the rank's; false if the program has not both.
bool loneCollectives(const rt::Program &program, int w, int rank,
                     rt::RankDevice &device, LoneCollective &gather,
                     LoneCollective &reduce, rt::Status &status) {
  const rt::Instr *ag = nullptr, *rs = nullptr;
  for (const rt::Instr &in : program.instrs) {
    if (in.op == rt::OpCode::AllGather && !ag)
      ag = &in;
    if (in.op == rt::OpCode::ReduceScatter)
      rs = &in;
  }
  if (!ag || !rs)
    return false;
  auto make = [&](LoneCollective &c, const rt::ValueType &whole) {
    c.dtype = whole.dtype;
    int64_t n = 1;
    for (int64_t d : whole.shape)
      n *= d;
    c.own = n / w;
    for (int r = 0; r < w; ++r) {
      c.counts.push_back(c.own);
      c.displs.push_back(r * c.own);
    }
    const size_t es = rt::dtypeSize(c.dtype);
    status = rt::Buffer::allocate(device.allocator(), size_t(n) * es, c.send);
    if (status)
      status = rt::Buffer::allocate(device.allocator(), size_t(n) * es, c.recv);
  };
  make(gather, program.values[size_t(ag->result)]);
  if (status)
    make(reduce, program.values[size_t(rs->operands[0])]);
  (void)rank;
  return true;
}

Measured runConfig(const BlocksOptions &o, const BlockConfig &c,
                   const rt::Program &program, const rt::Program &check,
                   const Weights &weights, int overlap = 0,
                   bool timeComm = false) {
  const size_t es = rt::dtypeSize(c.dtype);
  const int64_t perRank = c.rows / c.w;
  if (program.args.size() != c.roles.size())
    die(c.name + ": the program takes " +
        std::to_string(program.args.size()) + " arguments, blocks.txt lists " +
        std::to_string(c.roles.size()) + " roles");
  const size_t xIndex =
      size_t(std::find(c.roles.begin(), c.roles.end(), "x") - c.roles.begin());
  if (xIndex >= c.roles.size())
    die(c.name + ": no argument has the role x");
  const HostTensor x = randomTensor({c.rows, c.h}, c.dtype, 1.0, 7);

  HostBarrier barrier(c.w);
  std::vector<double> times, commTimes;
  int chunks = 0;
  std::vector<std::vector<rt::Buffer>> owned(size_t(c.w));
  HostTensor y;
  y.shape = {c.rows, c.h};
  y.bytes.assign(size_t(c.rows * c.h) * es, 0);
  rt::RankCallbacks callbacks;
  callbacks.bind = [&](const rt::Plan &plan, rt::RankDevice &device,
                       rt::RankBuffers &buffers) -> rt::Status {
    const int r = plan.rank();
    std::vector<rt::Buffer> &mine = owned[size_t(r)];
    auto upload = [&](const uint8_t *data, size_t bytes) -> rt::Status {
      mine.emplace_back();
      SHARDLIN_RETURN_IF_ERROR(rt::Buffer::allocate(
          device.allocator(), std::max<size_t>(bytes, 1), mine.back()));
      if (data && bytes)
        SHARDLIN_RETURN_IF_ERROR(
            device.copyFromHost(mine.back().data(), data, bytes));
      return rt::Status::ok();
    };
    for (size_t i = 0; i < program.args.size(); ++i) {
      const rt::Argument &a = program.args[i];
      std::vector<uint8_t> local;
      if (i == xIndex)
        local = rowsOf(x, r * perRank, perRank, c.h, c.dtype);
      else if (a.sharded)
        rt::extractLocalChunk(weights[i].bytes.data(), a.globalShape, c.dtype,
                              a.sharding, r, local);
      else
        local = weights[i].bytes;
      SHARDLIN_RETURN_IF_ERROR(upload(local.data(), local.size()));
      buffers.args.push_back(mine.back().data());
    }
    for (size_t i = 0; i < plan.numResults(); ++i) {
      int64_t n = 1;
      for (int64_t d : plan.resultShape(i))
        n *= d;
      SHARDLIN_RETURN_IF_ERROR(
          upload(nullptr, size_t(n) * rt::dtypeSize(plan.resultType(i))));
      buffers.results.push_back(mine.back().data());
    }
    return rt::Status::ok();
  };
  callbacks.run = [&](rt::RankRun &run) -> rt::Status {
    const int r = run.plan().rank();
    uint8_t probe[8];
    // One execution, complete when its output's first element has reached
    // the host (the copy waits for the rank's stream on a GPU).
    auto once = [&]() -> rt::Status {
      SHARDLIN_RETURN_IF_ERROR(run.execute());
      return run.device().copyToHost(probe, run.buffers().results[0], es);
    };
    // warmup + reps repetitions of `step`, rank 0's times into `into`.
    auto timed = [&](const std::function<rt::Status()> &step,
                     std::vector<double> &into) -> rt::Status {
      rt::Status st;
      for (int i = 0; st && i < o.warmup + o.reps; ++i) {
        if (!barrier.wait())
          return rt::Status::aborted("another rank failed");
        const auto t0 = std::chrono::steady_clock::now();
        st = step();
        if (!st) {
          barrier.abort();
          break;
        }
        if (!barrier.wait())
          return rt::Status::aborted("another rank failed");
        const auto t1 = std::chrono::steady_clock::now();
        if (r == 0 && i >= o.warmup)
          into.push_back(
              std::chrono::duration<double, std::milli>(t1 - t0).count());
      }
      return st;
    };
    if (r == 0 && !run.plan().pipelines().empty())
      chunks = run.plan().pipelines().front().chunks;
    SHARDLIN_RETURN_IF_ERROR(timed(once, times));
    if (!timeComm)
      return rt::Status::ok();
    // The block's two collectives alone, on the same communicator.
    LoneCollective gather, reduce;
    rt::Status made;
    if (!loneCollectives(program, c.w, r, run.device(), gather, reduce, made))
      return rt::Status::ok();
    SHARDLIN_RETURN_IF_ERROR(made);
    rt::Communicator &comm = run.comm();
    auto both = [&]() -> rt::Status {
      SHARDLIN_RETURN_IF_ERROR(comm.allGatherV(
          static_cast<const char *>(gather.send.data()) +
              size_t(r * gather.own) * rt::dtypeSize(gather.dtype),
          gather.own, gather.recv.data(), gather.counts, gather.displs,
          gather.dtype));
      SHARDLIN_RETURN_IF_ERROR(comm.reduceScatterV(
          reduce.send.data(), reduce.counts, reduce.displs, reduce.recv.data(),
          reduce.dtype));
      return run.device().copyToHost(probe, reduce.recv.data(), 1);
    };
    return timed(both, commTimes);
  };
  callbacks.finish = [&](const rt::Plan &plan, rt::RankDevice &device,
                         const rt::RankBuffers &buffers,
                         rt::Communicator &) -> rt::Status {
    const size_t row = size_t(c.h) * es;
    return device.copyToHost(y.bytes.data() + size_t(plan.rank()) * perRank * row,
                             buffers.results[0], size_t(perRank) * row);
  };
  callbacks.release = [&](int rank) { owned[size_t(rank)].clear(); };
  callbacks.planOptions.overlapChunks = overlap;
  rt::RunOptions options;
  options.backend = o.backend;
  options.worldSize = c.w;
  if (o.backend != "threads")
    options.device = o.device;
  options.comm.timeoutSeconds = 120;
  rt::Status ran = rt::runProgram(program, options, callbacks);
  if (!ran)
    die(c.name + " on " + o.backend + ": " + ran.message());

  // The check: a window of checkRows rows at each rank's first row, against
  // the W = 1 program on the host.
  Measured m;
  m.ms = median(times);
  m.commMs = commTimes.empty() ? 0 : median(commTimes);
  m.chunks = chunks;
  std::vector<const void *> args(check.args.size());
  std::vector<std::vector<uint8_t>> wholes(check.args.size());
  for (size_t i = 0; i < check.args.size(); ++i) {
    if (i == xIndex)
      continue;
    const rt::Argument &a = check.args[i];
    if (a.sharded) // one chunk: the whole tensor, in its layout
      rt::extractLocalChunk(weights[i].bytes.data(), a.globalShape, c.dtype,
                            a.sharding, 0, wholes[i]);
    else
      wholes[i] = weights[i].bytes;
    args[i] = wholes[i].data();
  }
  double worst = 0;
  for (int r = 0; r < c.w; ++r) {
    const int64_t first = std::min(r * perRank, c.rows - c.checkRows);
    const std::vector<uint8_t> rows =
        rowsOf(x, first, c.checkRows, c.h, c.dtype);
    args[xIndex] = rows.data();
    const std::vector<uint8_t> ref = runOnHost(check, args, c.name);
    const std::vector<uint8_t> got =
        rowsOf(y, first, c.checkRows, c.h, c.dtype);
    const size_t n = size_t(c.checkRows * c.h);
    std::vector<double> a(n), b(n);
    rt::convertToF64(c.dtype, got.data(), a.data(), n);
    rt::convertToF64(c.dtype, ref.data(), b.data(), n);
    double diff = 0, scale = 0;
    for (size_t e = 0; e < n; ++e) {
      diff = std::max(diff, std::fabs(a[e] - b[e]));
      scale = std::max(scale, std::fabs(b[e]));
      if (!std::isfinite(a[e]))
        diff = INFINITY;
    }
    worst = std::max(worst, scale > 0 ? diff / scale : diff);
  }
  m.worst = worst;
  m.passed = worst <= checkBound(c.dtype);
  return m;
}

/// "result KIND DTYPE M H F EAGER_MS COMPILE_MS" lines (COMPILE_MS "-"
/// where torch.compile was not timed), by shape key.
std::map<std::string, std::pair<std::string, std::string>>
readTorch(const std::string &path) {
  std::map<std::string, std::pair<std::string, std::string>> out;
  if (path.empty())
    return out;
  std::istringstream lines(readFile(path));
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream in(line);
    std::string tag, kind, dtype, m, h, f, eager, compiled;
    if (!(in >> tag >> kind >> dtype >> m >> h >> f >> eager >> compiled) ||
        tag != "result")
      continue;
    out[kind + " " + dtype + " " + m + " " + h + " " + f] = {eager, compiled};
  }
  return out;
}

/// The overlap table (GpuBlocks.h): every configuration with W >= 2 in
/// sequence (its collectives timed alone too) and in each of
/// o.overlapChunks row chunks.
bool runOverlapTable(const BlocksOptions &o,
                     const std::vector<BlockConfig> &configs,
                     std::map<std::string, rt::Program> &checks,
                     std::map<std::string, Weights> &weights) {
  std::vector<std::string> header = {"block", "dtype", "M x H x F", "W",
                                     "sequential ms", "comm ms",
                                     "compute ms", "max ms"};
  for (int chunks : o.overlapChunks)
    header.push_back(std::to_string(chunks) + " chunks ms");
  header.insert(header.end(), {"best / max", "best / sequential", "checks"});
  Table table(header);
  bool allPassed = true;
  for (const BlockConfig &c : configs) {
    if (c.w < 2)
      continue;
    const rt::Program program = loadProgram(o.dir + "/" + c.program);
    const std::string wkey = c.kind + " " + c.dtypeName + " " +
                             std::to_string(c.h) + " " + std::to_string(c.f);
    const rt::Program &check = checks[c.check];
    const Measured seq =
        runConfig(o, c, program, check, weights[wkey], 0, true);
    bool passed = seq.passed;
    const double compute = std::max(0.0, seq.ms - seq.commMs);
    const double bound = std::max(compute, seq.commMs);
    std::vector<std::string> row = {
        c.kind, c.dtypeName,
        std::to_string(c.rows) + "x" + std::to_string(c.h) + "x" +
            std::to_string(c.f),
        std::to_string(c.w), fixed(seq.ms, 3), fixed(seq.commMs, 3),
        fixed(compute, 3), fixed(bound, 3)};
    double best = 0; // the fastest pipelined run
    for (int chunks : o.overlapChunks) {
      const Measured m =
          runConfig(o, c, program, check, weights[wkey], chunks);
      passed = passed && m.passed;
      // A block whose rows make fewer chunks runs in sequence: say so.
      row.push_back(m.chunks == 0 ? fixed(m.ms, 3) + " (seq)"
                                  : fixed(m.ms, 3));
      if (m.chunks > 0)
        best = best > 0 ? std::min(best, m.ms) : m.ms;
    }
    row.push_back(best > 0 && bound > 0 ? fixed(best / bound, 3) : "-");
    row.push_back(best > 0 ? fixed(best / seq.ms, 3) : "-");
    row.push_back(passed ? "ok" : "FAILED");
    allPassed = allPassed && passed;
    table.add(row);
  }
  std::cout << "\n(c') blocks overlapped: each W >= 2 block in sequence and "
               "pipelined in row chunks (its all_gather and reduce_scatter "
               "on a second stream beside the GEMMs); comm = the block's two "
               "collectives alone, compute = sequential - comm; best = the "
               "fastest pipelined run, target best <= 1.1 x max(compute, "
               "comm); every run's output checked\n";
  table.print();
  if (!allPassed)
    std::cout << "blocks overlapped: an output FAILED its check\n";
  return allPassed;
}

} // namespace

bool runBlocksSection(const BlocksOptions &o) {
  if (o.backend != "cuda-local" && o.backend != "threads")
    die("the blocks run on cuda-local (or threads for the self-test), not '" +
        o.backend + "'");
  const std::vector<BlockConfig> configs = readConfigs(o.dir);
  const auto torch = readTorch(o.torchResults);
  std::map<std::string, Weights> weights;  // by block, dtype, H, F
  std::map<std::string, rt::Program> checks;
  std::map<std::string, double> single;    // W = 1 time by shape
  Table table({"block", "dtype", "M x H x F", "W", "shardlin ms", "TFLOP/s",
               "vs W=1", "torch eager ms", "torch.compile ms",
               "shardlin/eager", "check (max err / bound)"});
  bool allPassed = true;
  for (const BlockConfig &c : configs) {
    const rt::Program program = loadProgram(o.dir + "/" + c.program);
    if (!checks.count(c.check))
      checks[c.check] = loadProgram(o.dir + "/" + c.check);
    const std::string wkey = c.kind + " " + c.dtypeName + " " +
                             std::to_string(c.h) + " " + std::to_string(c.f);
    if (!weights.count(wkey))
      weights[wkey] = makeWeights(c, checks[c.check]);
    const Measured m = runConfig(o, c, program, checks[c.check], weights[wkey]);
    allPassed = allPassed && m.passed;
    if (c.w == 1)
      single[c.shapeKey()] = m.ms;
    std::string vsOne = "-", eager = "-", compiled = "-", vsEager = "-";
    if (single.count(c.shapeKey()))
      vsOne = fixed(m.ms / single[c.shapeKey()], 3);
    if (auto it = torch.find(c.shapeKey()); it != torch.end()) {
      eager = it->second.first;
      compiled = it->second.second;
      const double e = std::atof(eager.c_str());
      if (e > 0)
        vsEager = fixed(m.ms / e, 3);
    }
    char check[96];
    std::snprintf(check, sizeof check, "%.2e / %.0e %s", m.worst,
                  checkBound(c.dtype), m.passed ? "ok" : "FAILED");
    table.add({c.kind, c.dtypeName,
                    std::to_string(c.rows) + "x" + std::to_string(c.h) + "x" +
                        std::to_string(c.f),
                    std::to_string(c.w), fixed(m.ms, 3),
                    flopRate(c.flops() / m.ms * 1e-9), vsOne, eager, compiled,
                    vsEager, check});
  }
  std::cout << "\n(c) blocks: fused MLP (GELU-tanh, biases) and SwiGLU (no "
               "biases), M rows split over W ranks ("
            << o.backend << "), median of " << o.reps
            << " (host clock from a barrier to every rank's output, after "
            << o.warmup
            << " warm-up); PyTorch on one device, the same shapes; each "
               "rank's first rows checked against the W = 1 program on the "
               "host\n";
  table.print();
  if (!allPassed)
    std::cout << "blocks: an output FAILED its check\n";
  if (!o.overlapChunks.empty())
    allPassed = runOverlapTable(o, configs, checks, weights) && allPassed;
  return allPassed;
}

} // namespace shardlin::gpubench
