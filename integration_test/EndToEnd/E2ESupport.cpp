//===- E2ESupport.cpp - Shared pieces of the end-to-end tests -------------===//

#include "E2ESupport.h"
#include "ErrorBound.h"

#include "shardlin/runtime/backends/Registry.h"
#include "shardlin/runtime/backends/Host.h"
#include "shardlin/runtime/base/Buffer.h"
#include "shardlin/runtime/base/ChunkLayout.h"
#include "shardlin/runtime/exec/Execute.h"
#include "shardlin/runtime/tooling/Runner.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <set>

namespace shardlin::e2e {

namespace rt = ::shardlin::rt;

//===----------------------------------------------------------------------===//
// Data and reference
//===----------------------------------------------------------------------===//

namespace {

/// splitmix64: a fixed, portable generator (the standard distributions are
/// implementation-defined, so they could change the data between libraries).
class Rng {
public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  /// Uniform in [0, 1).
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

private:
  uint64_t state_;
};

uint64_t hashString(const std::string &s, uint64_t h = 0xcbf29ce484222325ULL) {
  for (unsigned char ch : s) {
    h ^= ch;
    h *= 0x100000001b3ULL;
  }
  return h;
}

uint64_t seedFor(const LinearConfig &c, const std::string &tensor, int rank,
                 uint64_t salt) {
  return hashString(c.name() + "/" + tensor + "/" + std::to_string(rank) + "/" +
                    std::to_string(salt));
}

/// `count` values uniform in +-[0.25, 1], rounded to `dtype`; `values` holds
/// the rounded values exactly.
HostTensor randomTensor(rt::DType dtype, int64_t count, uint64_t seed) {
  Rng rng(seed);
  HostTensor t;
  t.values.resize(count);
  t.bytes.resize(count * rt::dtypeSize(dtype));
  for (int64_t i = 0; i < count; ++i) {
    double v = 0.25 + 0.75 * rng.uniform();
    if (rng.next() & 1)
      v = -v;
    t.values[i] = v;
  }
  // Rounding is monotonic and +-0.25, +-1 are representable in every dtype,
  // so the rounded values stay in +-[0.25, 1] and are never zero.
  rt::convertFromF64(dtype, t.values.data(), t.bytes.data(), count);
  rt::convertToF64(dtype, t.bytes.data(), t.values.data(), count);
  return t;
}

int64_t numElements(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

} // namespace

LinearData makeLinearData(const LinearConfig &c, uint64_t salt) {
  LinearData d;
  d.weight = randomTensor(c.dtype, c.n * c.k, seedFor(c, "A", 0, salt));
  if (c.bias)
    d.bias = randomTensor(c.dtype, c.n, seedFor(c, "b", 0, salt));
  for (int r = 0; r < c.worldSize(); ++r)
    d.inputs.push_back(
        randomTensor(c.dtype, c.rowsOf(r) * c.k, seedFor(c, "x", r, salt)));
  return d;
}

Reference referenceOutput(const LinearConfig &c, const LinearData &data,
                          int rank) {
  const int64_t rows = c.rowsOf(rank);
  const std::vector<double> &x = data.inputs[rank].values;
  const std::vector<double> &a = data.weight.values;
  Reference ref;
  ref.y.assign(rows * c.n, 0.0);
  ref.scale.assign(rows * c.n, 0.0);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < c.n; ++j) {
      double sum = 0, scale = 0;
      for (int64_t kk = 0; kk < c.k; ++kk) {
        double p = x[i * c.k + kk] * a[j * c.k + kk];
        sum += p;
        scale += std::fabs(p);
      }
      if (c.bias) {
        sum += data.bias.values[j];
        scale += std::fabs(data.bias.values[j]);
      }
      ref.y[i * c.n + j] = sum;
      ref.scale[i * c.n + j] = scale;
    }
  return ref;
}

double errorBound(const LinearConfig &c) {
  // The inputs are exactly representable (they were rounded before the
  // reference was computed), so only the program's own roundings count.
  //
  // f16/bf16, unit roundoff u = 2^-11 / 2^-8: the GEMM accumulates in f32
  // (error ~K * 2^-24 * scale, negligible) and rounds its result once.
  //  - Row-wise: each rank's partial product is rounded to the dtype before
  //    the reduce_scatter; those W errors are each <= u * (that rank's share
  //    of the scale), so <= u * scale together. The reduction sums in f32
  //    and rounds once, but a backend that reduces pairwise in 16-bit
  //    buffers (MPI with a user-defined op) may round after each of its W-1
  //    additions, each <= u * scale. The bias add rounds once more. Total
  //    <= (W + 1) u * scale.
  //  - Col-wise: one rounding (the GEMM with the bias chunk fused).
  // (W + 2) u covers both, with one u of margin for the f32 accumulation.
  //
  // f32: u = 2^-24 ~ 6e-8; K (<= 97) GEMM additions plus W + 1 (<= 9)
  // rounded reduction/bias steps give at most ~106 u ~ 6.3e-6 < 1e-5 (worst
  // case; typical errors are far smaller). f64: the same with
  // u = 2^-53 gives ~3e-15, far below 1e-12.
  return shardlin::testing::roundingErrorBound(c.dtype, c.worldSize() + 2);
}

int64_t checkOutput(const LinearConfig &c, const LinearData &data, int rank,
                    const std::vector<uint8_t> &output, std::string &report) {
  const Reference ref = referenceOutput(c, data, rank);
  return testkit::compareWithReference(
      c.name() + " rank " + std::to_string(rank), c.dtype, output, c.n, ref.y,
      ref.scale, errorBound(c), report);
}

uint64_t expectedBytesSent(const LinearConfig &c, int rank) {
  // b: this rank's rows; others: every other rank's (W-1)*B when every rank
  // has B rows).
  const int64_t w = c.worldSize(), b = c.rowsOf(rank);
  int64_t others = 0;
  for (int r = 0; r < w; ++r)
    others += r == rank ? 0 : c.rowsOf(r);
  const int64_t elt = static_cast<int64_t>(rt::dtypeSize(c.dtype));
  int64_t bytes;
  if (c.strategy == "gather-weight") {
    // all_gather of this rank's weight chunk to the W-1 others.
    rt::ChunkLayout layout(c.dim == 1 ? c.k : c.n, c.placements, c.bounds);
    bytes = (w - 1) * layout.ofRank(rank).size * (c.dim == 1 ? c.n : c.k) * elt;
  } else if (c.dim == 1) {
    // The reduce_scatter moves partial sums, f32 for f16 and bf16.
    const int64_t partial =
        c.dtype == rt::DType::F16 || c.dtype == rt::DType::BF16 ? 4 : elt;
    rt::ChunkLayout kLayout(c.k, c.placements, c.bounds);
    bytes = b * (c.k - kLayout.ofRank(rank).size) * elt +
            others * c.n * partial;
  } else {
    rt::ChunkLayout nLayout(c.n, c.placements, c.bounds);
    bytes = ((w - 1) * b * c.k + others * nLayout.ofRank(rank).size) * elt;
  }
  return static_cast<uint64_t>(bytes);
}

LinearConfig makeConfig(int64_t dim, int64_t n, int64_t k,
                        std::vector<int64_t> placements,
                        std::vector<int64_t> batch, bool bias, rt::DType dtype,
                        std::string strategy) {
  LinearConfig c;
  c.dim = dim;
  c.n = n;
  c.k = k;
  c.placements = std::move(placements);
  c.batch = std::move(batch);
  c.bias = bias;
  c.dtype = dtype;
  c.strategy = std::move(strategy);
  return c;
}

//===----------------------------------------------------------------------===//
// Running
//===----------------------------------------------------------------------===//

rt::Status bindArguments(const rt::Program &program, const rt::Plan &plan,
                         const LinearConfig &c, const LinearData &data,
                         int rank, std::vector<uint8_t> &chunkStorage,
                         std::vector<const void *> &args) {
  const std::string who = c.name() + " rank " + std::to_string(rank) + ": ";
  const size_t expectedArgs = c.bias ? 3 : 2;
  if (program.args.size() != expectedArgs || plan.numArgs() != expectedArgs)
    return rt::Status::internal(
        who + "the program has " + std::to_string(program.args.size()) +
        " arguments, expected " + std::to_string(expectedArgs));
  if (plan.numResults() != 1)
    return rt::Status::internal(who + "the program has " +
                             std::to_string(plan.numResults()) +
                             " results, expected 1");
  if (program.args[0].sharded || !program.args[1].sharded ||
      (c.bias && program.args[2].sharded))
    return rt::Status::internal(who + "expected only argument 1 to be sharded");
  if (plan.argShape(0) != c.inputShapeOf(rank))
    return rt::Status::internal(who + "input shape " +
                             rt::formatShape(plan.argShape(0)) + ", expected " +
                             rt::formatShape(c.inputShapeOf(rank)));
  // A `?` is a size a compiled program's run decides (it checks it).
  const std::vector<int64_t> &result = plan.resultShape(0);
  const std::vector<int64_t> expected = c.outputShapeOf(rank);
  bool resultMatches = result.size() == expected.size();
  for (size_t d = 0; resultMatches && d < result.size(); ++d)
    resultMatches = result[d] == rt::kDynamic || result[d] == expected[d];
  if (!resultMatches)
    return rt::Status::internal(who + "result shape " +
                             rt::formatShape(plan.resultShape(0)) +
                             ", expected " +
                             rt::formatShape(c.outputShapeOf(rank)));
  for (size_t i = 0; i < expectedArgs; ++i)
    if (plan.argType(i) != c.dtype)
      return rt::Status::internal(who + "argument " + std::to_string(i) +
                               " has type " + rt::dtypeName(plan.argType(i)));

  const rt::Argument &w = program.args[1];
  rt::extractLocalChunk(data.weight.bytes.data(), w.globalShape, c.dtype,
                        w.sharding, rank, chunkStorage);
  const size_t chunkBytes =
      numElements(plan.argShape(1)) * rt::dtypeSize(c.dtype);
  if (chunkStorage.size() != chunkBytes)
    return rt::Status::internal(who + "extractLocalChunk gave " +
                             std::to_string(chunkStorage.size()) +
                             " bytes but the plan's local weight shape " +
                             rt::formatShape(plan.argShape(1)) + " needs " +
                             std::to_string(chunkBytes));

  args.clear();
  args.push_back(data.inputs[rank].bytes.data());
  args.push_back(chunkStorage.data());
  if (c.bias)
    args.push_back(data.bias.bytes.data());
  return rt::Status::ok();
}

std::vector<uint8_t> poisonedOutput(const rt::Plan &plan) {
  const size_t bytes =
      numElements(plan.resultShape(0)) * rt::dtypeSize(plan.resultType(0));
  return std::vector<uint8_t>(bytes, 0xFF);
}

namespace {
/// RankCallbacks::argShapes of a layer: the input's shape on each rank,
/// for a program with dynamic batch dims.
decltype(rt::RankCallbacks::argShapes)
linearArgShapes(const rt::Program &program, const LinearConfig &config) {
  return [&program, &config](int rank,
                             std::vector<std::vector<int64_t>> &shapes,
                             std::vector<std::string> &) {
    return testkit::dynamicArgShapes(program, 0, config.inputShapeOf(rank),
                                     shapes);
  };
}

/// The callbacks of a layer's run but its binding: the plan cache, the
/// executors and the input's shape on each rank.
rt::RankCallbacks
linearCallbacks(const rt::Program &program, const LinearConfig &config,
                rt::PlanCache *plans,
                const rt::RankCallbacks::MakeExecutor &executor) {
  rt::RankCallbacks callbacks;
  callbacks.plans = plans;
  callbacks.executor = executor;
  callbacks.argShapes = linearArgShapes(program, config);
  return callbacks;
}
} // namespace

rt::Status runLinear(const rt::Program &program, const LinearConfig &config,
                     const std::vector<const LinearData *> &runs,
                     const rt::RunOptions &options,
                     std::vector<std::vector<std::vector<uint8_t>>> &outputs,
                     std::vector<rt::RankResult> &ranks,
                     rt::PlanCache *plans,
                     const rt::RankCallbacks::MakeExecutor &executor) {
  const int w = config.worldSize();
  if (runs.empty())
    return rt::Status::invalidArgument("runLinear needs at least one run");
  outputs.assign(runs.size(), std::vector<std::vector<uint8_t>>(w));
  // Each rank's chunk of A for each run (written on the rank's thread).
  std::vector<std::vector<std::vector<uint8_t>>> chunks(
      w, std::vector<std::vector<uint8_t>>(runs.size()));
  std::vector<std::vector<std::vector<const void *>>> args(
      w, std::vector<std::vector<const void *>>(runs.size()));
  rt::RankCallbacks callbacks =
      linearCallbacks(program, config, plans, executor);
  callbacks.bind = [&](const rt::Plan &plan, rt::RankDevice &,
                       rt::RankBuffers &buffers) {
    const int r = plan.rank();
    for (size_t i = 0; i < runs.size(); ++i) {
      SHARDLIN_RETURN_IF_ERROR(bindArguments(program, plan, config, *runs[i],
                                             r, chunks[r][i], args[r][i]));
      outputs[i][r] = poisonedOutput(plan);
    }
    buffers.args = args[r][0];
    buffers.results = {outputs[0][r].data()};
    return rt::Status::ok();
  };
  if (runs.size() > 1)
    callbacks.run = [&](rt::RankRun &run) {
      const int r = run.plan().rank();
      for (size_t i = 0; i < runs.size(); ++i) {
        run.buffers().args = args[r][i];
        run.buffers().results = {outputs[i][r].data()};
        SHARDLIN_RETURN_IF_ERROR(run.execute());
      }
      return rt::Status::ok();
    };
  rt::RunOptions withW = options;
  if (withW.worldSize == 0)
    withW.worldSize = w;
  return rt::runProgram(program, withW, callbacks, &ranks);
}

rt::Status runRank(const rt::Program &program, const LinearConfig &config,
                   const LinearData &data, rt::Communicator &comm,
                   std::vector<uint8_t> &output, rt::PlanCache *plans,
                   bool *planReused,
                   const rt::RankCallbacks::MakeExecutor &executor) {
  // The runtime's own one-rank run (plan, bind, agreement, run), on host
  // memory; only the binding is the test's.
  std::vector<uint8_t> chunk;
  rt::RankCallbacks callbacks =
      linearCallbacks(program, config, plans, executor);
  callbacks.bind = [&](const rt::Plan &plan, rt::RankDevice &,
                       rt::RankBuffers &buffers) {
    SHARDLIN_RETURN_IF_ERROR(bindArguments(program, plan, config, data,
                                           comm.rank(), chunk, buffers.args));
    output = poisonedOutput(plan);
    buffers.results = {output.data()};
    return rt::Status::ok();
  };
  std::unique_ptr<rt::RankDevice> device = rt::createHostDevice();
  rt::RankResult result =
      rt::runRank(rt::SharedProgram(program), comm, *device, callbacks);
  if (planReused)
    *planReused = result.planReused;
  return result.status;
}

//===----------------------------------------------------------------------===//
// Configuration lists
//===----------------------------------------------------------------------===//

std::vector<std::vector<std::vector<int64_t>>>
batchSizeRuns(int w, const std::vector<int64_t> &batch) {
  std::vector<std::vector<std::vector<int64_t>>> runs(4);
  for (int r = 0; r < w; ++r) {
    const int64_t firsts[4] = {r % 3 == 1 ? 0 : 2 + 3 * r, 1, 0, 7 - r};
    for (int i = 0; i < 4; ++i) {
      std::vector<int64_t> dims = batch;
      dims[0] = firsts[i];
      runs[i].push_back(dims);
    }
  }
  runs.push_back(runs[0]);
  return runs;
}

namespace {

std::vector<int64_t> reversedPerm(int w) {
  std::vector<int64_t> p = testkit::identityPlacements(w);
  std::reverse(p.begin(), p.end());
  return p;
}

/// Fisher-Yates with the fixed generator: the same permutation every run.
std::vector<int64_t> randomPerm(int w, Rng &rng) {
  std::vector<int64_t> p = testkit::identityPlacements(w);
  for (int i = w - 1; i > 0; --i)
    std::swap(p[i], p[rng.next() % (i + 1)]);
  return p;
}

/// Size of the sharded dim that gives empty chunks at W: 3 over 5 (1, 1, 1,
/// 0, 0), 5 over 4 (2, 2, 1, 0), 6 over 8 (1, 1, 1, 1, 1, 1, 0, 0); for other
/// W, W - 1 (a trailing empty chunk). 0 if W cannot have one.
int64_t emptyChunkSize(int w) {
  switch (w) {
  case 4:
    return 5;
  case 5:
    return 3;
  case 8:
    return 6;
  default:
    return w >= 2 ? w - 1 : 0;
  }
}

enum class Shape { Even, Uneven, Empty, Large, Tiny };

/// N and K for a shape kind: even 16 x 16, uneven 11 x 19, empty chunks:
/// the sharded dim from emptyChunkSize(W), the other 7; large 67 x 97 (big
/// enough for OpenBLAS's blocked kernels, uneven for W = 3 and 8); tiny
/// 1 x 2 (most ranks hold an empty chunk, whichever dim is split).
bool shapeFor(Shape s, int64_t dim, int w, int64_t &n, int64_t &k) {
  switch (s) {
  case Shape::Even:
    n = k = 16;
    return 16 % w == 0;
  case Shape::Uneven:
    n = 11;
    k = 19;
    return true;
  case Shape::Empty: {
    int64_t e = emptyChunkSize(w);
    if (e == 0)
      return false;
    n = dim == 0 ? e : 7;
    k = dim == 1 ? e : 7;
    return true;
  }
  case Shape::Large:
    n = 67;
    k = 97;
    return true;
  case Shape::Tiny:
    n = 1;
    k = 2;
    return true;
  }
  return false;
}

/// Explicit chunk boundaries of a dim of size n over w chunks that are not
/// the ceil rule's (upstream's sharded_dims_offsets): bounds[i] =
/// floor(n i^2 / w^2), chunks growing with i, the first ones empty where n
/// is small (11 over 4: 0, 2, 4, 5; 11 over 8: 0, 0, 0, 1, 1, 2, 2, 2, 3).
std::vector<int64_t> skewedBounds(int64_t n, int64_t w) {
  std::vector<int64_t> bounds;
  for (int64_t i = 0; i <= w; ++i)
    bounds.push_back(n * i * i / (w * w));
  return bounds;
}

class ConfigList {
public:
  /// `bounded`: the chunks at skewedBounds instead of the ceil rule.
  void add(int64_t dim, Shape shape, std::vector<int64_t> placements,
           std::vector<int64_t> batch, bool bias, rt::DType dtype,
           bool bounded = false) {
    LinearConfig c;
    c.dim = dim;
    if (!shapeFor(shape, dim, static_cast<int>(placements.size()), c.n, c.k))
      return;
    if (bounded)
      c.bounds = skewedBounds(dim == 1 ? c.k : c.n,
                              static_cast<int64_t>(placements.size()));
    c.placements = std::move(placements);
    c.batch = std::move(batch);
    c.bias = bias;
    c.dtype = dtype;
    if (names_.insert(c.name()).second)
      configs_.push_back(std::move(c));
  }
  /// Every configuration, each multi-rank one once per strategy.
  std::vector<LinearConfig> take() {
    std::vector<LinearConfig> all;
    for (const LinearConfig &c : configs_) {
      all.push_back(c);
      if (c.worldSize() > 1) {
        LinearConfig g = c;
        g.strategy = "gather-weight";
        all.push_back(std::move(g));
      }
    }
    configs_.clear();
    return all;
  }

private:
  std::set<std::string> names_;
  std::vector<LinearConfig> configs_;
};

const rt::DType kAllDTypes[] = {rt::DType::F16, rt::DType::BF16, rt::DType::F32,
                                rt::DType::F64};

} // namespace

std::vector<LinearConfig> threadsConfigs() {
  using rt::DType;
  ConfigList list;
  const std::vector<int64_t> b5 = {5}, b1 = {1}, oneD = {}, threeD = {2, 3},
                             fourD = {2, 1, 2}, empty = {0};
  for (int64_t dim : {1, 0}) {
    Rng rng(0x5eed0000 + dim);

    // The sweep over W, shapes and placements: 2-D input (B = 5), f32, with
    // and without bias. Random permutations for W >= 5.
    for (int w : {1, 2, 3, 4, 5, 6, 7, 8}) {
      std::vector<std::vector<int64_t>> perms = {testkit::identityPlacements(w)};
      if (w > 1)
        perms.push_back(reversedPerm(w));
      if (w >= 5) {
        perms.push_back(randomPerm(w, rng));
        perms.push_back(randomPerm(w, rng));
      }
      for (Shape s : {Shape::Even, Shape::Uneven, Shape::Empty}) {
        // W = 6 and 7 only add random placements on uneven shapes.
        if ((w == 6 || w == 7) && s != Shape::Uneven)
          continue;
        for (const auto &p : perms)
          for (bool bias : {true, false})
            list.add(dim, s, p, b5, bias, DType::F32);
      }
    }

    // Every permutation of W = 4: uneven sizes with bias and a 2-D input,
    // and the empty-chunk sizes (2, 2, 1, 0) with a 1-D input, no bias.
    std::vector<int64_t> p4 = testkit::identityPlacements(4);
    do {
      list.add(dim, Shape::Uneven, p4, b5, true, DType::F32);
      list.add(dim, Shape::Empty, p4, oneD, false, DType::F32);
    } while (std::next_permutation(p4.begin(), p4.end()));

    // Input ranks 1-D to 4-D and B = 1, with and without bias.
    const std::vector<std::pair<Shape, std::vector<int64_t>>> shapeCases = {
        {Shape::Uneven, testkit::identityPlacements(1)},
        {Shape::Uneven, {2, 0, 1}},
        {Shape::Empty, {3, 1, 0, 2}},
        {Shape::Empty, randomPerm(8, rng)}};
    for (const auto &[shape, p] : shapeCases)
      for (const auto &batch : {oneD, b5, b1, threeD, fourD})
        for (bool bias : {true, false})
          list.add(dim, shape, p, batch, bias, DType::F32);

    // Every dtype on a representative subset.
    for (DType dt : kAllDTypes)
      for (const auto &[shape, p] :
           std::vector<std::pair<Shape, std::vector<int64_t>>>{
               {Shape::Uneven, testkit::identityPlacements(1)},
               {Shape::Uneven, {2, 0, 1}},
               {Shape::Empty, {1, 3, 0, 2}}})
        for (bool bias : {true, false})
          for (const auto &batch : {oneD, threeD})
            list.add(dim, shape, p, batch, bias, dt);

    // Larger uneven shapes, every dtype, random placements.
    for (int w : {3, 8}) {
      std::vector<int64_t> p = randomPerm(w, rng);
      for (DType dt : kAllDTypes)
        list.add(dim, Shape::Large, p, {3, 7}, true, dt);
    }

    // Tiny N and K: W far above both, so most ranks hold nothing.
    for (int w : {3, 8}) {
      std::vector<int64_t> p = randomPerm(w, rng);
      for (DType dt : {DType::F32, DType::BF16})
        for (const auto &batch :
             {oneD, threeD, std::vector<int64_t>{1, 2, 1, 2}})
          list.add(dim, Shape::Tiny, p, batch, dt == DType::F32, dt);
    }

    // Explicit chunk bounds (upstream's sharded_dims_offsets), skewed and
    // with empty chunks: W = 2..8, permuted placements, 1-D to 3-D inputs,
    // every dtype.
    for (int w : {2, 3, 4, 8}) {
      const std::vector<int64_t> p = w == 4 ? std::vector<int64_t>{3, 1, 0, 2}
                                            : randomPerm(w, rng);
      for (Shape s : {Shape::Uneven, Shape::Large})
        for (const auto &batch : {oneD, b5, threeD})
          list.add(dim, s, p, batch, batch != oneD, DType::F32, true);
      for (DType dt : kAllDTypes)
        list.add(dim, Shape::Uneven, p, threeD, true, dt, true);
    }

    // An empty batch (B = 0): nothing to compare, but it must run.
    list.add(dim, Shape::Uneven, {2, 0, 1}, empty, true, DType::F32);
    list.add(dim, Shape::Empty, {3, 1, 0, 2}, {2, 0}, false, DType::F16);
  }
  return list.take();
}

std::vector<LinearConfig> mpiConfigs(int worldSize) {
  using rt::DType;
  ConfigList list;
  if (worldSize < 1)
    return {};
  const int w = worldSize;
  const std::vector<int64_t> oneD = {}, threeD = {2, 3};
  Rng rng(0x3b10000 + w);
  std::vector<std::vector<int64_t>> perms = {testkit::identityPlacements(w)};
  if (w > 1)
    perms.push_back(reversedPerm(w));
  if (w == 4)
    perms.push_back({3, 1, 0, 2}); // multi-hop
  if (w > 2)
    perms.push_back(randomPerm(w, rng));
  for (int64_t dim : {1, 0}) {
    for (Shape s : {Shape::Uneven, Shape::Empty})
      for (const auto &p : perms) {
        list.add(dim, s, p, oneD, true, DType::F32);
        list.add(dim, s, p, threeD, false, DType::F32);
      }
    // Every dtype on the most permuted placements, uneven and empty, and
    // at explicit, skewed chunk bounds.
    for (DType dt : kAllDTypes) {
      for (Shape s : {Shape::Uneven, Shape::Empty}) {
        list.add(dim, s, perms.back(), oneD, false, dt);
        list.add(dim, s, perms.back(), threeD, true, dt);
      }
      list.add(dim, Shape::Uneven, perms.back(), threeD, true, dt, true);
    }
  }
  return list.take();
}

} // namespace shardlin::e2e
