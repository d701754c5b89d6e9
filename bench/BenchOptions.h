//===- BenchOptions.h - The command line of shardlin-bench ------*- C++ -*-===//
//
// The options of shardlin-bench, their defaults per mode (--quick, default,
// --full) and the internal worker modes the MPI launches use.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_BENCH_BENCHOPTIONS_H
#define SHARDLIN_BENCH_BENCHOPTIONS_H

#include "BenchCommon.h"

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#ifndef SHARDLIN_BENCH_SOURCE_DIR
#define SHARDLIN_BENCH_SOURCE_DIR "bench"
#endif
#ifndef SHARDLIN_BENCH_MPIEXEC
#define SHARDLIN_BENCH_MPIEXEC ""
#endif

namespace shardlin::bench {

struct Options {
  std::string mode = "default"; // quick | default | full
  std::set<std::string> sections = {"linear", "targets", "collectives",
                                    "compile", "elementwise", "blocks"};
  std::vector<std::string> backends = {"threads", "mpi"};
  std::vector<int> worldSizes = {1, 2, 4};
  std::vector<int64_t> rows, features;
  std::vector<int64_t> dims = {1, 0};
  std::vector<std::string> strategies = {"activations", "gather-weight",
                                         "auto"};
  std::vector<uint64_t> collectiveSizes;
  std::vector<int> collectiveWorldSizes = {2, 4};
  std::vector<int> compileOps;
  // The blocks section: W, H and B per rank (F follows from H).
  std::vector<int> blockWorldSizes = {2, 4};
  std::vector<int64_t> blockHidden, blockRows;
  bool blockShapesGiven = false; // --block-hidden or --block-rows given
  bool permuted = false; // non-identity placements (and W = 4: multi-hop)
  /// The linear section's jit column: every case also compiled by the JIT
  /// (shardlin-run --jit's path), and the targets' JIT against plan ratios.
  bool jit = true;
  std::string json, plot;
  int torch = -1; // -1: default for the mode
  /// Default: bench/.venv/bin/python (bench/torch-venv.sh) if it exists,
  /// else /usr/bin/python3.
  std::string python;
  std::string scriptsDir = SHARDLIN_BENCH_SOURCE_DIR;
  std::string mpirun = SHARDLIN_BENCH_MPIEXEC;
  double maxMemGiB = 8.0;
  TimingOptions timing;
  // Worker modes (internal).
  std::string mpiWorker, mpiCollectivesWorker, mpiBlocksWorker, mpiOut;
};

/// Parses a comma-separated list of numbers; sizes may carry K/M/G suffixes
/// (powers of 1024). Defined for int, int64_t and uint64_t.
template <typename T> bool parseList(const std::string &s, std::vector<T> &out);

void usage();

/// Fills `o` from the command line: the mode's defaults, then the explicit
/// flags. Prints what is wrong and returns false on a bad command line;
/// --help prints the usage and exits.
bool parseArgs(int argc, char **argv, Options &o);

} // namespace shardlin::bench

#endif // SHARDLIN_BENCH_BENCHOPTIONS_H
