//===- PassOptions.h - Checking --lower-sharded-linear's options -*- C++ -*-===//
//
// The pass's option values, checked: the option string before llvm::cl
// reads it (each bad option gets one error naming it and its value), and
// the values' ranges; and the one list of the pass's option members
// (forEachOption), from which the checks, the values and the flags other
// tools take (lowerShardedLinearFlags) are made.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_LIB_DIALECT_SHARDLIN_TRANSFORMS_PASSOPTIONS_H
#define SHARDLIN_LIB_DIALECT_SHARDLIN_TRANSFORMS_PASSOPTIONS_H

#include "shardlin/Dialect/Shardlin/Transforms/LowerShardedLinear.h"
#include "shardlin/Dialect/Shardlin/Transforms/Passes.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"

#include <string>
#include <type_traits>
#include <utility>

namespace mlir::shardlin::detail {

/// The lowering options the pass options give, or failure with a message
/// naming the option and the value for values out of range.
FailureOr<LoweringOptions> toLoweringOptions(const LowerShardedLinearOptions &o,
                                             std::string &error);

/// A pass's initialize(): `out` from its option values, or an error (an
/// unknown location: the options are the pass's, not the IR's) and failure.
LogicalResult initLoweringOptions(const LowerShardedLinearOptions &o,
                                  MLIRContext *ctx, LoweringOptions &out);

/// The pass's option members, in declaration order, for an X macro: the one
/// list from which forEachOption and optionValues are made.
#define SHARDLIN_LOWERING_OPTIONS(X)                                           \
  X(strategy)                                                                  \
  X(latencyUs)                                                                 \
  X(bandwidthGBps)                                                             \
  X(gemmGflops)                                                                \
  X(overlapComm)                                                               \
  X(overlapChunks)                                                             \
  X(memoryCapMiB)                                                              \
  X(assumedRows)                                                               \
  X(explain)                                                                   \
  X(fuseBlocks)

/// Calls `fn` with each of the pass's option members (llvm::cl options: their
/// ArgStr, HelpStr and value), in declaration order.
template <typename PassT, typename Fn> void forEachOption(PassT &p, Fn &&fn) {
#define SHARDLIN_CALL_WITH_OPTION(name) fn(p.name);
  SHARDLIN_LOWERING_OPTIONS(SHARDLIN_CALL_WITH_OPTION)
#undef SHARDLIN_CALL_WITH_OPTION
}

/// The values of the pass's options.
template <typename PassT>
LowerShardedLinearOptions optionValues(const PassT &p) {
  LowerShardedLinearOptions o;
#define SHARDLIN_COPY_OPTION(name) o.name = p.name;
  SHARDLIN_LOWERING_OPTIONS(SHARDLIN_COPY_OPTION)
#undef SHARDLIN_COPY_OPTION
  return o;
}

/// Checks a pass-option string before llvm::cl parses it, so that a bad
/// one gets a message naming the option and the value (llvm::cl's own would
/// go to stderr, followed by an empty diagnostic). The options are the
/// pass's own members, so their names come from the ODS; each is checked by
/// its type: numbers, booleans as llvm::cl reads them, and the strategies.
template <typename PassT>
LogicalResult
checkOptionString(PassT &pass, StringRef options,
                  function_ref<LogicalResult(const Twine &)> errorHandler) {
  // Quoted or braced values may hold spaces: those strings are left to
  // llvm::cl alone.
  if (options.find_first_of("\"'{") != StringRef::npos)
    return success();
  SmallVector<StringRef> tokens;
  options.split(tokens, ' ', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
  for (StringRef token : tokens) {
    // Not a structured binding: the lambda below captures them (C++17).
    const std::pair<StringRef, StringRef> keyValue = token.split('=');
    const StringRef key = keyValue.first, value = keyValue.second;
    bool hasValue = token.contains('=');
    std::string expected; // What the option takes, if `value` is not it.
    bool known = false;
    std::string names;
    auto check = [&](auto &option) {
      names += (names.empty() ? "" : ", ") + option.ArgStr.str();
      if (option.ArgStr != key)
        return;
      known = true;
      using T = std::decay_t<decltype(option.getValue())>;
      if constexpr (std::is_same_v<T, bool>) {
        if (hasValue && !llvm::is_contained({"true", "false", "TRUE", "FALSE",
                                             "True", "False", "1", "0"},
                                            value))
          expected = "true or false";
      } else if constexpr (std::is_same_v<T, double>) {
        double d;
        if (!hasValue || value.getAsDouble(d))
          expected = "a number";
      } else if constexpr (std::is_same_v<T, int64_t>) {
        int64_t i;
        if (!hasValue || value.getAsInteger(10, i))
          expected = "an integer";
      } else {
        if (!hasValue || !parseStrategyOption(value)) {
          expected = "one of auto";
          for (const ::shardlin::StrategyInfo &info : ::shardlin::strategies())
            expected += std::string(", ") + info.name;
        }
      }
    };
    forEachOption(pass, check);
    if (!known)
      return errorHandler("lower-sharded-linear has no option '" + key +
                          "' (its options: " + names + ")");
    if (expected.empty())
      continue;
    std::string hint;
    if (value.contains(',') && value.contains('='))
      hint = "; a pass's options are separated by spaces, not commas, as in "
             "'--lower-sharded-linear=strategy=activations explain=true'";
    if (!hasValue)
      return errorHandler("lower-sharded-linear: option '" + key +
                          "' needs a value: " + expected);
    return errorHandler("lower-sharded-linear: invalid value '" + value +
                        "' for option '" + key + "': expected " + expected +
                        hint);
  }
  return success();
}

} // namespace mlir::shardlin::detail

#endif // SHARDLIN_LIB_DIALECT_SHARDLIN_TRANSFORMS_PASSOPTIONS_H
