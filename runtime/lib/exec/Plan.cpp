//===- Plan.cpp - Resolving and running a program for one rank ------------===//
//
// Values are stored either in an argument, in a buffer the plan owns, or as a
// view (byte offset) into another value's storage: local_shard and reshapes
// are views, as is a local_chunk along the outermost non-unit dim. A program
// result whose storage the plan owns is written straight into the caller's
// output buffer, so the common case copies nothing at the end.
//
//===----------------------------------------------------------------------===//

#include "exec/OpKernels.h"

#include <numeric>
#include <string>

namespace shardlin::rt {

std::vector<DynamicDim> dynamicArgDims(const Program &program) {
  std::vector<DynamicDim> dims;
  for (size_t i = 0; i < program.args.size(); ++i) {
    const Argument &a = program.args[i];
    if (a.sharded)
      continue;
    for (size_t d = 0; d < a.type.shape.size(); ++d)
      if (a.type.shape[d] == kDynamic)
        dims.push_back({i, d});
  }
  return dims;
}

namespace {

/// Whether a collective assembles a dim of run-time sizes that no dynamic
/// argument dim gives: the rows of a sharded argument whose chunks differ
/// (explicit bounds, or the ceil rule's uneven chunks: its local type has
/// `?`), stacked by an all_gather or an all_to_all into a `?` dim. Such a
/// collective reads the other ranks' sizes, as for a dynamic argument dim.
bool stacksUnevenChunks(const Program &program) {
  bool uneven = false;
  for (const Argument &a : program.args)
    uneven |= a.sharded && hasDynamicDim(a.type.shape);
  if (!uneven)
    return false;
  for (const Instr &in : program.instrs) {
    const std::vector<int64_t> &result = program.values[in.result].shape;
    if ((in.op == OpCode::AllGather &&
         result[static_cast<size_t>(in.along.dim)] == kDynamic) ||
        (in.op == OpCode::AllToAll &&
         result[static_cast<size_t>(in.concat.dim)] == kDynamic))
      return true;
  }
  return false;
}

} // namespace

Status dynamicSizesOf(const Program &program,
                      const std::vector<std::vector<int64_t>> &argShapes,
                      std::vector<int64_t> &sizes,
                      const std::vector<std::string> &what) {
  sizes.clear();
  const std::vector<DynamicDim> dims = dynamicArgDims(program);
  for (size_t k = 0; k < dims.size(); ++k) {
    const size_t i = dims[k].arg;
    if (k > 0 && dims[k - 1].arg == i)
      continue; // Its argument was checked with its first dynamic dim.
    const std::vector<int64_t> &type = program.args[i].type.shape;
    const std::string name =
        "argument " + std::to_string(i) +
        (i < what.size() && !what[i].empty() ? " (" + what[i] + ")" : "");
    if (i >= argShapes.size())
      return Status::invalidArgument(name + " has dynamic dims " +
                                     formatShape(type) +
                                     " but no shape was given for it");
    const std::vector<int64_t> &shape = argShapes[i];
    if (shape.size() != type.size())
      return Status::invalidArgument(
          name + ": shape " + formatShape(shape) + " has rank " +
          std::to_string(shape.size()) + " but the entry signature's " +
          formatShape(type) + " has rank " + std::to_string(type.size()));
    for (size_t d = 0; d < type.size(); ++d) {
      if (type[d] != kDynamic && shape[d] != type[d])
        return Status::invalidArgument(
            name + ": shape " + formatShape(shape) +
            " does not match the entry signature's " + formatShape(type) +
            " (dim " + std::to_string(d) + " is " +
            std::to_string(shape[d]) + ", not " + std::to_string(type[d]) +
            ")");
      // The sizes travel between ranks as doubles: keep them exact.
      if (type[d] == kDynamic && (shape[d] < 0 || shape[d] > (int64_t(1) << 53)))
        return Status::invalidArgument(name + ": dim " + std::to_string(d) +
                                       " of shape " + formatShape(shape) +
                                       " is out of range");
    }
  }
  for (const DynamicDim &d : dims)
    sizes.push_back(argShapes[d.arg][d.dim]);
  return Status::ok();
}

Status Plan::Impl::resolveArguments(int rank) {
  const size_t numValues = program.values.size();
  shapes.assign(numValues, {});
  blocks.assign(numValues, {});
  root.resize(numValues);
  std::iota(root.begin(), root.end(), 0);
  byteOffset.assign(numValues, 0);
  buffers.resize(numValues);
  boundResult.assign(numValues, -1);
  isArgRoot.assign(numValues, false);
  rootPtr.assign(numValues, nullptr);
  steps.resize(program.instrs.size());

  size_t nextDynamic = 0;
  for (size_t i = 0; i < program.args.size(); ++i) {
    const Argument &a = program.args[i];
    isArgRoot[i] = true;
    if (!a.sharded) {
      shapes[i] = a.type.shape;
      for (int64_t &d : shapes[i]) {
        if (d != kDynamic)
          continue;
        // Plan::build checked that every rank has one size per dim.
        if (dynamicSizes.empty())
          return Status::invalidArgument(
              "argument " + std::to_string(i) + " has the dynamic shape " +
              formatShape(a.type.shape) +
              ", but the plan was given no sizes for its dynamic dims");
        d = dynamicSizes[rank][nextDynamic++];
      }
      continue;
    }
    if (a.globalShape.size() != a.type.shape.size())
      return Status::invalidArgument("argument " + std::to_string(i) +
                           ": global and local ranks differ");
    int64_t count = 0;
    Status sized = checkedNumElements(a.globalShape, count,
                                      dtypeSize(a.type.dtype));
    if (!sized)
      return sized.withContext("argument " + std::to_string(i));
    shapes[i] = a.globalShape;
    // Program::validate checked the bounds against the global shape.
    ChunkLayout layout(a.globalShape[a.sharding.dim], a.sharding);
    shapes[i][a.sharding.dim] = layout.ofRank(rank).size;
  }
  // Sizes are products of dims: every argument's and (below) every result's
  // shape is checked to fit before anything multiplies its dims.
  for (size_t i = 0; i < program.args.size(); ++i) {
    int64_t count = 0;
    Status sized = checkedNumElements(shapes[i], count,
                                      dtypeSize(program.values[i].dtype));
    if (!sized)
      return sized.withContext("argument " + std::to_string(i) +
                               (dynamicSizes.empty()
                                    ? std::string()
                                    : " on rank " + std::to_string(rank)));
  }

  // Uses per storage root: a bias_add may update its input in place only if
  // nothing else reads that storage.
  uses.assign(numValues, 0);
  for (const Instr &in : program.instrs)
    for (int v : in.operands)
      ++uses[v];
  for (int v : program.results)
    ++uses[v];
  return Status::ok();
}

Status Plan::Impl::resolveInstr(size_t s, int rank,
                                const std::vector<Impl *> *peers) {
  const Instr &in = program.instrs[s];
  const int r = in.result;
  const std::vector<int64_t> &outType = program.values[r].shape;
  const OpKernel *kernel = findOpKernel(in.op);
  if (!kernel)
    return Status::internal(std::string("shardlin.") + opCodeName(in.op) +
                            " has no kernel in this runtime");
  OpResolveContext ctx{*this, in, steps[s], s, rank, peers, {}, {}};
  SHARDLIN_RETURN_IF_ERROR(kernel->resolve(ctx));
  const std::vector<int64_t> &out = ctx.result;

  // The rank-resolved shape must agree with every static dim of the type.
  if (out.size() != outType.size())
    return ctx.error("result rank " + std::to_string(out.size()) +
                     " differs from its type's " +
                     std::to_string(outType.size()));
  for (size_t d = 0; d < out.size(); ++d)
    if (outType[d] != kDynamic && outType[d] != out[d])
      return ctx.error("on rank " + std::to_string(rank) + " the result is " +
                       formatShape(out) + " but its type says " +
                       formatShape(outType));
  int64_t count = 0;
  Status sized =
      checkedNumElements(out, count, dtypeSize(program.values[r].dtype));
  if (!sized)
    return ctx.error(sized.message());
  shapes[r] = out;
  blocks[r] = std::move(ctx.resultBlocks);
  return Status::ok();
}

Status Plan::Impl::allocate(Allocator &allocator) {
  // A compiled program's results are written by its executor: no storage.
  if (!program.compiled.empty())
    return Status::ok();
  const size_t numValues = program.values.size();
  // Storage: every root that is not an argument gets a buffer, unless it is
  // a program result, which is written into the caller's output directly.
  for (size_t i = 0; i < program.results.size(); ++i) {
    int v = program.results[i];
    int rv = root[v];
    if (isArgRoot[rv] || byteOffset[v] != 0 || boundResult[rv] != -1)
      continue;
    if (static_cast<int64_t>(numElements(v)) != numElements(rv))
      continue;
    boundResult[rv] = static_cast<int>(i);
  }
  for (size_t v = program.args.size(); v < numValues; ++v) {
    if (root[v] != static_cast<int>(v) || boundResult[v] != -1)
      continue;
    SHARDLIN_RETURN_IF_ERROR(Buffer::allocate(
        allocator, numElements(v) * eltSize(v), buffers[v]));
  }
  for (size_t s = 0; s < program.instrs.size(); ++s) {
    const Instr &in = program.instrs[s];
    PlanStep &st = steps[s];
    size_t elt = eltSize(in.result);
    if (st.send.staged)
      SHARDLIN_RETURN_IF_ERROR(Buffer::allocate(
          allocator, st.send.totalCount() * elt, st.sendStaging));
    if (st.recv.staged)
      SHARDLIN_RETURN_IF_ERROR(Buffer::allocate(
          allocator, st.recv.totalCount() * elt, st.recvStaging));
    if (st.scratchBytes > 0)
      SHARDLIN_RETURN_IF_ERROR(
          Buffer::allocate(allocator, size_t(st.scratchBytes), st.scratch));
  }
  return Status::ok();
}

Status Plan::Impl::executeInstr(size_t s, Communicator &comm,
                                GemmBackend &gemm, LocalOps &ops) {
  const Instr &in = program.instrs[s];
  OpExecuteContext ctx{*this, in, steps[s], comm, gemm, ops};
  // resolveInstr found the kernel.
  Status status = findOpKernel(in.op)->execute(ctx);
  if (!status)
    return status.withContext(
        (in.location.empty() ? std::string() : in.location + ": ") +
        "shardlin." + opCodeName(in.op) + " on rank " +
        std::to_string(comm.rank()));
  return status;
}

Status Plan::Impl::execute(Communicator &comm, GemmBackend &gemm,
                           LocalOps &ops, CommLane *lane) {
  std::unique_ptr<CommLane> inlineLane;
  for (size_t s = 0; s < program.instrs.size(); ++s) {
    const int p = pipelineOf.empty() ? -1 : pipelineOf[s];
    if (p < 0) {
      SHARDLIN_RETURN_IF_ERROR(executeInstr(s, comm, gemm, ops));
      continue;
    }
    const Pipeline &pipe = pipelines[size_t(p)];
    if (s != pipe.gather)
      continue; // Ran with its pipeline.
    if (!lane) {
      if (!inlineLane)
        inlineLane = CommLane::create(comm, false);
      lane = inlineLane.get();
    }
    SHARDLIN_RETURN_IF_ERROR(runPipeline(pipe, comm, gemm, ops, *lane));
  }
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// Plan
//===----------------------------------------------------------------------===//

Plan::~Plan() = default;

namespace {
/// The limits of planning a program with dynamic argument dims (Plan::build).
constexpr uint64_t kMaxLockstepValues = uint64_t(1) << 20;
constexpr uint64_t kMaxLockstepWork = uint64_t(1) << 25;
} // namespace

Status Plan::build(const Program &program, int rank, int worldSize,
                   Allocator &allocator, std::unique_ptr<Plan> &out,
                   const DynamicSizes &sizes,
                   const PlanOptions &options) {
  return build(std::make_shared<const Program>(program), rank, worldSize,
               allocator, out, sizes, options);
}

Status Plan::build(std::shared_ptr<const Program> shared, int rank,
                   int worldSize, Allocator &allocator,
                   std::unique_ptr<Plan> &out, const DynamicSizes &sizes,
                   const PlanOptions &options) {
  if (!shared)
    return Status::invalidArgument("Plan::build: no program");
  const Program &program = *shared;
  SHARDLIN_RETURN_IF_ERROR(program.validate());
  if (worldSize < 1)
    return Status::invalidArgument("world size must be >= 1, got " +
                         std::to_string(worldSize));
  if (program.worldSize != 0 && program.worldSize != worldSize)
    return Status::invalidArgument("the program '" + program.name + "' is sharded over " +
                         std::to_string(program.worldSize) +
                         " ranks (its placements) but the world size is " +
                         std::to_string(worldSize));
  if (rank < 0 || rank >= worldSize)
    return Status::invalidArgument("rank " + std::to_string(rank) +
                         " is out of range for world size " +
                         std::to_string(worldSize));
  const size_t numDynamic = dynamicArgDims(program).size();
  if (numDynamic == 0 && !sizes.empty())
    return Status::invalidArgument(
        "the program '" + program.name +
        "' has no dynamic argument dims, but the plan was given sizes");
  if (numDynamic != 0) {
    if (sizes.size() != static_cast<size_t>(worldSize))
      return Status::invalidArgument(
          "the program '" + program.name + "' has " +
          std::to_string(numDynamic) +
          " dynamic argument dim(s): the plan needs the sizes of every "
          "rank's (" +
          std::to_string(worldSize) + "), got " +
          std::to_string(sizes.size()));
    for (size_t p = 0; p < sizes.size(); ++p) {
      if (sizes[p].size() != numDynamic)
        return Status::invalidArgument(
            "rank " + std::to_string(p) + " has " +
            std::to_string(sizes[p].size()) + " dynamic sizes, expected " +
            std::to_string(numDynamic));
      for (int64_t d : sizes[p])
        if (d < 0)
          return Status::invalidArgument("rank " + std::to_string(p) +
                                         " has a negative dynamic size " +
                                         std::to_string(d));
    }
  }
  // Every rank resolves every rank's sizes (in lockstep, below) where they
  // may differ.
  const bool lockstep = numDynamic != 0 || stacksUnevenChunks(program);
  if (lockstep) {
    // Every rank resolves every rank's sizes: W plans' tables, and each
    // collective's tables W times. Bounded, so that a hostile program file
    // cannot make planning allocate or compute without end.
    const uint64_t w = static_cast<uint64_t>(worldSize);
    uint64_t collectives = 0;
    for (const Instr &in : program.instrs)
      collectives += in.op == OpCode::AllGather || in.op == OpCode::AllToAll ||
                     in.op == OpCode::ReduceScatter ||
                     in.op == OpCode::AllReduce;
    if (w * program.values.size() > kMaxLockstepValues ||
        w * w * collectives > kMaxLockstepWork)
      return Status::invalidArgument(
          "the program '" + program.name +
          "' has dynamic argument dims or uneven chunks, so each rank "
          "resolves every rank's sizes: " +
          std::to_string(worldSize) + " ranks x " +
          std::to_string(program.values.size()) + " values and " +
          std::to_string(collectives) +
          " collectives is more than this runtime plans (W x values <= " +
          std::to_string(kMaxLockstepValues) + ", W^2 x collectives <= " +
          std::to_string(kMaxLockstepWork) + ")");
  }
  std::unique_ptr<Plan> plan(new Plan());
  plan->rank_ = rank;
  plan->impl_ = std::make_unique<Impl>(shared);
  Impl &self = *plan->impl_;
  self.worldSize = worldSize;
  self.dynamicSizes = sizes;
  self.options = options;
  SHARDLIN_RETURN_IF_ERROR(self.resolveArguments(rank));
  if (!lockstep) {
    for (size_t s = 0; s < program.instrs.size(); ++s)
      SHARDLIN_RETURN_IF_ERROR(self.resolveInstr(s, rank, nullptr));
  } else {
    // Every rank's sizes, resolved in lockstep: a collective along a
    // dynamic dim reads the other ranks' operand sizes. Every rank computes
    // the same shapes, so a size that fails fails on every rank alike.
    std::vector<std::unique_ptr<Impl>> others(worldSize);
    std::vector<Impl *> all(worldSize);
    for (int p = 0; p < worldSize; ++p) {
      if (p == rank) {
        all[p] = &self;
        continue;
      }
      others[p] = std::make_unique<Impl>(shared);
      others[p]->worldSize = worldSize;
      others[p]->dynamicSizes = sizes;
      others[p]->options = options;
      all[p] = others[p].get();
      SHARDLIN_RETURN_IF_ERROR(all[p]->resolveArguments(p));
    }
    for (size_t s = 0; s < program.instrs.size(); ++s) {
      for (int p = 0; p < worldSize; ++p)
        SHARDLIN_RETURN_IF_ERROR(all[p]->resolveInstr(s, p, &all));
      // Only the shapes and blocks of the other ranks are read later.
      for (int p = 0; p < worldSize; ++p)
        if (p != rank)
          all[p]->steps[s] = PlanStep();
    }
  }
  // A compiled program's results are values of its signature alone:
  // nothing computes them here. A `?` stays: the run decides that size.
  if (!program.compiled.empty())
    for (int v : program.results) {
      self.shapes[v] = program.values[v].shape;
      std::vector<int64_t> known = self.shapes[v];
      for (int64_t &d : known)
        d = d == kDynamic ? 0 : d;
      int64_t count = 0;
      SHARDLIN_RETURN_IF_ERROR(
          checkedNumElements(known, count, dtypeSize(program.values[v].dtype))
              .withContext("result value " + std::to_string(v)));
    }
  self.findPipelines(rank);
  SHARDLIN_RETURN_IF_ERROR(self.allocate(allocator));
  out = std::move(plan);
  return Status::ok();
}

const DynamicSizes &Plan::dynamicSizes() const {
  return impl_->dynamicSizes;
}

size_t Plan::numArgs() const { return impl_->program.args.size(); }
size_t Plan::numResults() const { return impl_->program.results.size(); }
const std::vector<int64_t> &Plan::argShape(size_t i) const {
  return impl_->shapes[i];
}
const std::vector<int64_t> &Plan::resultShape(size_t i) const {
  return impl_->shapes[impl_->program.results[i]];
}
const std::vector<PipelineInfo> &Plan::pipelines() const {
  return impl_->pipelineInfo;
}
bool Plan::pipelinesAny() const { return !impl_->pipelines.empty(); }

DType Plan::argType(size_t i) const { return impl_->program.values[i].dtype; }
DType Plan::resultType(size_t i) const {
  return impl_->program.values[impl_->program.results[i]].dtype;
}

Status Plan::run(Communicator &comm, GemmBackend &gemm, LocalOps &ops,
                 const std::vector<const void *> &args,
                 const std::vector<void *> &results, CommLane *lane) {
  Impl &im = *impl_;
  if (!im.program.compiled.empty())
    return Status::invalidArgument(
        "the program '" + im.program.name + "' is compiled code (" +
        im.program.compiled +
        "), which the plan executor cannot run: it runs through its "
        "executor (RankCallbacks::executor, shardlin-run --jit)");
  if (!(comm.device() == gemm.device()) || !(ops.device() == gemm.device()))
    return Status::invalidArgument("the communicator (" + deviceName(comm.device()) +
                         "), GEMM backend (" + deviceName(gemm.device()) +
                         ") and local ops (" + deviceName(ops.device()) +
                         ") must be on one device");
  if (args.size() != im.program.args.size())
    return Status::invalidArgument("expected " + std::to_string(im.program.args.size()) +
                         " arguments, got " + std::to_string(args.size()));
  if (results.size() != im.program.results.size())
    return Status::invalidArgument("expected " +
                         std::to_string(im.program.results.size()) +
                         " results, got " + std::to_string(results.size()));
  if (comm.rank() != rank_ || comm.worldSize() != im.worldSize)
    return Status::invalidArgument("plan built for rank " + std::to_string(rank_) +
                         " of " + std::to_string(im.worldSize) +
                         " run on rank " + std::to_string(comm.rank()) +
                         " of " + std::to_string(comm.worldSize()));
  for (size_t i = 0; i < args.size(); ++i)
    im.rootPtr[i] = const_cast<void *>(args[i]);
  for (size_t v = im.program.args.size(); v < im.rootPtr.size(); ++v)
    im.rootPtr[v] = im.boundResult[v] >= 0 ? results[im.boundResult[v]]
                                           : im.buffers[v].data();
  SHARDLIN_RETURN_IF_ERROR(im.execute(comm, gemm, ops, lane));
  for (size_t i = 0; i < results.size(); ++i) {
    int v = im.program.results[i];
    if (im.boundResult[im.root[v]] == static_cast<int>(i))
      continue;
    size_t bytes = im.numElements(v) * im.eltSize(v);
    SHARDLIN_RETURN_IF_ERROR(
        ops.copyRows(im.ptr(v), bytes, results[i], bytes, 1, bytes));
  }
  return Status::ok();
}

} // namespace shardlin::rt
