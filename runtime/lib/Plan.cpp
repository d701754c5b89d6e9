//===- Plan.cpp - Resolving and running a program for one rank ------------===//
//
// Values are stored either in an argument, in a buffer the plan owns, or as a
// view (byte offset) into another value's storage: local_shard and reshapes
// are views, as is a local_chunk along the outermost non-unit dim. A program
// result whose storage the plan owns is written straight into the caller's
// output buffer, so the common case copies nothing at the end.
//
//===----------------------------------------------------------------------===//

#include "PlanState.h"

#include <numeric>
#include <string>

namespace shardlin::rt {

Status Plan::Impl::resolve(int rank, Allocator &allocator) {
  const size_t numValues = program.values.size();
  shapes.assign(numValues, {});
  root.resize(numValues);
  std::iota(root.begin(), root.end(), 0);
  byteOffset.assign(numValues, 0);
  buffers.resize(numValues);
  boundResult.assign(numValues, -1);
  isArgRoot.assign(numValues, false);
  rootPtr.assign(numValues, nullptr);
  steps.resize(program.instrs.size());

  for (size_t i = 0; i < program.args.size(); ++i) {
    const Argument &a = program.args[i];
    isArgRoot[i] = true;
    if (!a.sharded) {
      shapes[i] = a.type.shape;
      for (int64_t d : shapes[i])
        if (d == kDynamic)
          return Status::invalidArgument("argument " + std::to_string(i) +
                               " has a dynamic shape, which is not supported");
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
    ChunkLayout layout(a.globalShape[a.sharding.dim], a.sharding.placements);
    shapes[i][a.sharding.dim] = layout.ofRank(rank).size;
  }
  // Sizes are products of dims: every argument's and (below) every result's
  // shape is checked to fit before anything multiplies its dims.
  for (size_t i = 0; i < program.args.size(); ++i) {
    int64_t count = 0;
    Status sized = checkedNumElements(shapes[i], count,
                                      dtypeSize(program.values[i].dtype));
    if (!sized)
      return sized.withContext("argument " + std::to_string(i));
  }

  // Uses per storage root: a bias_add may update its input in place only if
  // nothing else reads that storage.
  uses.assign(numValues, 0);
  for (const Instr &in : program.instrs)
    for (int v : in.operands)
      ++uses[v];
  for (int v : program.results)
    ++uses[v];

  for (size_t s = 0; s < program.instrs.size(); ++s) {
    const Instr &in = program.instrs[s];
    const int r = in.result;
    const std::vector<int64_t> &outType = program.values[r].shape;
    OpResolveContext ctx{*this, in, steps[s], s, rank, {}};
    SHARDLIN_RETURN_IF_ERROR(opInfo(in.op).resolve(ctx));
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
    Status sized = checkedNumElements(out, count, dtypeSize(program.values[r].dtype));
    if (!sized)
      return ctx.error(sized.message());
    shapes[r] = out;
  }

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
  }
  return Status::ok();
}

Status Plan::Impl::execute(Communicator &comm, GemmBackend &gemm,
                           LocalOps &ops) {
  for (size_t s = 0; s < program.instrs.size(); ++s) {
    const Instr &in = program.instrs[s];
    OpExecuteContext ctx{*this, in, steps[s], comm, gemm, ops};
    Status status = opInfo(in.op).execute(ctx);
    if (!status)
      return status.withContext(
          (in.location.empty() ? std::string() : in.location + ": ") +
          "shardlin." + opCodeName(in.op) + " on rank " +
          std::to_string(comm.rank()));
  }
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// Plan
//===----------------------------------------------------------------------===//

Plan::~Plan() = default;

Status Plan::build(const Program &program, int rank, int worldSize,
                   Allocator &allocator, std::unique_ptr<Plan> &out,
                   const PlanOptions &options) {
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
  std::unique_ptr<Plan> plan(new Plan());
  plan->rank_ = rank;
  plan->impl_ = std::make_unique<Impl>();
  plan->impl_->program = program;
  plan->impl_->worldSize = worldSize;
  plan->impl_->options = options;
  SHARDLIN_RETURN_IF_ERROR(plan->impl_->resolve(rank, allocator));
  out = std::move(plan);
  return Status::ok();
}

size_t Plan::numArgs() const { return impl_->program.args.size(); }
size_t Plan::numResults() const { return impl_->program.results.size(); }
const std::vector<int64_t> &Plan::argShape(size_t i) const {
  return impl_->shapes[i];
}
const std::vector<int64_t> &Plan::resultShape(size_t i) const {
  return impl_->shapes[impl_->program.results[i]];
}
DType Plan::argType(size_t i) const { return impl_->program.values[i].dtype; }
DType Plan::resultType(size_t i) const {
  return impl_->program.values[impl_->program.results[i]].dtype;
}

Status Plan::run(Communicator &comm, GemmBackend &gemm,
                 const std::vector<const void *> &args,
                 const std::vector<void *> &results) {
  if (!impl_->hostOps)
    impl_->hostOps = createHostLocalOps();
  return run(comm, gemm, *impl_->hostOps, args, results);
}

Status Plan::run(Communicator &comm, GemmBackend &gemm, LocalOps &ops,
                 const std::vector<const void *> &args,
                 const std::vector<void *> &results) {
  Impl &im = *impl_;
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
  SHARDLIN_RETURN_IF_ERROR(im.execute(comm, gemm, ops));
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
