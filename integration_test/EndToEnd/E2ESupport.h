//===- E2ESupport.h - Shared pieces of the end-to-end tests -----*- C++ -*-===//
//
// The end-to-end tests compile one shardlin.linear per configuration from
// MLIR text (the same path shardlin-run takes), run it on W ranks and compare
// every element of every rank's output with a dense float64 reference.
//
// This header has no MLIR dependency: the layer's description and its
// compilation come from ShardlinTesting (LinearTesting.h), the one place that
// includes MLIR, so the test files compile quickly and one MLIRContext per
// configuration is all the tests ever see of the compiler.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_UNITTESTS_ENDTOEND_E2ESUPPORT_H
#define SHARDLIN_UNITTESTS_ENDTOEND_E2ESUPPORT_H

#include "LinearTesting.h"
#include "shardlin/runtime/backends/Registry.h"
#include "shardlin/runtime/comm/Communicator.h"
#include "shardlin/runtime/base/DType.h"
#include "shardlin/runtime/exec/Execute.h"
#include "shardlin/runtime/exec/Gemm.h"
#include "shardlin/runtime/exec/Plan.h"
#include "shardlin/runtime/program/Program.h"
#include "shardlin/runtime/base/Status.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace shardlin::e2e {

/// One y = x A^T + b with a sharded weight A (N x K): the layer description
/// the tests share with the benchmark (testing/compiler/LinearTesting.h).
using LinearConfig = testkit::LinearSpec;

/// The MLIR text of `func.func @main` computing the configuration's linear,
/// and its compilation: parses linearMlir(config) in a fresh MLIRContext and
/// builds the runtime Program (lowering included); compiler diagnostics and
/// the input become the message.
using testkit::compileLinear;
using testkit::linearMlir;

using testkit::HostTensor;
using testkit::Reference;

/// A configuration from its fields (strategy "activations" unless given).
LinearConfig makeConfig(int64_t dim, int64_t n, int64_t k,
                        std::vector<int64_t> placements,
                        std::vector<int64_t> batch, bool bias, rt::DType dtype,
                        std::string strategy = "activations");

/// Deterministic data for one configuration: the global weight A (N x K),
/// the bias b (N; empty without bias) and a distinct input x_r per rank.
/// Values are uniform in +-[0.25, 1] (never zero), rounded to the dtype; the
/// seed is derived from the configuration's name, the tensor, the rank and
/// `salt` (a different salt gives different data, for replays).
struct LinearData {
  HostTensor weight;
  HostTensor bias;
  std::vector<HostTensor> inputs;
};
LinearData makeLinearData(const LinearConfig &config, uint64_t salt = 0);

/// Rank `rank`'s reference y_r = x_r A^T + b in float64 from the rounded
/// values, with the per-element error scale sum_k |x_k A_jk| + |b_j|.
Reference referenceOutput(const LinearConfig &config, const LinearData &data,
                          int rank);

/// The bound on |y - ref| / scale for the configuration's dtype and W.
double errorBound(const LinearConfig &config);

/// Compares rank `rank`'s output (in the dtype, row-major outputShape())
/// with the reference. Returns the number of failing elements and appends a
/// description of the first few (config, rank, index, value, reference,
/// bound) to `report`.
int64_t checkOutput(const LinearConfig &config, const LinearData &data,
                    int rank, const std::vector<uint8_t> &output,
                    std::string &report);

/// The argument pointers of rank `rank` for `plan`: x_r, the rank's chunk of
/// A (extracted into `chunkStorage` with extractLocalChunk) and b.
rt::Status bindArguments(const rt::Program &program, const rt::Plan &plan,
                         const LinearConfig &config, const LinearData &data,
                         int rank, std::vector<uint8_t> &chunkStorage,
                         std::vector<const void *> &args);

/// An output buffer of the right size filled with NaN bytes (0xFF is a NaN
/// in every supported dtype), so unwritten elements fail the check.
std::vector<uint8_t> poisonedOutput(const rt::Plan &plan);

