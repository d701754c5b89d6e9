//===- Run.cpp - Running a compiled program on in-memory arrays -----------===//

#include "Run.h"

#include "shardlin/runtime/backends/Mpi.h"
#include "shardlin/runtime/backends/Registry.h"
#include "shardlin/runtime/base/ChunkLayout.h"
#include "shardlin/runtime/comm/Communicator.h"
#include "shardlin/runtime/tooling/Process.h"
#include "shardlin/runtime/tooling/Runner.h"

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <pthread.h>
#include <unistd.h>

namespace shardlin::python {

namespace {

//===----------------------------------------------------------------------===//
// Interruption: SIGINT fails every rank at its next collective
//===----------------------------------------------------------------------===//

std::atomic<bool> interruptRequested{false};

extern "C" void onInterrupt(int) { interruptRequested.store(true); }

/// While it lives, on the main thread, SIGINT sets interruptRequested
/// instead of running Python's handler (which would only set a flag that
/// nobody reads until the run returns); the previous handler is restored
/// after, and the caller re-raises the interrupt through Python.
class InterruptScope {
public:
  InterruptScope() {
    interruptRequested.store(false);
    if (getpid() != gettid())
      return;
    struct sigaction action {};
    action.sa_handler = onInterrupt;
    sigemptyset(&action.sa_mask);
    if (sigaction(SIGINT, nullptr, &previous_) != 0 ||
        previous_.sa_handler == SIG_IGN)
      return;
    installed_ = sigaction(SIGINT, &action, nullptr) == 0;
  }
  ~InterruptScope() {
    if (installed_)
      sigaction(SIGINT, &previous_, nullptr);
  }
  InterruptScope(const InterruptScope &) = delete;
  InterruptScope &operator=(const InterruptScope &) = delete;

private:
  struct sigaction previous_ {};
  bool installed_ = false;
};

/// A rank's communicator that, once an interrupt was requested, fails each
/// collective instead of entering it (Communicator::failCollective: on the
/// threads backend every rank's call then fails at once).
class InterruptibleCommunicator final : public rt::Communicator {
public:
  explicit InterruptibleCommunicator(std::unique_ptr<rt::Communicator> inner)
      : inner_(std::move(inner)) {}
  int rank() const override { return inner_->rank(); }
  int worldSize() const override { return inner_->worldSize(); }
  const char *backendName() const override { return inner_->backendName(); }
  rt::Device device() const override { return inner_->device(); }
  bool callableFromAnyThread() const override {
    return inner_->callableFromAnyThread();
  }

protected:
  rt::Status doAllGatherV(const rt::CollectiveCall &c) override {
    if (interruptRequested.load())
      return interrupted(c);
    return inner_->allGatherV(c.send, c.count, c.recv, *c.recvCounts,
                              *c.recvDispls, c.dtype);
  }
  rt::Status doAllToAllV(const rt::CollectiveCall &c) override {
    if (interruptRequested.load())
      return interrupted(c);
    return inner_->allToAllV(c.send, *c.sendCounts, *c.sendDispls, c.recv,
                             *c.recvCounts, *c.recvDispls, c.dtype);
  }
  rt::Status doReduceScatterV(const rt::CollectiveCall &c) override {
    if (interruptRequested.load())
      return interrupted(c);
    return inner_->reduceScatterV(c.send, *c.sendCounts, *c.sendDispls,
                                  c.recv, c.dtype);
  }
  rt::Status doAllReduce(const rt::CollectiveCall &c) override {
    if (interruptRequested.load())
      return interrupted(c);
    return inner_->allReduce(c.send, c.recv, c.count, c.dtype);
  }
  rt::Status doBroadcast(const rt::CollectiveCall &c) override {
    if (interruptRequested.load())
      return interrupted(c);
    return inner_->broadcast(c.recv, c.count, c.dtype, c.root);
  }
  rt::Status doBarrier(const rt::CollectiveCall &c) override {
    if (interruptRequested.load())
      return interrupted(c);
    return inner_->barrier();
  }
  rt::Status doSplit(int color, int key,
                     std::unique_ptr<rt::Communicator> &out) override {
    SHARDLIN_RETURN_IF_ERROR(inner_->split(color, key, out));
    out = std::make_unique<InterruptibleCommunicator>(std::move(out));
    return rt::Status::ok();
  }

private:
  rt::Status interrupted(const rt::CollectiveCall &c) {
    rt::Status s = inner_->failCollective(c.kind, c.dtype,
                                          "interrupted (KeyboardInterrupt)");
    return rt::Status::aborted("interrupted (KeyboardInterrupt): " +
                               s.message());
  }
  std::unique_ptr<rt::Communicator> inner_;
};

//===----------------------------------------------------------------------===//
// Shapes and chunks
//===----------------------------------------------------------------------===//

int64_t elementsOf(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

/// Copies `chunk` (chunkShape, row-major) into `global` at `offset` along
/// `dim`: what assembling a sharded result does for each rank's chunk.
void insertChunk(void *global, const std::vector<int64_t> &globalShape,
                 const void *chunk, const std::vector<int64_t> &chunkShape,
                 int64_t dim, int64_t offset, size_t elementSize) {
  int64_t outer = 1, inner = static_cast<int64_t>(elementSize);
  for (int64_t d = 0; d < dim; ++d)
    outer *= globalShape[d];
  for (size_t d = dim + 1; d < globalShape.size(); ++d)
    inner *= globalShape[d];
  const int64_t rows = chunkShape[dim], globalRows = globalShape[dim];
  if (rows == 0 || inner == 0)
    return;
  for (int64_t o = 0; o < outer; ++o)
    std::memcpy(static_cast<char *>(global) + (o * globalRows + offset) * inner,
                static_cast<const char *>(chunk) + o * rows * inner,
                static_cast<size_t>(rows * inner));
}

std::string shapeText(const std::vector<int64_t> &shape) {
  return rt::formatShape(shape);
}

/// Whether `shape` matches `want`, where a kDynamic dim of `want` takes any
/// size.
bool matchesShape(const std::vector<int64_t> &shape,
                  const std::vector<int64_t> &want) {
  if (shape.size() != want.size())
    return false;
  for (size_t d = 0; d < shape.size(); ++d)
    if (want[d] != rt::kDynamic && want[d] != shape[d])
      return false;
  return true;
}

/// A contiguous copy of a strided array.
std::vector<uint8_t> packed(const HostArray &a) {
  const size_t es = rt::dtypeSize(a.dtype);
  const int64_t n = elementsOf(a.shape);
  std::vector<uint8_t> out(static_cast<size_t>(n) * es);
  std::vector<int64_t> index(a.shape.size(), 0);
  for (int64_t e = 0; e < n; ++e) {
    int64_t at = 0;
    for (size_t d = 0; d < index.size(); ++d)
      at += index[d] * a.strides[d];
    std::memcpy(out.data() + e * es,
                static_cast<const char *>(a.data) + at * int64_t(es), es);
    for (size_t d = index.size(); d-- > 0;) {
      if (++index[d] < a.shape[d])
        break;
      index[d] = 0;
    }
  }
  return out;
}

} // namespace

bool HostArray::contiguous() const {
  int64_t expected = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    if (shape[d] != 1 && strides[d] != expected)
      return false;
    expected *= shape[d];
  }
  return true;
}

OwnedBuffer::OwnedBuffer(size_t n) : bytes(n) {
  data = std::aligned_alloc(64, ((n + 63) / 64) * 64 + 64);
}
OwnedBuffer::~OwnedBuffer() { std::free(data); }

namespace {

//===----------------------------------------------------------------------===//
// Binding
//===----------------------------------------------------------------------===//

/// The arrays of one run, made contiguous once (a copy only for a strided
/// array), shared by the ranks.
struct Inputs {
  const rt::Program *program = nullptr;
  std::vector<std::vector<HostArray>> arrays;
  std::vector<std::vector<std::vector<uint8_t>>> copies;
  std::vector<bool> perRank;
};

struct RankState {
  std::vector<std::vector<uint8_t>> chunks;
  /// A GPU rank's copies of its arguments and results, from `allocator`.
  std::vector<void *> deviceBuffers;
  rt::Allocator *allocator = nullptr;
  std::vector<std::shared_ptr<OwnedBuffer>> results;
  std::vector<std::vector<int64_t>> resultShapes;
  std::vector<uintptr_t> addresses;
  std::vector<bool> copied;
  /// MPI only: the assembled results, gathered in finish.
  std::vector<ResultArray> assembled;
};

const HostArray &arrayOf(const Inputs &in, size_t i, int rank) {
  return in.arrays[i][in.perRank[i] ? rank : 0];
}

/// The host memory that argument i of `rank` is bound to.
rt::Status bindArgument(const Inputs &in, const rt::Plan &plan, size_t i,
                        RankState &state, const void *&out) {
  const rt::Program &program = *in.program;
  const rt::Argument &arg = program.args[i];
  const int rank = plan.rank();
  const HostArray &a = arrayOf(in, i, rank);
  const std::string who = rt::describeArgument(program, i) +
                          (in.perRank[i] ? " on rank " + std::to_string(rank)
                                         : std::string());
  if (a.dtype != plan.argType(i))
    return rt::Status::invalidArgument(
        who + ": an array of " + rt::dtypeName(a.dtype) + ", but the program "
        "takes " + rt::dtypeName(plan.argType(i)) +
        " (convert it first: no implicit cast)");
  const std::vector<int64_t> &want = plan.argShape(i);
  if (arg.sharded && a.shape == arg.globalShape && a.shape != want) {
    // The global tensor: this rank's chunk, in place where it is one
    // contiguous block (a split of the leading dim), else copied.
    const int64_t dim = arg.sharding.dim;
    const rt::Range range =
        rt::ChunkLayout(arg.globalShape[dim], arg.sharding).ofRank(rank);
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < dim; ++d)
      outer *= a.shape[d];
    for (size_t d = dim + 1; d < a.shape.size(); ++d)
      inner *= a.shape[d];
    if (outer == 1) {
      out = static_cast<const char *>(a.data) +
            range.offset * inner * int64_t(rt::dtypeSize(a.dtype));
      return rt::Status::ok();
    }
    rt::extractLocalChunk(a.data, arg.globalShape, a.dtype, arg.sharding,
                          rank, state.chunks[i]);
    state.copied[i] = true;
    out = state.chunks[i].data();
    return rt::Status::ok();
  }
  if (!matchesShape(a.shape, want))
    return rt::Status::invalidArgument(
        who + ": an array of shape " + shapeText(a.shape) +
        ", but the program takes " + shapeText(want) + " on rank " +
        std::to_string(rank) +
        (arg.sharded ? " (its chunk), or the global " +
                           shapeText(arg.globalShape)
                     : std::string()));
  out = a.data;
  return rt::Status::ok();
}

rt::Status bindRank(const Inputs &in, const rt::Plan &plan,
                    rt::RankDevice &device, rt::RankBuffers &buffers,
                    RankState &state) {
  const size_t numArgs = in.program->args.size();
  state.chunks.assign(numArgs, {});
  state.copied.assign(numArgs, false);
  state.addresses.assign(numArgs, 0);
  const bool host = device.kind() == rt::DeviceKind::Host;
  state.allocator = &device.allocator();
  buffers.args.assign(numArgs, nullptr);
  for (size_t i = 0; i < numArgs; ++i) {
    const void *p = nullptr;
    SHARDLIN_RETURN_IF_ERROR(bindArgument(in, plan, i, state, p));
    state.copied[i] = state.copied[i] || !in.copies[i].empty();
    state.addresses[i] = reinterpret_cast<uintptr_t>(p);
    if (host) {
      buffers.args[i] = p;
      continue;
    }
    const size_t bytes = size_t(elementsOf(plan.argShape(i))) *
                         rt::dtypeSize(plan.argType(i));
    void *d = nullptr;
    SHARDLIN_RETURN_IF_ERROR(device.allocator().allocate(bytes, &d));
    state.deviceBuffers.push_back(d);
    SHARDLIN_RETURN_IF_ERROR(device.copyFromHost(d, p, bytes));
    buffers.args[i] = d;
  }
  const size_t numResults = in.program->results.size();
  state.results.assign(numResults, nullptr);
  state.resultShapes.assign(numResults, {});
  buffers.results.assign(numResults, nullptr);
  for (size_t i = 0; i < numResults; ++i) {
    const std::vector<int64_t> &shape = plan.resultShape(i);
    if (rt::hasDynamicDim(shape))
      continue; // compiled code's own memory (RankBuffers::resultShapes)
    const size_t bytes =
        size_t(elementsOf(shape)) * rt::dtypeSize(plan.resultType(i));
    state.results[i] = std::make_shared<OwnedBuffer>(bytes);
    state.resultShapes[i] = shape;
    if (host) {
      buffers.results[i] = state.results[i]->data;
      continue;
    }
    void *d = nullptr;
    SHARDLIN_RETURN_IF_ERROR(device.allocator().allocate(bytes, &d));
    state.deviceBuffers.push_back(d);
    buffers.results[i] = d;
  }
  return rt::Status::ok();
}

/// After a rank's run: its results in host memory (from the device, or from
/// compiled code's own memory for a shape its run decided).
rt::Status finishRank(const rt::Plan &plan, rt::RankDevice &device,
                      const rt::RankBuffers &buffers, RankState &state) {
  const bool host = device.kind() == rt::DeviceKind::Host;
  for (size_t i = 0; i < state.results.size(); ++i) {
    if (!state.results[i]) {
      const std::vector<int64_t> &shape = buffers.resultShapes.at(i);
      const size_t bytes =
          size_t(elementsOf(shape)) * rt::dtypeSize(plan.resultType(i));
      state.results[i] = std::make_shared<OwnedBuffer>(bytes);
      state.resultShapes[i] = shape;
      if (host && bytes > 0)
        std::memcpy(state.results[i]->data, buffers.results[i], bytes);
      else if (!host)
        SHARDLIN_RETURN_IF_ERROR(device.copyToHost(
            state.results[i]->data, buffers.results[i], bytes));
      continue;
    }
    if (!host)
      SHARDLIN_RETURN_IF_ERROR(device.copyToHost(state.results[i]->data,
                                                 buffers.results[i],
                                                 state.results[i]->bytes));
  }
  return rt::Status::ok();
}

/// Result i's global tensor from every rank's chunk (`chunks[r]`, of shape
/// `shapes[r]`).
ResultArray assembleSharded(const rt::ResultLayout &layout, rt::DType dtype,
                            const std::vector<const void *> &chunks,
                            const std::vector<std::vector<int64_t>> &shapes) {
  ResultArray out;
  out.dtype = dtype;
  out.shape = layout.globalShape;
  const size_t es = rt::dtypeSize(dtype);
  out.buffer = std::make_shared<OwnedBuffer>(size_t(elementsOf(out.shape)) * es);
  const int64_t dim = layout.sharding.dim;
  const rt::ChunkLayout chunkLayout(out.shape[dim], layout.sharding);
  for (size_t r = 0; r < chunks.size(); ++r)
    insertChunk(out.buffer->data, out.shape, chunks[r], shapes[r], dim,
                chunkLayout.ofRank(int64_t(r)).offset, es);
  return out;
}

bool isSharded(const rt::Program &program, size_t i) {
  return i < program.resultLayouts.size() && program.resultLayouts[i].sharded;
}

/// MPI: every process gathers the other ranks' chunks of each sharded
/// result (one allGatherV each, on the run's host communicator) and
/// assembles them; a plain result is this rank's.
rt::Status gatherAssembled(const rt::Program &program, const rt::Plan &plan,
                           rt::Communicator &agree, RankState &state) {
  const int w = agree.worldSize();
  for (size_t i = 0; i < state.results.size(); ++i) {
    const rt::DType dtype = plan.resultType(i);
    if (!isSharded(program, i)) {
      state.assembled.push_back(
          {state.results[i], state.resultShapes[i], dtype});
      continue;
    }
    const rt::ResultLayout &layout = program.resultLayouts[i];
    const rt::ChunkLayout chunks(layout.globalShape[layout.sharding.dim],
                                 layout.sharding);
    std::vector<int64_t> counts(w), displs(w);
    std::vector<std::vector<int64_t>> shapes(w, layout.globalShape);
    int64_t total = 0;
    for (int r = 0; r < w; ++r) {
      shapes[r][layout.sharding.dim] = chunks.ofRank(r).size;
      counts[r] = elementsOf(shapes[r]);
      displs[r] = total;
      total += counts[r];
    }
    const size_t es = rt::dtypeSize(dtype);
    std::vector<uint8_t> all(size_t(total) * es);
    SHARDLIN_RETURN_IF_ERROR(agree.allGatherV(state.results[i]->data,
                                              counts[agree.rank()], all.data(),
                                              counts, displs, dtype));
    std::vector<const void *> parts(w);
    for (int r = 0; r < w; ++r)
      parts[r] = all.data() + displs[r] * int64_t(es);
    state.assembled.push_back(assembleSharded(layout, dtype, parts, shapes));
  }
  return rt::Status::ok();
}

std::unique_ptr<rt::MpiSession> &mpiSession() {
  static std::unique_ptr<rt::MpiSession> session;
  return session;
}

/// W for this run, and how many rank states this process needs.
rt::Status resolveRanks(const Compiled &compiled, const RunRequest &request,
                        bool mpi, int &worldSize) {
  if (!mpi)
    return rt::resolveWorldSize(compiled.program, request.worldSize, 0,
                                worldSize);
  std::unique_ptr<rt::MpiSession> &session = mpiSession();
  if (!session)
    SHARDLIN_RETURN_IF_ERROR(rt::MpiSession::create(nullptr, nullptr, session));
  return rt::resolveWorldSize(compiled.program, request.worldSize,
                              session->worldSize(), worldSize);
}

/// The request's arrays against the program, before any rank starts.
rt::Status prepareInputs(const Compiled &compiled, const RunRequest &request,
                         int worldSize, Inputs &in) {
  const rt::Program &program = compiled.program;
  if (request.args.size() != program.args.size())
    return rt::Status::invalidArgument(
        "'" + program.name + "' takes " + std::to_string(program.args.size()) +
        " arguments, got " + std::to_string(request.args.size()));
  in.program = &program;
  in.arrays.resize(program.args.size());
  in.copies.resize(program.args.size());
  in.perRank.resize(program.args.size());
  for (size_t i = 0; i < program.args.size(); ++i) {
    const ArgInput &arg = request.args[i];
    if (arg.perRank && int(arg.arrays.size()) != worldSize)
      return rt::Status::invalidArgument(
          rt::describeArgument(program, i) + ": a list of " +
          std::to_string(arg.arrays.size()) + " per-rank arrays for " +
          std::to_string(worldSize) + " ranks");
    in.perRank[i] = arg.perRank;
    in.arrays[i] = arg.arrays;
    for (HostArray &a : in.arrays[i]) {
      if (a.contiguous())
        continue;
      in.copies[i].push_back(packed(a));
      a.data = in.copies[i].back().data();
    }
  }
  return rt::Status::ok();
}

} // namespace

