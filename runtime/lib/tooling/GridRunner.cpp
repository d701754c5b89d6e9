//===- GridRunner.cpp - A program on a DP x TP grid with .npy files -------===//
//
// runGridWithFiles (Runner.h): runProgram with RunOptions::replicas, on any
// backend. Each replica gets the file runner's callbacks (Runner.cpp) for
// its own paths ("{replica}" substituted), whose run averages the listed
// results over the replicas (RankRun::replicas()) between the execution
// and the writing of the outputs.
//
//===----------------------------------------------------------------------===//

#include "shardlin/runtime/tooling/Runner.h"

#include "shardlin/runtime/backends/Registry.h"
#include "shardlin/runtime/tooling/Process.h"

#include "tooling/RunnerSteps.h"

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

/// The file run of replica `replica` of `replicas`: the paths with
/// "{replica}" replaced, and RunOptions::replicas set, which the messages
/// of the binding read.
RunConfig replicaConfig(const RunConfig &config, int replica, int replicas) {
  RunConfig c = config;
  c.replicas = replicas;
  for (std::string &p : c.argPaths)
    p = substituteReplica(p, replica);
  for (std::string &p : c.outPaths)
    p = substituteReplica(p, replica);
  return c;
}

} // namespace

Status runGridWithFiles(const Program &program, const RunConfig &given,
                        const GridConfig &grid, std::vector<RankResult> *ranks) {
  SHARDLIN_RETURN_IF_ERROR(checkRunOptions(given));
  RunConfig config = given;
  SHARDLIN_RETURN_IF_ERROR(parameterArgPaths(program, given, config.argPaths));
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
        detail::checkFileRun(program,
                             replicaConfig(config, d, grid.dataParallel)));
  auto perReplica = std::make_shared<std::vector<RankCallbacks>>();
  for (int d = 0; d < grid.dataParallel; ++d) {
    RankCallbacks c =
        detail::fileCallbacks(program,
                              replicaConfig(config, d, grid.dataParallel));
    c.run = [averaged = grid.averaged](RankRun &run) -> Status {
      SHARDLIN_RETURN_IF_ERROR(run.execute());
      for (size_t i : averaged)
        SHARDLIN_RETURN_IF_ERROR(
            averageOverReplicas(run, i)
                .withContext("averaging result " + std::to_string(i) +
                             " over the replicas"));
      return Status::ok();
    };
    c.planOptions = config.plan;
    perReplica->push_back(std::move(c));
  }
  RankCallbacks callbacks;
  callbacks.perReplica = std::move(perReplica);
  // As runProgramWithFiles: a rank stuck reading its inputs is given up on
  // once the others have failed.
  RunOptions options = config;
  options.abandonLateRanks = true;
  options.replicas = grid.dataParallel;
  options.blasThreads = defaultBlasThreads(options, program);
  return runProgram(program, options, callbacks, ranks);
}

} // namespace shardlin::rt