/// Runs `program` for `config` through the in-memory run API (rt::runProgram)
/// on a host-memory backend (`options.backend`: threads, or mpi for this
/// process's rank). Each rank's plan is bound to x_r, its chunk of A and b of
/// runs[0] and executed once per entry of `runs`, the arguments re-bound to
/// that entry's data before each execution (a replay: a plan must not keep
/// pointers or state from an earlier run). outputs[i][r] receives rank r's
/// output of run i, from a NaN-filled buffer so that unwritten elements fail
/// the check; ranks[r] is rank r's status and traffic (over all runs).
/// With dynamic batch dims each rank's input has config.inputShapeOf(r);
/// `plans`, if given, keeps the plans for later runs (RankCallbacks::plans).
/// For a program the JIT compiled (JitTesting.h), `executor` is its
/// executors.
rt::Status runLinear(const rt::Program &program, const LinearConfig &config,
                     const std::vector<const LinearData *> &runs,
                     const rt::RunOptions &options,
                     std::vector<std::vector<std::vector<uint8_t>>> &outputs,
                     std::vector<rt::RankResult> &ranks,
                     rt::PlanCache *plans = nullptr,
                     const rt::RankCallbacks::MakeExecutor &executor = {});

/// One rank's whole run through the runtime's rt::runRank (Execute.h), on
/// host memory with OpenBLAS: builds the plan for comm.rank(), binds the
/// configuration's data, agrees with the other ranks (one allReduce) that
/// every rank is ready so that a failure on one rank does not leave the
/// others waiting in a collective, then runs once. comm's stats are reset
/// right before the program runs. A rank stopped by another's failure gets
/// StatusCode::Aborted. `plans` and `planReused` as RankCallbacks::plans and
/// RankResult::planReused.
rt::Status runRank(const rt::Program &program, const LinearConfig &config,
                   const LinearData &data, rt::Communicator &comm,
                   std::vector<uint8_t> &output,
                   rt::PlanCache *plans = nullptr,
                   bool *planReused = nullptr,
                   const rt::RankCallbacks::MakeExecutor &executor = {});

/// The bytes rank `rank` sends when it runs `config` (CommStats::bytesSent of
/// its communicator), derived from the chunk tables (B: the rank's rows;
/// (W-1)*B below is every other rank's rows summed when they differ):
///  - row-wise: the all_to_all sends x_r[:, K_c(s)] to every other rank s,
///    B * (K - |K_c(r)|) elements; the reduce_scatter sends the W - 1 other
///    ranks' B x N blocks of partial sums, (W - 1) * B * N (f32 for f16 and
///    bf16);
///  - col-wise: the all_gather sends x_r to the W - 1 others, (W - 1) * B * K;
///    the all_to_all sends rank r's block Q_r[block d] (B x |N_c(r)|) to every
///    other rank d, (W - 1) * B * |N_c(r)|;
///  - gather-weight: the all_gather of the rank's weight chunk to the W - 1
///    others.
uint64_t expectedBytesSent(const LinearConfig &config, int rank);

/// The batch sizes a run of dynamic batch dims goes through on W ranks:
/// rank r's dims of each run, `batch` with its first (dynamic) dim set and
/// its static dims kept. In order: uneven with an empty rank, one row each,
/// no rows at all, a larger uneven set, and the first set again (which a
/// plan cache must serve).
std::vector<std::vector<std::vector<int64_t>>>
batchSizeRuns(int worldSize, const std::vector<int64_t> &batch);

/// The threads-backend suite: every configuration the brief lists, in a
/// fixed order, without duplicates.
std::vector<LinearConfig> threadsConfigs();

/// The smaller MPI suite for world size `worldSize`.
std::vector<LinearConfig> mpiConfigs(int worldSize);

} // namespace shardlin::e2e

#endif // SHARDLIN_UNITTESTS_ENDTOEND_E2ESUPPORT_H
