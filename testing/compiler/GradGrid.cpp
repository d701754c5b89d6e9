//===- GradGrid.cpp - Backward functions on a DP x TP grid ----------------===//
//
// runGridWithTensors, runBackwardOnGrid and gridReference (GradTesting.h):
// the runtime's grids (rt::RunOptions::replicas), each replica running the
// backward on its own data, and the parameters' gradients averaged across
// the replicas (docs/training.md, "Grids").
//
//===----------------------------------------------------------------------===//

#include "GradTesting.h"

#include "shardlin/runtime/backends/Registry.h"

namespace shardlin::testkit {

rt::Status runGridWithTensors(
    const rt::Program &program, const rt::RunOptions &options,
    const std::function<std::vector<RankTensor>(int replica, int rank)> &args,
    std::vector<std::vector<std::vector<RankTensor>>> &results,
    const std::vector<size_t> &averaged,
    const rt::RankCallbacks::MakeExecutor &executor) {
  const int dp = std::max(options.replicas, 1);
  const int w = options.worldSize > 0 ? options.worldSize
                                      : static_cast<int>(program.worldSize);
  // Sized before the callbacks take references to its elements.
  results.assign(size_t(dp), {});
  std::vector<std::unique_ptr<TensorCallbacks>> io;
  auto perReplica = std::make_shared<std::vector<rt::RankCallbacks>>();
  for (int d = 0; d < dp; ++d) {
    io.push_back(std::make_unique<TensorCallbacks>(
        w, [&args, d](int rank) { return args(d, rank); }, results[d]));
    rt::RankCallbacks c = io.back()->callbacks(executor);
    c.run = [&averaged](rt::RankRun &run) -> rt::Status {
      SHARDLIN_RETURN_IF_ERROR(run.execute());
      for (size_t i : averaged)
        SHARDLIN_RETURN_IF_ERROR(rt::averageOverReplicas(run, i).withContext(
            "averaging result " + std::to_string(i)));
      return rt::Status::ok();
    };
    perReplica->push_back(std::move(c));
  }
  rt::RankCallbacks callbacks;
  callbacks.perReplica = std::move(perReplica);
  std::vector<rt::RankResult> ranks;
  return rt::runProgram(program, options, callbacks, &ranks);
}

rt::Status runBackwardOnGrid(
    const GradCase &c, const std::vector<GradData> &data,
    const BackwardRun &run, const rt::RunOptions &options,
    std::vector<std::vector<std::vector<RankTensor>>> &results) {
  const std::vector<GradArgument> arguments = gradArguments(c);
  rt::RunOptions grid = options;
  grid.replicas = static_cast<int>(data.size());
  auto forwardArgs = [&](int replica, int rank) {
    std::vector<RankTensor> args;
    for (size_t i = 0; i < arguments.size(); ++i)
      args.push_back(argumentOf(c, data[size_t(replica)], i, rank));
    return args;
  };
  std::vector<std::vector<std::vector<RankTensor>>> saved;
  if (run.saving)
    SHARDLIN_RETURN_IF_ERROR(runGridWithTensors(*run.saving, grid,
                                                forwardArgs, saved, {},
                                                run.savingExecutor)
                                 .withContext("@main_forward_saving"));
  // The parameters: @main_backward's results line up with @main's
  // arguments.
  std::vector<size_t> parameters;
  for (size_t i = 0; i < arguments.size(); ++i)
    if (arguments[i].kind == GradArgument::Kind::Sharded ||
        arguments[i].kind == GradArgument::Kind::Replicated)
      parameters.push_back(i);
  return runGridWithTensors(
             *run.backward, grid,
             [&](int replica, int rank) {
               std::vector<RankTensor> args = forwardArgs(replica, rank);
               args.push_back({data[size_t(replica)].dy[rank].bytes,
                               c.outputShapeOf(rank)});
               if (run.saving) { // after @main's one result
                 const std::vector<RankTensor> &mine =
                     saved[size_t(replica)][size_t(rank)];
                 args.insert(args.end(), mine.begin() + 1, mine.end());
               }
               return args;
             },
             results, parameters, run.backwardExecutor)
      .withContext("@main_backward");
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
