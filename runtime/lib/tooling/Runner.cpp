//===- Runner.cpp - Run a program on every rank with .npy files -----------===//

#include "shardlin/runtime/tooling/Runner.h"

#include "shardlin/runtime/backends/Registry.h"
#include "shardlin/runtime/tooling/Process.h"
#include "shardlin/runtime/tooling/Safetensors.h"

#include "tooling/RunnerSteps.h"

#include <map>
#include <memory>
#include <mutex>

namespace shardlin::rt {

using detail::FileCache;
using detail::FileRank;

std::string substituteRank(const std::string &path, int rank) {
  std::string out;
  const std::string key = "{rank}";
  size_t pos = 0;
  while (true) {
    size_t hit = path.find(key, pos);
    if (hit == std::string::npos) {
      out += path.substr(pos);
      return out;
    }
    out += path.substr(pos, hit - pos) + std::to_string(rank);
    pos = hit + key.size();
  }
}

Status parameterArgPaths(const Program &program, const RunConfig &config,
                         std::vector<std::string> &out) {
  out = config.argPaths;
  if (config.paramsPath.empty())
    return Status::ok();
  const std::string &params = config.paramsPath;
  if (!isSafetensorsFileName(params))
    return Status::invalidArgument(
        "--params=" + params +
        ": not a .safetensors file (it names the safetensors file whose "
        "tensors are the entry's parameters)");
  size_t parameters = 0;
  for (const Argument &a : program.args)
    parameters += !a.parameter.empty();
  if (parameters == 0)
    return Status::invalidArgument(
        "--params=" + params + ": the entry '" + program.name +
        "' has no parameter argument (none has shardlin.parameter)");
  const size_t others = program.args.size() - parameters;
  if (config.argPaths.size() != others)
    return Status::invalidArgument(
        "the entry '" + program.name + "' takes " + std::to_string(others) +
        " argument(s) besides its " + std::to_string(parameters) +
        " parameter(s), which --params supplies, but " +
        std::to_string(config.argPaths.size()) + " --arg were given");
  out.clear();
  size_t next = 0;
  for (const Argument &a : program.args) {
    if (a.parameter.empty()) {
      out.push_back(config.argPaths[next++]);
      continue;
    }
    // A part of a tensor (a fused q/k/v weight's): its rows, by name.
    const Range r = a.parameterRows;
    out.push_back(params + ":" + a.parameter +
                  (a.hasParameterRows()
                       ? "[" + std::to_string(r.offset) + ":" +
                             std::to_string(r.offset + r.size) + "]"
                       : std::string()));
  }
  return Status::ok();
}

namespace detail {

Status checkFileRun(const Program &program, const RunConfig &config) {
  if (config.argPaths.size() != program.args.size()) {
    size_t parameters = 0;
    for (const Argument &a : program.args)
      parameters += !a.parameter.empty();
    return Status::invalidArgument(
        "the entry '" + program.name + "' takes " +
        std::to_string(program.args.size()) + " argument(s) but " +
        std::to_string(config.argPaths.size()) + " --arg were given" +
        (parameters && config.paramsPath.empty()
             ? " (" + std::to_string(parameters) +
                   " of them are parameters: --params=FILE.safetensors "
                   "supplies them by name)"
             : std::string()));
  }
  if (config.outPaths.size() != program.results.size())
    return Status::invalidArgument(
        "the entry '" + program.name + "' returns " +
        std::to_string(program.results.size()) + " result(s) but " +
        std::to_string(config.outPaths.size()) + " --out were given");
  return checkOutputPaths(program, config);
}

RankCallbacks fileCallbacks(const Program &program, const RunConfig &config) {
  // What the callbacks use, owned by them: a rank that is given up on
  // (abandonLateRanks) may still be in bind after the run returns.
  struct FileRun {
    FileRun(const Program &program, const RunConfig &config)
        : program(program), config(config),
          cache(config.comm.timeoutSeconds) {}
    const Program program;
    const RunConfig config;
    FileCache cache;
    std::mutex mutex;
    std::map<int, FileRank> states; // Nodes stay put while ranks insert.
    FileRank &stateOf(int rank) {
      std::lock_guard<std::mutex> lock(mutex);
      return states[rank];
    }
  };
  auto run = std::make_shared<FileRun>(program, config);
  RankCallbacks callbacks;
  callbacks.planOptions = config.plan;
  // Dynamic dims (run-time batch sizes) come from the .npy headers of each
  // rank's files; the plan then checks every dim again when it binds them.
  callbacks.argShapes = [run](int rank,
                              std::vector<std::vector<int64_t>> &shapes,
                              std::vector<std::string> &names) {
    const Program &program = run->program;
    shapes.assign(program.args.size(), {});
    names.assign(program.args.size(), {});
    for (const DynamicDim &d : dynamicArgDims(program)) {
      if (!shapes[d.arg].empty())
        continue;
      names[d.arg] = substituteRank(run->config.argPaths[d.arg], rank);
      std::shared_ptr<const NpyArray> file;
      SHARDLIN_RETURN_IF_ERROR(run->cache.get(names[d.arg], file).withContext(
          "argument " + std::to_string(d.arg)));
      shapes[d.arg] = file->shape;
    }
    return Status::ok();
  };
  callbacks.bind = [run](const Plan &plan, RankDevice &device,
                         RankBuffers &buffers) {
    return detail::bindFromFiles(run->program, run->config, run->cache, plan, device,
                         run->stateOf(plan.rank()), buffers);
  };
  callbacks.loadedBytes = [run](int rank) {
    return run->stateOf(rank).bytesRead;
  };
  callbacks.finish = [run](const Plan &plan, RankDevice &device,
                           const RankBuffers &buffers, Communicator &agree) {
    return detail::writeOutputs(run->program, run->config, plan, device,
                                run->stateOf(plan.rank()), buffers, agree);
  };
  callbacks.executor = config.executor;
  callbacks.release = [run](int rank) {
    FileRank &state = run->stateOf(rank);
    state.deviceArgs.clear();
    state.deviceResults.clear();
  };
  return callbacks;
}

} // namespace detail

Status runProgramWithFiles(const Program &program, const RunConfig &config,
                           std::vector<RankResult> *ranks) {
  // The options' ranges before any per-rank work (a world size of a
  // million would otherwise check a million paths first).
  SHARDLIN_RETURN_IF_ERROR(checkRunOptions(config));
  RunConfig resolved = config;
  SHARDLIN_RETURN_IF_ERROR(
      parameterArgPaths(program, config, resolved.argPaths));
  SHARDLIN_RETURN_IF_ERROR(detail::checkFileRun(program, resolved));
  // Every wait on another rank is bounded by the timeout: a rank stuck in
  // reading its inputs or writing its outputs (outside any collective) is
  // given up on once the others have failed waiting for it.
  RunOptions options = resolved;
  options.abandonLateRanks = true;
  options.blasThreads = defaultBlasThreads(options, program);
  return runProgram(program, options,
                    detail::fileCallbacks(program, resolved), ranks);
}

std::vector<std::string> describeRun(const Program &program,
                                     const std::vector<RankResult> &ranks) {
  std::vector<std::string> lines;
  if (!ranks.empty())
    lines = describePipelines(program, ranks[0]);
  for (const RankResult &rank : ranks)
    lines.push_back(describeRank(rank, "load", "write"));
  return lines;
}

} // namespace shardlin::rt
