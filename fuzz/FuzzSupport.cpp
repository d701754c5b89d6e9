//===- FuzzSupport.cpp - Checks shared by the fuzz targets ----------------===//

#include "FuzzSupport.h"

#include "shardlin/runtime/backends/Registry.h"
#include "shardlin/runtime/program/ProgramText.h"
#include "shardlin/runtime/base/Buffer.h"
#include "shardlin/runtime/exec/Execute.h"
#include "shardlin/runtime/exec/Plan.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

namespace shardlin::fuzz {

namespace rt = ::shardlin::rt;

bool verbose() {
  static const bool on = std::getenv("SHARDLIN_FUZZ_VERBOSE") != nullptr;
  return on;
}

void note(const std::string &what) {
  if (verbose())
    std::fprintf(stderr, "shardlin fuzz: %s\n", what.c_str());
}

void fail(const std::string &what) {
  std::fprintf(stderr, "shardlin fuzz check failed: %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

namespace {

/// Host memory up to a budget; beyond it, allocation fails with a Status,
/// the way a real allocator fails on a request it cannot serve.
class BudgetAllocator final : public rt::Allocator {
public:
  explicit BudgetAllocator(size_t budget) : budget_(budget) {}
  rt::Device device() const override { return rt::Device{}; }
  rt::Status allocate(size_t bytes, void **ptr) override {
    *ptr = nullptr;
    std::lock_guard<std::mutex> lock(mutex_);
    if (bytes > budget_ - used_)
      return rt::Status::resourceExhausted("fuzz allocator: " + std::to_string(bytes) +
                               " bytes exceed the budget");
    void *p = nullptr;
    if (posix_memalign(&p, 64, bytes ? bytes : 1) != 0)
      return rt::Status::resourceExhausted("fuzz allocator: out of memory");
    // Poison, so reads of unwritten memory at least read garbage.
    std::memset(p, 0xA5, bytes);
    used_ += bytes;
    *ptr = p;
    return rt::Status::ok();
  }
  void deallocate(void *ptr) override { std::free(ptr); }

private:
  std::mutex mutex_;
  size_t budget_;
  size_t used_ = 0;
};

constexpr size_t kPlanBudget = size_t(8) << 20;  // per rank
constexpr size_t kRunBudget = size_t(1) << 20;   // args + results, per rank
constexpr int kMaxRunRanks = 8;

std::vector<int> ranksToCheck(int w) {
  if (w <= 16) {
    std::vector<int> all(w);
    for (int r = 0; r < w; ++r)
      all[r] = r;
    return all;
  }
  return {0, 1, w / 2, w - 1};
}

/// Small sizes for the dynamic argument dims (0 included), different on
/// each rank, so that the lockstep planning of per-rank rows is fuzzed too.
rt::DynamicSizes fuzzSizes(const rt::Program &program, int w) {
  const size_t n = rt::dynamicArgDims(program).size();
  if (n == 0)
    return {};
  rt::DynamicSizes sizes(w, std::vector<int64_t>(n));
  for (int p = 0; p < w; ++p)
    for (size_t i = 0; i < n; ++i)
      sizes[p][i] = static_cast<int64_t>((p + i) % 3);
  return sizes;
}

bool bytesOf(const std::vector<int64_t> &shape, rt::DType dt, size_t &out) {
  int64_t n = 0;
  if (!rt::checkedNumElements(shape, n, rt::dtypeSize(dt)))
    return false;
  out = size_t(n) * rt::dtypeSize(dt);
  return true;
}

/// Runs the program on W ranks of the threads backend through the
/// in-memory run API, with inputs of the planned shapes (what shardlin-exec
/// does, less the files). Errors are fine (the programs are arbitrary);
/// crashes, sanitizer reports and hangs are not.
void runOnThreads(const rt::Program &program, int w) {
  // Input and output buffers, sized from each rank's plan; a rank whose
  // buffers would exceed the budget fails its bind, and so every rank.
  std::vector<std::vector<std::vector<uint8_t>>> args(w), results(w);
  const rt::DynamicSizes sizes = fuzzSizes(program, w);
  const std::vector<rt::DynamicDim> dims = rt::dynamicArgDims(program);
  rt::RankCallbacks callbacks;
  callbacks.argShapes = [&](int rank, std::vector<std::vector<int64_t>> &shapes,
                            std::vector<std::string> &) {
    shapes.assign(program.args.size(), {});
    for (size_t i = 0; i < dims.size(); ++i) {
      std::vector<int64_t> &shape = shapes[dims[i].arg];
      if (shape.empty())
        shape = program.args[dims[i].arg].type.shape;
      shape[dims[i].dim] = sizes[rank][i];
    }
    return rt::Status::ok();
  };
  callbacks.bind = [&](const rt::Plan &plan, rt::RankDevice &,
                       rt::RankBuffers &buffers) {
    const int r = plan.rank();
    size_t total = 0;
    for (size_t i = 0; i < plan.numArgs(); ++i) {
      size_t b = 0;
      if (!bytesOf(plan.argShape(i), plan.argType(i), b) ||
          b > kRunBudget - total)
        return rt::Status::invalidArgument("fuzz: inputs over the budget");
      total += b;
      // Small values of every dtype: 0x3C00 is 1.0 in f16, 0x3F80.. is
      // about 1.0 in bf16/f32, and the f64 pattern is a normal number.
      args[r].emplace_back(b, 0x3C);
      buffers.args.push_back(args[r].back().data());
    }
    for (size_t i = 0; i < plan.numResults(); ++i) {
      size_t b = 0;
      if (!bytesOf(plan.resultShape(i), plan.resultType(i), b) ||
          b > kRunBudget - total)
        return rt::Status::invalidArgument("fuzz: results over the budget");
      total += b;
      results[r].emplace_back(b, 0xEE);
      buffers.results.push_back(results[r].back().data());
    }
    return rt::Status::ok();
  };
  rt::RunOptions options;
  options.backend = "threads";
  options.worldSize = w;
  options.comm.timeoutSeconds = 2.0;
  options.blasThreads = 1;
  std::vector<rt::RankResult> ranks;
  rt::Status s = rt::runProgram(program, options, callbacks, &ranks);
  if (!s && s.message().empty())
    fail("runProgram failed without a message");
  for (const rt::RankResult &rank : ranks)
    note("rank " + std::to_string(rank.rank) + " of " + std::to_string(w) +
         ": run: " + (rank.status ? std::string("ok")
                                  : rank.status.message()));
}

void checkWorld(const rt::Program &program, int w) {
  std::vector<std::unique_ptr<rt::Plan>> plans;
  std::vector<std::unique_ptr<BudgetAllocator>> allocators;
  const rt::DynamicSizes sizes = fuzzSizes(program, w);
  bool all = true;
  for (int r : ranksToCheck(w)) {
    allocators.push_back(std::make_unique<BudgetAllocator>(kPlanBudget));
    std::unique_ptr<rt::Plan> plan;
    rt::Status s =
        rt::Plan::build(program, r, w, *allocators.back(), plan, sizes);
    if (!s) {
      if (s.message().empty())
        fail("Plan::build failed without a message");
      note("rank " + std::to_string(r) + " of " + std::to_string(w) +
           ": Plan::build: " + s.message());
      all = false;
      continue;
    }
    if (!plan || plan->rank() != r || plan->numArgs() != program.args.size() ||
        plan->numResults() != program.results.size())
      fail("Plan::build succeeded but returned an inconsistent plan");
    plans.push_back(std::move(plan));
  }
  const bool run =
      all && w <= kMaxRunRanks && static_cast<int>(plans.size()) == w;
  // Plans hold buffers of their allocators: free them first.
  plans.clear();
  if (run)
    runOnThreads(program, w);
}

} // namespace

void checkProgram(const rt::Program &program) {
  rt::Status valid = program.validate();
  if (!valid)
    return;
  std::string text = rt::serializeProgram(program);
  rt::Program again;
  rt::Status parsed = rt::parseProgram(text, again);
  if (!parsed)
    fail("the text form of a valid program does not parse: " +
         parsed.message() + "\n--- text ---\n" + text);
  if (rt::serializeProgram(again) != text)
    fail("the text form does not round-trip:\n--- first ---\n" + text +
         "--- second ---\n" + rt::serializeProgram(again));

  if (program.worldSize > 0) {
    if (program.worldSize <= (1 << 20))
      checkWorld(program, static_cast<int>(program.worldSize));
  } else {
    // Any W is allowed for a program without sharded values.
    checkWorld(program, 1);
    checkWorld(program, 3);
  }
}

} // namespace shardlin::fuzz
