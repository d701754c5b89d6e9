//===- PassOptions.cpp - Checking --lower-sharded-linear's options --------===//

#include "shardlin/Dialect/Shardlin/Transforms/PassOptions.h"

#include "shardlin/runtime/base/Limits.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"

#include <cstdio>

using namespace mlir;
using namespace mlir::shardlin;

LogicalResult mlir::shardlin::detail::initLoweringOptions(
    const LowerShardedLinearOptions &o, MLIRContext *ctx,
    LoweringOptions &out) {
  std::string error;
  FailureOr<LoweringOptions> checked = toLoweringOptions(o, error);
  if (failed(checked))
    return emitError(UnknownLoc::get(ctx)) << error;
  out = *checked;
  return success();
}

FailureOr<LoweringOptions>
mlir::shardlin::detail::toLoweringOptions(const LowerShardedLinearOptions &o,
                                          std::string &error) {
  // Each range names its option and the value given (NaN fails every one).
  struct Range {
    const char *name;
    double value;
    bool positive; // > 0, else >= 0
  };
  for (const Range &r : {Range{"latency-us", o.latencyUs, false},
                         Range{"bandwidth-gbps", o.bandwidthGBps, true},
                         Range{"gemm-gflops", o.gemmGflops, true},
                         Range{"memory-cap-mib", o.memoryCapMiB, false}})
    if (!(r.positive ? r.value > 0 : r.value >= 0)) {
      char given[32];
      std::snprintf(given, sizeof given, "%g", r.value);
      error = std::string("lower-sharded-linear: ") + r.name + " must be " +
              (r.positive ? "> 0" : ">= 0") + ", got " + given;
      return failure();
    }
  if (o.assumedRows < 1) {
    error = "lower-sharded-linear: assumed-rows must be >= 1, got " +
            std::to_string(o.assumedRows);
    return failure();
  }
  if (o.overlapChunks < -1 || o.overlapChunks > ::shardlin::rt::kMaxOverlapChunks) {
    error = "lower-sharded-linear: overlap-chunks must be -1 (the cost "
            "model's choice), 0 or 1 (none) or a chunk count up to " +
            std::to_string(::shardlin::rt::kMaxOverlapChunks) + ", got " +
            std::to_string(o.overlapChunks);
    return failure();
  }
  LoweringOptions options;
  options.assumedRows = o.assumedRows;
  options.overlapChunks = static_cast<int>(o.overlapChunks);
  options.machine.overlapsComm = o.overlapComm;
  options.forced = forcedStrategy(o.strategy);
  options.machine.latencyUs = o.latencyUs;
  options.machine.bandwidthGBps = o.bandwidthGBps;
  options.machine.gemmGflops = o.gemmGflops;
  options.memoryCapBytes =
      static_cast<uint64_t>(o.memoryCapMiB * 1024.0 * 1024.0);
  return options;
}

