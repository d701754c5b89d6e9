//===- GridRunner.cpp - A program on a DP x TP grid with .npy files -------===//
//
// runGridWithFiles (Runner.h): the world's communicators from the backend's
// connect (threads: every rank here; mpi: this process's), each rank split
// into its replica's group and its chunk's group, the replica's file run
// (Runner.cpp's callbacks, with "{replica}" substituted) on the first, and
// the listed results averaged over the second between the run and the
// writing of the outputs.
//
//===----------------------------------------------------------------------===//

#include "shardlin/runtime/tooling/Runner.h"

#include "shardlin/runtime/backends/Host.h"
#include "shardlin/runtime/base/DType.h"

#include "tooling/RunnerSteps.h"

#include <thread>

namespace shardlin::rt {

namespace {

std::string substituteReplica(const std::string &path, int replica) {
  std::string out = path;
  const std::string key = "{replica}";
  for (size_t at = out.find(key); at != std::string::npos;
       at = out.find(key, at))
    out.replace(at, key.size(), std::to_string(replica));
  return out;
}

/// The file run of replica `replica`: the paths with "{replica}" replaced.
RunConfig replicaConfig(const RunConfig &config, int replica) {
  RunConfig c = config;
  for (std::string &p : c.argPaths)
    p = substituteReplica(p, replica);
  for (std::string &p : c.outPaths)
    p = substituteReplica(p, replica);
  return c;
}

/// Averages result i of every rank of `replicas` (host memory): the sum,
/// then a scaling by 1 / its size.
Status averageResult(const Plan &plan, const RankBuffers &buffers, size_t i,
                     Communicator &replicas) {
  std::vector<int64_t> shape = plan.resultShape(i);
  if (i < buffers.resultShapes.size() && !buffers.resultShapes[i].empty())
    shape = buffers.resultShapes[i];
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  const DType dtype = plan.resultType(i);
  void *data = buffers.results[i];
  SHARDLIN_RETURN_IF_ERROR(replicas.allReduce(data, data, n, dtype));
  std::vector<double> values(static_cast<size_t>(n));
  convertToF64(dtype, data, values.data(), values.size());
  for (double &v : values)
    v /= replicas.worldSize();
  convertFromF64(dtype, values.data(), data, values.size());
  return Status::ok();
}

/// World rank `world`'s part: the splits, its replica's run, the averages.
RankResult runGridRank(const SharedProgram &program, const RunConfig &config,
                       const GridConfig &grid, Communicator &world) {
  RankResult failed;
  failed.rank = world.rank();
  const int tp = world.worldSize() / grid.dataParallel;
  const int replica = world.rank() / tp, rank = world.rank() % tp;
  const std::string at = "grid rank " + std::to_string(world.rank()) +
                         " (rank " + std::to_string(rank) + " of replica " +
                         std::to_string(replica) + ")";
  std::unique_ptr<Communicator> group, chunk;
  failed.status = world.split(replica, world.rank(), group);
  if (failed.status)
    failed.status = world.split(rank, world.rank(), chunk);
  if (!failed.status) {
    failed.status = failed.status.withContext(at);
    return failed;
  }
  const RunConfig mine = replicaConfig(config, replica);
  RankCallbacks callbacks = detail::fileCallbacks(program.program(), mine);
  callbacks.run = [&](RankRun &run) -> Status {
    SHARDLIN_RETURN_IF_ERROR(run.execute());
    for (size_t i : grid.averaged)
      SHARDLIN_RETURN_IF_ERROR(
          averageResult(run.plan(), run.buffers(), i, *chunk)
              .withContext(at + ": averaging result " + std::to_string(i) +
                           " over the replicas"));
    return Status::ok();
  };
  std::unique_ptr<RankDevice> device = createHostDevice();
  RankResult result = runRank(program, *group, *device, callbacks);
  result.rank = world.rank();
  return result;
}

} // namespace

Status runGridWithFiles(const Program &program, const RunConfig &config,
                        const GridConfig &grid, std::vector<RankResult> *ranks) {
  SHARDLIN_RETURN_IF_ERROR(checkRunOptions(config));
  const BackendInfo *backend = nullptr;
  SHARDLIN_RETURN_IF_ERROR(lookupBackend(config.backend, backend));
  if (!backend->connect || backend->device != DeviceKind::Host)
    return Status::invalidArgument("a grid runs on the host backends "
                                   "(threads, mpi), not on '" +
                                   config.backend + "'");
  if (grid.dataParallel < 1)
    return Status::invalidArgument("a grid needs at least one replica, not " +
                                   std::to_string(grid.dataParallel));
  for (size_t i : grid.averaged)
    if (i >= program.results.size())
      return Status::invalidArgument(
          "result " + std::to_string(i) + " to average: the entry '" +
          program.name + "' has " + std::to_string(program.results.size()));
  for (const std::string &path : config.outPaths)
    if (grid.dataParallel > 1 &&
        path.find("{replica}") == std::string::npos)
      return Status::invalidArgument(
          "on a grid every output path needs {replica} (each replica writes "
          "its own): '" + path + "'");
  for (int d = 0; d < grid.dataParallel; ++d)
    SHARDLIN_RETURN_IF_ERROR(
        detail::checkFileRun(program, replicaConfig(config, d)));
  // The world: DP times the program's TP ranks.
  const int tp = program.worldSize > 0 ? int(program.worldSize) : 1;
  std::vector<std::unique_ptr<Communicator>> world;
  SHARDLIN_RETURN_IF_ERROR(backend->connect(
      backend->needsMpiSession() ? 0 : grid.dataParallel * tp, config.comm,
      config.blasThreads, world));
  if (world.empty() || world[0]->worldSize() != grid.dataParallel * tp)
    return Status::invalidArgument(
        "a grid of " + std::to_string(grid.dataParallel) + " replicas of '" +
        program.name + "' (" + std::to_string(tp) + " ranks) needs " +
        std::to_string(grid.dataParallel * tp) + " ranks, not " +
        std::to_string(world.empty() ? 0 : world[0]->worldSize()));
  const SharedProgram shared(program);
  std::vector<RankResult> results(world.size());
  if (world.size() == 1) { // mpi: MPI calls from the main thread only
    results[0] = runGridRank(shared, config, grid, *world[0]);
  } else {
    std::vector<std::thread> threads;
    for (size_t g = 0; g < world.size(); ++g)
      threads.emplace_back([&, g] {
        results[g] = runGridRank(shared, config, grid, *world[g]);
      });
    for (std::thread &t : threads)
      t.join();
  }
  const Status cause = rootCause(results);
  if (ranks)
    *ranks = std::move(results);
  return cause;
}

} // namespace shardlin::rt
