//===- Grid.cpp - Data-parallel replicas of a program ---------------------===//
//
// RunOptions::replicas (Execute.h; docs/training.md, "Grids"): how many
// ranks a launcher starts for a grid, how each splits the world into its
// replica's group and the group across the replicas, and the average of a
// result over the replicas.
//
//===----------------------------------------------------------------------===//

#include "shardlin/runtime/exec/Execute.h"

#include "shardlin/runtime/base/DType.h"

namespace shardlin::rt {

const RankCallbacks &callbacksOfReplica(const RankCallbacks &callbacks,
                                        int replica) {
  if (callbacks.perReplica && replica >= 0 &&
      size_t(replica) < callbacks.perReplica->size())
    return (*callbacks.perReplica)[size_t(replica)];
  return callbacks;
}

RankResult runWorldRank(const SharedProgram &program, int replicas,
                        Communicator &world, RankDevice &device,
                        const RankCallbacks &callbacks, Communicator *agree) {
  if (replicas <= 1)
    return runRank(program, world, device, callbacksOfReplica(callbacks, 0),
                   agree);
  RankResult result;
  result.rank = world.rank();
  const int w = world.worldSize() / replicas;
  const int replica = world.rank() / w, rank = world.rank() % w;
  const std::string at = "rank " + std::to_string(rank) + " of replica " +
                         std::to_string(replica);
  if (w * replicas != world.worldSize()) {
    result.status = Status::invalidArgument(
        "a grid of " + std::to_string(replicas) + " replicas cannot split " +
        std::to_string(world.worldSize()) + " ranks evenly");
    return result;
  }
  // The program's group (ordered by world rank, so rank r of the replica
  // is world rank replica * W + r), then the ranks across the replicas,
  // then the agreements' twin of the first.
  std::unique_ptr<Communicator> group, across, agreeGroup;
  Status split = world.split(replica, world.rank(), group);
  if (split)
    split = world.split(rank, world.rank(), across);
  if (split && agree)
    split = agree->split(replica, agree->rank(), agreeGroup);
  if (!split) {
    result.status = split.withContext(at + " (grid rank " +
                                      std::to_string(world.rank()) +
                                      "): splitting the world");
    return result;
  }
  GridPlace place;
  place.replicas = across.get();
  place.world = agree ? agree : &world;
  result = runRank(program, *group, device,
                   callbacksOfReplica(callbacks, replica), agreeGroup.get(),
                   &place);
  result.rank = world.rank();
  if (!result.status)
    result.status = result.status.withContext("replica " +
                                              std::to_string(replica));
  return result;
}

Status resolveLaunchedRanks(const Program &program, const RunOptions &options,
                            int launched, int &ranks) {
  const int dp = options.replicas;
  if (dp == 1)
    return resolveWorldSize(program, options.worldSize, launched, ranks);
  if (launched > 0 && options.worldSize > 0 &&
      launched != dp * options.worldSize)
    return Status::invalidArgument(
               "a grid of " + std::to_string(dp) + " replicas of " +
               std::to_string(options.worldSize) + " ranks needs " +
               std::to_string(dp * options.worldSize) +
               " MPI processes, not " + std::to_string(launched))
        .withSubject("replicas");
  if (launched > 0 && launched % dp != 0)
    return Status::invalidArgument(
               "a grid of " + std::to_string(dp) + " replicas needs a "
               "multiple of " + std::to_string(dp) + " MPI processes, not " +
               std::to_string(launched))
        .withSubject("replicas");
  int w = 0;
  SHARDLIN_RETURN_IF_ERROR(
      resolveWorldSize(program, options.worldSize, launched / dp, w)
          .withContext("each of the grid's " + std::to_string(dp) +
                       " replicas"));
  if (int64_t(w) * dp > kMaxWorldSize)
    return Status::invalidArgument(
               "a grid of " + std::to_string(dp) + " replicas of " +
               std::to_string(w) + " ranks has more than " +
               std::to_string(kMaxWorldSize) + " ranks")
        .withSubject("replicas");
  ranks = w * dp;
  return Status::ok();
}

Status averageOverReplicas(RankRun &run, size_t i) {
  Communicator *replicas = run.replicas();
  const Plan &plan = run.plan();
  const RankBuffers &buffers = run.buffers();
  if (i >= plan.numResults() || i >= buffers.results.size())
    return Status::invalidArgument(
        "result " + std::to_string(i) + " to average: the rank has " +
        std::to_string(plan.numResults()) + " results");
  if (!replicas)
    return Status::ok(); // not on a grid: one replica, its own average
  std::vector<int64_t> shape = plan.resultShape(i);
  if (i < buffers.resultShapes.size() && !buffers.resultShapes[i].empty())
    shape = buffers.resultShapes[i];
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  const DType dtype = plan.resultType(i);
  void *data = buffers.results[i];
  SHARDLIN_RETURN_IF_ERROR(replicas->allReduce(data, data, n, dtype));
  if (n == 0)
    return Status::ok();
  // The quotient in float64, rounded once to the result's type; on a GPU
  // through a host copy (one pass over a gradient after its all-reduce).
  RankDevice &device = run.device();
  const bool host = device.kind() == DeviceKind::Host;
  const size_t bytes = size_t(n) * dtypeSize(dtype);
  std::vector<unsigned char> staged(host ? 0 : bytes);
  void *values = host ? data : staged.data();
  if (!host)
    SHARDLIN_RETURN_IF_ERROR(device.copyToHost(values, data, bytes));
  std::vector<double> wide(static_cast<size_t>(n));
  convertToF64(dtype, values, wide.data(), wide.size());
  for (double &v : wide)
    v /= replicas->worldSize();
  convertFromF64(dtype, wide.data(), values, wide.size());
  if (!host)
    SHARDLIN_RETURN_IF_ERROR(device.copyFromHost(data, values, bytes));
  return Status::ok();
}

} // namespace shardlin::rt
