//===- GradGrid.cpp - Backward functions on a DP x TP grid ----------------===//
//
// splitGrid, runBackwardOnGrid and gridReference (GradTesting.h): the
// world split into replicas of the program's tensor-parallel group, each
// running the backward on its own data, and the parameters' gradients
// averaged across the replicas (docs/training.md, "Grids").
//
//===----------------------------------------------------------------------===//

#include "GradTesting.h"

#include "shardlin/runtime/backends/Host.h"
#include "shardlin/runtime/base/DType.h"

namespace shardlin::testkit {

rt::Status splitGrid(rt::Communicator &world, int tensorParallel,
                     GridRank &out) {
  const int w = world.worldSize(), g = world.rank();
  if (tensorParallel < 1 || w % tensorParallel != 0)
    return rt::Status::invalidArgument(
        "a grid of " + std::to_string(w) + " ranks has no tensor-parallel "
        "groups of " + std::to_string(tensorParallel));
  out = GridRank();
  out.replica = g / tensorParallel;
  out.rank = g % tensorParallel;
  out.dataParallel = w / tensorParallel;
  // Ordered by world rank in both: the group's rank t is world rank
  // replica * TP + t, the replicas' rank d is replica d.
  SHARDLIN_RETURN_IF_ERROR(
      world.split(out.replica, g, out.group).withContext("the replica's group"));
  return world.split(out.rank, g, out.replicas)
      .withContext("the replicas of a chunk");
}

rt::Status runBackwardOnGrid(const GradCase &c, const GradData &data,
                             const BackwardPrograms &programs, GridRank &grid,
                             std::vector<RankTensor> &grads) {
  const std::vector<GradArgument> arguments = gradArguments(c);
  const int tp = grid.group->worldSize(), me = grid.rank;
  auto forwardArgs = [&](int rank) {
    std::vector<RankTensor> args;
    for (size_t i = 0; i < arguments.size(); ++i)
      args.push_back(argumentOf(c, data, i, rank));
    return args;
  };
  std::unique_ptr<rt::RankDevice> device = rt::createHostDevice();
  auto run = [&](const rt::Program &program,
                 std::function<std::vector<RankTensor>(int)> args,
                 std::vector<std::vector<RankTensor>> &results) {
    TensorCallbacks io(tp, std::move(args), results);
    rt::SharedProgram shared(program);
    return rt::runRank(shared, *grid.group, *device, io.callbacks()).status;
  };
  std::vector<std::vector<RankTensor>> saved, results;
  if (programs.numSaved > 0)
    SHARDLIN_RETURN_IF_ERROR(run(programs.saving, forwardArgs, saved)
                                 .withContext("@main_forward_saving"));
  SHARDLIN_RETURN_IF_ERROR(
      run(programs.backward,
          [&](int rank) {
            std::vector<RankTensor> args = forwardArgs(rank);
            args.push_back({data.dy[rank].bytes, c.outputShapeOf(rank)});
            if (programs.numSaved > 0) // after @main's one result
              args.insert(args.end(), saved[rank].begin() + 1,
                          saved[rank].end());
            return args;
          },
          results)
          .withContext("@main_backward"));
  grads = std::move(results[me]);
  if (grads.size() != arguments.size())
    return rt::Status::internal("@main_backward returned " +
                                std::to_string(grads.size()) +
                                " gradients for " +
                                std::to_string(arguments.size()) +
                                " arguments");
  // The data-parallel average of every parameter's gradient.
  const rt::DType dtype = c.dtype();
  for (size_t i = 0; i < arguments.size(); ++i) {
    const GradArgument::Kind kind = arguments[i].kind;
    if (kind != GradArgument::Kind::Sharded &&
        kind != GradArgument::Kind::Replicated)
      continue;
    RankTensor &g = grads[i];
    const int64_t n = int64_t(g.bytes.size() / rt::dtypeSize(dtype));
    SHARDLIN_RETURN_IF_ERROR(
        grid.replicas
            ->allReduce(g.bytes.data(), g.bytes.data(), n, dtype)
            .withContext("averaging gradient " + std::to_string(i)));
    std::vector<double> v(static_cast<size_t>(n));
    rt::convertToF64(dtype, g.bytes.data(), v.data(), v.size());
    for (double &e : v)
      e /= grid.dataParallel;
    rt::convertFromF64(dtype, v.data(), g.bytes.data(), v.size());
  }
  return rt::Status::ok();
}

GradReference gridReference(const GradCase &c,
                            const std::vector<GradData> &data, int replica) {
  const std::vector<GradArgument> arguments = gradArguments(c);
  GradReference mine = gradReference(c, data[size_t(replica)]);
  for (size_t i = 0; i < arguments.size(); ++i) {
    const GradArgument::Kind kind = arguments[i].kind;
    if (kind != GradArgument::Kind::Sharded &&
        kind != GradArgument::Kind::Replicated)
      continue;
    GradTensor &avg = mine[i][0];
    std::fill(avg.value.begin(), avg.value.end(), 0.0);
    std::fill(avg.scale.begin(), avg.scale.end(), 0.0);
    for (const GradData &d : data) {
      const GradTensor one = gradReference(c, d)[i][0];
      for (size_t e = 0; e < avg.value.size(); ++e) {
        avg.value[e] += one.value[e] / double(data.size());
        avg.scale[e] += one.scale[e] / double(data.size());
      }
    }
  }
  return mine;
}

} // namespace shardlin::testkit