void runCompiled(const Compiled &compiled, const RunRequest &request,
                 RunOutcome &outcome) {
  const rt::Program &program = compiled.program;
  const rt::BackendInfo *backend = rt::findBackend(request.backend);
  const bool mpi = backend && backend->needsMpiSession &&
                   backend->needsMpiSession();
  if (!compiled.gridName.empty()) {
    outcome.status = rt::Status::unavailable(
        compiled.gridName + ": the Python package runs one replica; run a "
        "data-parallel grid with shardlin-run --grid (docs/python.md)");
    return;
  }
  int w = 0;
  if (backend)
    outcome.status = resolveRanks(compiled, request, mpi, w);
  Inputs in;
  if (outcome.status.isOk() && backend)
    outcome.status = prepareInputs(compiled, request, w, in);
  if (!outcome.status.isOk())
    return;
  std::vector<RankState> states(size_t(std::max(w, 1)));

  rt::RunOptions options;
  options.backend = request.backend;
  options.worldSize = mpi ? 0 : w;
  options.device = request.device;
  options.comm.timeoutSeconds = request.timeoutSeconds;
  options.checkReplicated = request.checkReplicated;
  options.blasThreads = request.blasThreads > 0
                            ? request.blasThreads
                            : rt::defaultBlasThreads(options, program);
  options.wrapCommunicator = [](std::unique_ptr<rt::Communicator> inner) {
    return std::unique_ptr<rt::Communicator>(
        std::make_unique<InterruptibleCommunicator>(std::move(inner)));
  };
  rt::RankCallbacks callbacks;
  callbacks.executor = compiled.executors;
  bool dynamic = false;
  for (const rt::Argument &a : program.args)
    dynamic = dynamic || (!a.sharded && rt::hasDynamicDim(a.type.shape));
  if (dynamic)
    callbacks.argShapes = [&](int rank,
                              std::vector<std::vector<int64_t>> &shapes,
                              std::vector<std::string> &) {
      shapes.resize(program.args.size());
      for (size_t i = 0; i < program.args.size(); ++i)
        if (!program.args[i].sharded)
          shapes[i] = arrayOf(in, i, rank).shape;
      return rt::Status::ok();
    };
  callbacks.bind = [&](const rt::Plan &plan, rt::RankDevice &device,
                       rt::RankBuffers &buffers) {
    return bindRank(in, plan, device, buffers, states[plan.rank()]);
  };
  callbacks.finish = [&](const rt::Plan &plan, rt::RankDevice &device,
                         const rt::RankBuffers &buffers,
                         rt::Communicator &agree) {
    RankState &state = states[plan.rank()];
    SHARDLIN_RETURN_IF_ERROR(finishRank(plan, device, buffers, state));
    if (mpi && request.assemble)
      return gatherAssembled(program, plan, agree, state);
    return rt::Status::ok();
  };
  callbacks.release = [&](int rank) {
    RankState &state = states[rank];
    for (void *d : state.deviceBuffers)
      state.allocator->deallocate(d);
    state.deviceBuffers.clear();
  };
  std::vector<rt::RankResult> ranks;
  {
    InterruptScope scope;
    outcome.status =
        compiled.shared
            ? rt::runProgram(*compiled.shared, options, callbacks, &ranks)
            : rt::runProgram(program, options, callbacks, &ranks);
    outcome.interrupted = interruptRequested.load();
  }
  if (!outcome.status.isOk())
    return;
  for (const rt::RankResult &r : ranks) {
    RankState &state = states[r.rank];
    outcome.ranks.push_back(r.rank);
    std::vector<ResultArray> results;
    for (size_t i = 0; i < state.results.size(); ++i)
      results.push_back({state.results[i], state.resultShapes[i],
                         program.values[program.results[i]].dtype});
    outcome.results.push_back(std::move(results));
    outcome.bind.addresses.push_back(state.addresses);
    outcome.bind.copied.push_back(state.copied);
  }
  if (!request.assemble)
    return;
  if (mpi) {
    outcome.assembled = states[outcome.ranks.front()].assembled;
    return;
  }
  for (size_t i = 0; i < program.results.size(); ++i) {
    if (!isSharded(program, i)) {
      outcome.assembled.push_back(outcome.results.front()[i]);
      continue;
    }
    std::vector<const void *> parts;
    std::vector<std::vector<int64_t>> shapes;
    for (const std::vector<ResultArray> &rank : outcome.results) {
      parts.push_back(rank[i].buffer->data);
      shapes.push_back(rank[i].shape);
    }
    outcome.assembled.push_back(assembleSharded(
        program.resultLayouts[i], outcome.results.front()[i].dtype, parts,
        shapes));
  }
}

void finalizeMpi() { mpiSession().reset(); }

} // namespace shardlin::python
