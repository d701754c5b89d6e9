//===- Flags.h - The run flags of the tools, in one table -------*- C++ -*-===//
//
// shardlin-run and shardlin-exec take the same run options as flags
// (--world-size, --backend, --device, --arg, --out, --timeout,
// --blas-threads, --overlap-chunks, --verbose), and the C ABI's
// shardlin_options_set takes those a context has. All three read one table,
// runFlags(): each entry has the flag's name, how its value is written, its
// help text and default, the RunConfig field it sets (and how that field's
// value is parsed), the Status subject it answers for (so that a runtime
// error about `worldSize` names --world-size=3), and why a context has no
// use for it where it has none. The tools parse their command lines with
// takeRunFlags and print runFlagsHelp(); nothing else names a run flag.
//
// The value's syntax is checked here; its range is the runtime's
// (checkRunOptions, through checkRunFlags), so that a flag and the API field
// it sets accept the same values and say so in the same words.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_RUNTIME_TOOLING_FLAGS_H
#define SHARDLIN_RUNTIME_TOOLING_FLAGS_H

#include "shardlin/runtime/base/Status.h"
#include "shardlin/runtime/exec/Execute.h"
#include "shardlin/runtime/tooling/Runner.h"

#include <functional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace shardlin::rt {

/// How a run flag's value is written on a command line.
enum class RunFlagKind {
  /// `--name` alone (true), or `--name=true|false|1|0`.
  Bool,
  /// `--name=VALUE` or `--name VALUE`, once (a later one wins).
  Value,
  /// `--name=VALUE` or `--name VALUE`, as often as needed, in order.
  List,
};

/// One run flag: an entry of runFlags().
struct RunFlag {
  /// Without the dashes: "world-size".
  std::string_view name;
  RunFlagKind kind = RunFlagKind::Value;
  /// What the value is called in the help ("W", "SECONDS"); empty for Bool.
  std::string_view valueName;
  /// The help text: one sentence or more, without the default.
  std::string_view help;
  /// The default as the help states it ("default: 300"); empty: none.
  std::string defaultText;
  /// Parses `value` into the RunConfig field the flag sets. A value that is
  /// not of the flag's type is InvalidArgument, "--NAME must be ..., got
  /// 'VALUE'"; the range of a RunOptions field is checkRunFlags'.
  std::function<Status(RunConfig &config, const std::string &value)> set;
  /// The subject of the runtime's statuses about the field the flag sets
  /// (Status::subject: "worldSize"); empty when none.
  std::string_view subject;
  /// The field's value as the flag writes it ("3"), for flagOf; set for
  /// every flag with a subject.
  std::function<std::string(const RunOptions &options)> show;
  /// Why a context of the C ABI (shardlin_options_set) takes no such option;
  /// empty when shardlin_options has its field.
  std::string_view notInContext;
  /// A value the flag takes, for the tests that check that every tool and
  /// the C ABI take every flag (FlagsTest.cpp).
  std::string_view example;
};

/// The run flags, sorted by name.
const std::vector<RunFlag> &runFlags();

/// The entry named `name` (without dashes), or null.
const RunFlag *findRunFlag(std::string_view name);

/// Sets `flag`'s field of `config` from `value` as the command line would
/// (a Bool's value may be "true", "false", "1" or "0").
Status applyRunFlag(const RunFlag &flag, const std::string &value,
                    RunConfig &config);

/// Takes the run flags out of argv[1..argc) and applies them to `config`,
/// leaving the other arguments in order (argc and argv updated, argv[argc]
/// null) for the tool's own parser: `--NAME=VALUE`, `--NAME VALUE` and
/// `--NAME` for a Bool, with one or two dashes; nothing after `--`. Names
/// in `skip` are left in argv (shardlin-run's lowering owns
/// --overlap-chunks). Stops at the first bad value.
Status takeRunFlags(int &argc, char **argv, RunConfig &config,
                    const std::set<std::string_view> &skip = {});

/// The help of the run flags, one per line, as llvm::cl prints options:
/// "  --world-size=<W>  - Number of ranks; ... (default: ...)". A flag in
/// `elsewhere` gets `elsewhereNote` instead of its help.
std::string runFlagsHelp(const std::set<std::string_view> &elsewhere = {},
                         std::string_view elsewhereNote = {});

/// The flag and value `options` had for the subject of `status`, e.g.
/// "--world-size=3"; "" for a status without a subject.
std::string flagOf(const Status &status, const RunOptions &options);

/// The message of `status` as a tool prints it: "--world-size=3: the
/// requested world size 3 does not match ..." when the status is about one
/// of the run options, else its message.
std::string flagMessage(const Status &status, const RunOptions &options);

/// The run options' checks a tool makes right after parsing its flags,
/// before any per-rank work (checkRunOptions, and the backend's name): a bad
/// value fails at once, however large, with the flag named.
Status checkRunFlags(const RunOptions &options);

} // namespace shardlin::rt

#endif // SHARDLIN_RUNTIME_TOOLING_FLAGS_H
