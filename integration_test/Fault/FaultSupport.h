//===- FaultSupport.h - Programs and files for the fault tests --*- C++ -*-===//
#ifndef SHARDLIN_UNITTESTS_FAULT_FAULTSUPPORT_H
#define SHARDLIN_UNITTESTS_FAULT_FAULTSUPPORT_H

#include "../EndToEnd/E2ESupport.h"
#include "shardlin/runtime/tooling/Npy.h"
#include "shardlin/runtime/tooling/Runner.h"

#include <string>
#include <sys/stat.h>

namespace shardlin::fault {

/// The layers the fault tests run: W = 3, uneven chunks, permuted
/// placements, so that every collective moves different amounts per rank.
///   row-wise with activations: agreement, all_to_all (call 1),
///                              reduce_scatter (call 2), agreement
///   col-wise with activations: agreement, all_gather (call 1),
///                              all_to_all (call 2), agreement
inline e2e::LinearConfig faultLinear(int64_t dim) {
  e2e::LinearConfig c;
  c.dim = dim;
  c.n = 7;
  c.k = 8;
  c.batch = {4};
  c.placements = {2, 0, 1};
  c.bias = true;
  c.strategy = "activations";
  return c;
}

/// Writes the layer's inputs under `dir` for `rank` (each rank its own copy,
/// so MPI processes need not share a writer) and fills `config`'s paths:
/// dir/in.{rank}/{x,w,b}.npy and the output dir/out/y.{rank}.npy.
inline rt::Status writeInputs(const e2e::LinearConfig &c,
                              const std::string &dir, int rank,
                              rt::RunConfig &config) {
  e2e::LinearData data = e2e::makeLinearData(c);
  std::string in = dir + "/in." + std::to_string(rank);
  ::mkdir(dir.c_str(), 0777);
  ::mkdir(in.c_str(), 0777);
  ::mkdir((dir + "/out").c_str(), 0777);
  SHARDLIN_RETURN_IF_ERROR(rt::writeNpy(in + "/x.npy", c.dtype, c.inputShape(),
                                        data.inputs[rank].bytes.data()));
  SHARDLIN_RETURN_IF_ERROR(rt::writeNpy(in + "/w.npy", c.dtype, {c.n, c.k},
                                        data.weight.bytes.data()));
  SHARDLIN_RETURN_IF_ERROR(
      rt::writeNpy(in + "/b.npy", c.dtype, {c.n}, data.bias.bytes.data()));
  config.argPaths = {dir + "/in.{rank}/x.npy", dir + "/in.{rank}/w.npy",
                     dir + "/in.{rank}/b.npy"};
  config.outPaths = {dir + "/out/y.{rank}.npy"};
  return rt::Status::ok();
}

} // namespace shardlin::fault

#endif // SHARDLIN_UNITTESTS_FAULT_FAULTSUPPORT_H
