//===- BlocksRows.h - The blocks section's forward rows ---------*- C++ -*-===//
//
// What one shape of the blocks section's forward rows measured on one
// backend (BlocksBench.cpp measures, BlocksTable.cpp prints the table).
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_BENCH_BLOCKSROWS_H
#define SHARDLIN_BENCH_BLOCKSROWS_H

#include "BlocksCommon.h"

#include <cstdint>
#include <string>
#include <vector>

namespace shardlin::bench {

/// What one variant of a shape measured.
struct VariantResult {
  std::vector<double> medians;   // one per round, seconds per run
  std::vector<double> commShare; // one per round where it was measured
  std::vector<uint64_t> bytes, predicted; // per rank, one run
  bool bytesMatch = true, consistent = true;
  int64_t checkFailures = 0;
  std::string report, error;
};

/// PyTorch's figures of one shape, seconds per run.
struct TorchBlock {
  double median = 0, min = 0, max = 0;
  double maxError = 0;
};

/// One shape on one backend: its variants' results.
struct BlockRow {
  BlockCase c;
  std::string backend = "threads";
  VariantResult v[kNumBlockVariants];
  std::string error;
  bool fullCheck = false;
  TorchBlock torch;
  bool haveTorch = false;
};

/// Prints the rows' table (times, communication shares, bytes per rank,
/// checks, DTensor's times), what went wrong in each row, and the
/// section's summary: the speed target and DTensor's (torchMessage: why it
/// did not run, if it did not; torchVersion: its version).
void printBlocksTable(const std::vector<BlockRow> &rows, bool quick,
                      const std::string &torchMessage,
                      const std::string &torchVersion);

} // namespace shardlin::bench

#endif // SHARDLIN_BENCH_BLOCKSROWS_H
