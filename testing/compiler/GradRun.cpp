//===- GradRun.cpp - Running backward functions on every rank -------------===//
//
// runWithTensors (any program, each rank's arguments as host tensors),
// runBackward (the saving forward, then the backward) and the gradient
// suite (GradTesting.h).
//
//===----------------------------------------------------------------------===//

#include "GradTesting.h"

#include "shardlin/runtime/backends/Registry.h"
#include "shardlin/runtime/base/Buffer.h"

#include <algorithm>
#include <cmath>
#include <mutex>

namespace shardlin::testkit {

TensorCallbacks::TensorCallbacks(
    int worldSize, std::function<std::vector<RankTensor>(int rank)> args,
    std::vector<std::vector<RankTensor>> &results)
    : args_(std::move(args)), results_(results),
      inputs_(std::max(worldSize, 1)), buffers_(inputs_.size()) {
  results_.assign(inputs_.size(), {});
}

rt::RankCallbacks
TensorCallbacks::callbacks(const rt::RankCallbacks::MakeExecutor &executor) {
  rt::RankCallbacks callbacks;
  callbacks.executor = executor;
  // Every rank's arguments, made on the rank's thread (args may be costly).
  callbacks.argShapes = [this](int rank,
                               std::vector<std::vector<int64_t>> &shapes,
                               std::vector<std::string> &) {
    inputs_[rank] = args_(rank);
    shapes.clear();
    for (const RankTensor &t : inputs_[rank])
      shapes.push_back(t.shape);
    return rt::Status::ok();
  };
  callbacks.bind = [this](const rt::Plan &plan, rt::RankDevice &device,
                          rt::RankBuffers &bound) -> rt::Status {
    const int r = plan.rank();
    if (inputs_[r].empty() && plan.numArgs() > 0)
      inputs_[r] = args_(r); // no dynamic dims: argShapes was not called
    if (inputs_[r].size() != plan.numArgs())
      return rt::Status::internal("bound " + std::to_string(inputs_[r].size()) +
                                  " arguments, the program takes " +
                                  std::to_string(plan.numArgs()));
    std::vector<rt::Buffer> &mine = buffers_[r];
    mine.clear();
    auto upload = [&](const std::vector<uint8_t> &host) -> rt::Status {
      mine.emplace_back();
      SHARDLIN_RETURN_IF_ERROR(rt::Buffer::allocate(
          device.allocator(), std::max<size_t>(host.size(), 1), mine.back()));
      if (!host.empty())
        SHARDLIN_RETURN_IF_ERROR(
            device.copyFromHost(mine.back().data(), host.data(), host.size()));
      return rt::Status::ok();
    };
    for (const RankTensor &t : inputs_[r]) {
      SHARDLIN_RETURN_IF_ERROR(upload(t.bytes));
      bound.args.push_back(mine.back().data());
    }
    results_[r].assign(plan.numResults(), {});
    for (size_t i = 0; i < plan.numResults(); ++i) {
      RankTensor &out = results_[r][i];
      out.shape = plan.resultShape(i);
      if (rt::hasDynamicDim(out.shape)) { // sized by the compiled run
        bound.results.push_back(nullptr);
        continue;
      }
      int64_t n = 1;
      for (int64_t d : out.shape)
        n *= d;
      // NaN in every element (0xFF bytes), so that unwritten ones show.
      SHARDLIN_RETURN_IF_ERROR(upload(std::vector<uint8_t>(
          n * rt::dtypeSize(plan.resultType(i)), uint8_t(0xFF))));
      bound.results.push_back(mine.back().data());
    }
    return rt::Status::ok();
  };
  callbacks.finish = [this](const rt::Plan &plan, rt::RankDevice &device,
                            const rt::RankBuffers &bound,
                            rt::Communicator &) -> rt::Status {
    const int r = plan.rank();
    for (size_t i = 0; i < plan.numResults(); ++i) {
      RankTensor &out = results_[r][i];
      if (i < bound.resultShapes.size() && !bound.resultShapes[i].empty())
        out.shape = bound.resultShapes[i];
      int64_t n = 1;
      for (int64_t d : out.shape)
        n *= d;
      out.bytes.resize(n * rt::dtypeSize(plan.resultType(i)));
      if (!out.bytes.empty())
        SHARDLIN_RETURN_IF_ERROR(device.copyToHost(
            out.bytes.data(), bound.results[i], out.bytes.size()));
    }
    return rt::Status::ok();
  };
  callbacks.release = [this](int rank) { buffers_[rank].clear(); };
  return callbacks;
}

rt::Status runWithTensors(
    const rt::Program &program, const rt::RunOptions &options,
    const std::function<std::vector<RankTensor>(int rank)> &args,
    std::vector<std::vector<RankTensor>> &results,
    const rt::RankCallbacks::MakeExecutor &executor,
    std::vector<rt::RankResult> *ranks) {
  const int w = options.worldSize > 0 ? options.worldSize
                                      : static_cast<int>(program.worldSize);
  TensorCallbacks io(w, args, results);
  std::vector<rt::RankResult> own;
  return rt::runProgram(program, options, io.callbacks(executor),
                        ranks ? ranks : &own);
}

BackwardRun backwardRunOf(const BackwardPrograms &programs) {
  BackwardRun run;
  run.backward = &programs.backward;
  run.saving = programs.numSaved > 0 ? &programs.saving : nullptr;
  run.numSaved = programs.numSaved;
  return run;
}

rt::Status runBackward(const GradCase &c, const GradData &data,
                       const BackwardRun &run, const rt::RunOptions &options,
                       std::vector<std::vector<RankTensor>> &results) {
  const size_t numArgs = gradArguments(c).size();
  auto forwardArgs = [&](int rank) {
    std::vector<RankTensor> args;
    for (size_t i = 0; i < numArgs; ++i)
      args.push_back(argumentOf(c, data, i, rank));
    return args;
  };
  std::vector<std::vector<RankTensor>> saved;
  if (run.saving) {
    SHARDLIN_RETURN_IF_ERROR(
        runWithTensors(*run.saving, options, forwardArgs, saved,
                       run.savingExecutor)
            .withContext("@main_forward_saving"));
  }
  return runWithTensors(
             *run.backward, options,
             [&](int rank) {
               std::vector<RankTensor> args = forwardArgs(rank);
               args.push_back({data.dy[rank].bytes, c.outputShapeOf(rank)});
               if (run.saving) // after @main's one result
                 args.insert(args.end(), saved[rank].begin() + 1,
                             saved[rank].end());
               return args;
             },
             results, run.backwardExecutor)
      .withContext("@main_backward");
}

} // namespace shardlin::testkit
