//===- Flags.cpp - The run flags of the tools, in one table ---------------===//

#include "shardlin/runtime/tooling/Flags.h"
#include "shardlin/runtime/backends/Registry.h"
#include "shardlin/runtime/program/Program.h"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>

namespace shardlin::rt {

namespace {

Status badValue(std::string_view flag, std::string_view expected,
                const std::string &value) {
  return Status::invalidArgument("--" + std::string(flag) + " must be " +
                                 std::string(expected) + ", got '" + value +
                                 "'");
}

/// An integer: digits, perhaps after a '-', in int's range. Whether it is
/// in the field's range is checkRunOptions'.
bool parseInt(const std::string &text, int &out) {
  const size_t digits = !text.empty() && text[0] == '-' ? 1 : 0;
  if (text.size() == digits || text.size() > 12)
    return false;
  for (size_t i = digits; i < text.size(); ++i)
    if (text[i] < '0' || text[i] > '9')
      return false;
  const long long v = std::strtoll(text.c_str(), nullptr, 10);
  if (v < INT_MIN || v > INT_MAX)
    return false;
  out = static_cast<int>(v);
  return true;
}

bool parseNumber(const std::string &text, double &out) {
  char *end = nullptr;
  out = std::strtod(text.c_str(), &end);
  return !text.empty() && end && *end == '\0';
}

std::string showNumber(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}

/// A table entry under construction, so that each entry names its parts.
struct Entry {
  RunFlag flag;

  Entry(std::string_view name, RunFlagKind kind, std::string_view valueName,
        std::string_view help, std::string defaultText = {}) {
    flag.name = name;
    flag.kind = kind;
    flag.valueName = valueName;
    flag.help = help;
    flag.defaultText = std::move(defaultText);
  }
  /// An int field of RunOptions; a value that is no integer is not
  /// `expected`.
  Entry &&setsInt(int RunOptions::*field, std::string_view expected) && {
    const std::string_view name = flag.name;
    flag.set = [=](RunConfig &c, const std::string &v) {
      return parseInt(v, c.*field) ? Status::ok() : badValue(name, expected, v);
    };
    flag.show = [=](const RunOptions &o) { return std::to_string(o.*field); };
    return std::move(*this);
  }
  /// A bool field of RunConfig (or of RunOptions): true/1 or false/0.
  Entry &&setsBool(bool RunConfig::*field) && {
    const std::string_view name = flag.name;
    flag.set = [=](RunConfig &c, const std::string &v) {
      if (v != "true" && v != "1" && v != "false" && v != "0")
        return badValue(name, "true or false", v);
      c.*field = v == "true" || v == "1";
      return Status::ok();
    };
    return std::move(*this);
  }
  Entry &&sets(decltype(RunFlag::set) set) && {
    flag.set = std::move(set);
    return std::move(*this);
  }
  /// The runtime's statuses about `subject` are about this flag, whose
  /// value `show` writes (setsInt's, if it is null).
  Entry &&answersFor(std::string_view subject,
                     decltype(RunFlag::show) show = nullptr) && {
    flag.subject = subject;
    if (show)
      flag.show = std::move(show);
    return std::move(*this);
  }
  Entry &&notInContext(std::string_view why) && {
    flag.notInContext = why;
    return std::move(*this);
  }
  RunFlag example(std::string_view value) && {
    flag.example = value;
    return std::move(flag);
  }
};

/// A flag given once per value, appended to a list of paths.
Entry listFlag(std::string_view name, std::string_view help,
               std::vector<std::string> RunConfig::*field) {
  return Entry(name, RunFlagKind::List, "PATH", help)
      .sets([=](RunConfig &c, const std::string &v) {
        (c.*field).push_back(v);
        return Status::ok();
      });
}

// ADDING A RUN FLAG is this one edit: an entry below, in name order (plus
// the RunConfig field it sets, if that is new). shardlin-run and
// shardlin-exec then parse it and print its help, and shardlin_options_set
// takes it, or refuses it with its notInContext reason (a flag that a
// context takes also needs its shardlin_options field: Runtime.h says how
// that struct grows). FlagsTest.cpp checks that the three agree.
std::vector<RunFlag> makeTable() {
  std::vector<RunFlag> flags;
  flags.push_back(
      listFlag("arg",
               "One .npy per entry argument, in order, or "
               "FILE.safetensors:NAME (the tensor NAME of a safetensors "
               "file); {rank} is replaced by the rank",
               &RunConfig::argPaths)
          .notInContext("a context's ops take their operands as views "
                        "(shardlin_memref), not files")
          .example("x.{rank}.npy"));
  flags.push_back(
      Entry("backend", RunFlagKind::Value, "NAME",
            "The backend that runs the ranks", "default: threads")
          .sets([](RunConfig &c, const std::string &v) {
            c.backend = v;
            return Status::ok();
          })
          .answersFor("backend", [](const RunOptions &o) { return o.backend; })
          .notInContext("a context's backend is shardlin_context_create's "
                        "`backend` argument")
          .example("threads"));
  flags.push_back(
      Entry("blas-threads", RunFlagKind::Value, "N",
            "OpenBLAS threads per rank", "default 0: cores / ranks per host")
          .setsInt(&RunOptions::blasThreads, "a non-negative integer")
          .answersFor("blasThreads")
          .example("1"));
  flags.push_back(
      Entry("check-replicated", RunFlagKind::Bool, "",
            "Before running, check that every argument the program declares "
            "replicated (an upstream module's unsplit argument) holds the "
            "same shape and values on every rank; =false skips the check",
            "default: true")
          .setsBool(&RunConfig::checkReplicated)
          .notInContext("a context runs one op per call on views the "
                        "caller passes; it binds no program's arguments")
          .example("false"));
  flags.push_back(
      Entry("device", RunFlagKind::Value, "N",
            "GPU for the GPU backends (cuda-local: the shared one, default "
            "0; nccl: under mpirun this process's, default the node-local "
            "rank, else the first of W)")
          .setsInt(&RunOptions::device, "a device number (>= 0)")
          .answersFor("device")
          .notInContext("the C ABI's contexts run on the host (its GPU "
                        "backends are not available)")
          .example("0"));
  flags.push_back(
      listFlag("out",
               "One .npy per result, or FILE.safetensors:NAME (results "
               "naming one file go into it together); {rank} is replaced by "
               "the rank (without it, rank 0 writes the file)",
               &RunConfig::outPaths)
          .notInContext("a context's ops write their results to views "
                        "(shardlin_memref), not files")
          .example("y.{rank}.npy"));
  flags.push_back(
      Entry("overlap-chunks", RunFlagKind::Value, "N",
            "Run each fused block in N row chunks, their collectives "
            "overlapped with the GEMMs (0 or 1: in sequence)",
            "default: as the program's all_gathers say, `overlap N`")
          .sets([](RunConfig &c, const std::string &v) {
            int n = 0;
            if (!parseInt(v, n) || n < 0 || n > kMaxOverlapChunks)
              return badValue("overlap-chunks",
                              "an integer from 0 to " +
                                  std::to_string(kMaxOverlapChunks),
                              v);
            c.plan.overlapChunks = n;
            return Status::ok();
          })
          .notInContext("a context runs one op per call; pipelining a fused "
                        "block is the plan executor's")
          .example("2"));
  flags.push_back(
      Entry("params", RunFlagKind::Value, "FILE.safetensors",
            "The entry's parameters (its arguments marked "
            "shardlin.parameter, from --shardlin-externalize-parameters), "
            "each read from the tensor of its name in this file as "
            "--arg=FILE.safetensors:NAME would (a rank reads only its chunk "
            "of a split one); --arg then lists only the other arguments; "
            "{rank} is replaced by the rank")
          .sets([](RunConfig &c, const std::string &v) {
            if (v.empty())
              return badValue("params", "a .safetensors file", v);
            c.paramsPath = v;
            return Status::ok();
          })
          .notInContext("a context binds no program's arguments; "
                        "shardlin_parameter_read reads a rank's chunk of a "
                        "parameter into a view")
          .example("model.safetensors"));
  flags.push_back(
      Entry("timeout", RunFlagKind::Value, "SECONDS",
            "Seconds before a collective that has not completed fails on "
            "every rank",
            // The runtime's default, whatever it becomes.
            "default: " + showNumber(CommOptions().timeoutSeconds))
          .sets([](RunConfig &c, const std::string &v) {
            return parseNumber(v, c.comm.timeoutSeconds)
                       ? Status::ok()
                       : badValue("timeout", "a positive number", v);
          })
          .answersFor("timeout",
                      [](const RunOptions &o) {
                        return showNumber(o.comm.timeoutSeconds);
                      })
          .example("60"));
  flags.push_back(
      Entry("verbose", RunFlagKind::Bool, "",
            "Print per rank the phases' times, traffic and bytes of input "
            "files read, and the strategy each GEMM was lowered with "
            "(shardlin-run: per linear, every strategy's bytes and estimate, "
            "the lowering's explain=true)")
          .setsBool(&RunConfig::verbose)
          .notInContext("a context prints nothing "
                        "(shardlin_context_bytes_sent and "
                        "shardlin_context_collective_calls count its "
                        "traffic)")
          .example("true"));
  flags.push_back(
      Entry("world-size", RunFlagKind::Value, "W",
            "Number of ranks; optional (default: the placements' W, under "
            "mpirun the MPI world size, else 1); must match the placements")
          .setsInt(&RunOptions::worldSize, "a positive integer")
          .answersFor("worldSize")
          .notInContext("a context's world size is "
                        "shardlin_context_create's `world_size` (or the MPI "
                        "job's)")
          .example("2"));
  return flags;
}

const std::vector<RunFlag> &table() {
  static const std::vector<RunFlag> flags = makeTable();
  return flags;
}

} // namespace

const std::vector<RunFlag> &runFlags() { return table(); }

const RunFlag *findRunFlag(std::string_view name) {
  for (const RunFlag &flag : table())
    if (flag.name == name)
      return &flag;
  return nullptr;
}

Status applyRunFlag(const RunFlag &flag, const std::string &value,
                    RunConfig &config) {
  return flag.set(config, value);
}

Status takeRunFlags(int &argc, char **argv, RunConfig &config,
                    const std::set<std::string_view> &skip) {
  int kept = 1;
  int i = 1;
  for (; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--")
      break; // the rest is not options: the tool's parser says what it is
    std::string_view body = arg;
    if (body.substr(0, 2) == "--")
      body.remove_prefix(2);
    else if (body.size() > 1 && body[0] == '-')
      body.remove_prefix(1);
    else
      body = {};
    const size_t eq = body.find('=');
    const RunFlag *flag = findRunFlag(body.substr(0, eq));
    if (body.empty() || !flag || skip.count(flag->name)) {
      argv[kept++] = argv[i];
      continue;
    }
    std::string value;
    if (eq != std::string_view::npos)
      value = std::string(body.substr(eq + 1));
    else if (flag->kind == RunFlagKind::Bool)
      value = "true";
    else if (i + 1 < argc)
      value = argv[++i];
    else
      return Status::invalidArgument(
          "--" + std::string(flag->name) + " needs a value (--" +
          std::string(flag->name) + "=" + std::string(flag->valueName) + ")");
    SHARDLIN_RETURN_IF_ERROR(applyRunFlag(*flag, value, config));
  }
  for (; i < argc; ++i)
    argv[kept++] = argv[i];
  argc = kept;
  argv[kept] = nullptr;
  return Status::ok();
}

std::string runFlagsHelp(const std::set<std::string_view> &elsewhere,
                         std::string_view elsewhereNote) {
  auto spelled = [](const RunFlag &f) {
    return "--" + std::string(f.name) +
           (f.kind == RunFlagKind::Bool
                ? std::string()
                : "=<" + std::string(f.valueName) + ">");
  };
  size_t width = 0;
  for (const RunFlag &f : table())
    width = std::max(width, spelled(f).size());
  std::string text;
  for (const RunFlag &f : table()) {
    const std::string name = spelled(f);
    text += "  " + name + std::string(width - name.size() + 2, ' ') + "- ";
    if (elsewhere.count(f.name)) {
      text += std::string(elsewhereNote) + "\n";
      continue;
    }
    text += std::string(f.help);
    if (f.kind == RunFlagKind::List)
      text += "; once per value";
    if (!f.defaultText.empty())
      text += " (" + f.defaultText + ")";
    // The backends are the registry's, known only at run time.
    if (f.name == "backend")
      text += ": " + describeBackends();
    text += "\n";
  }
  return text;
}

std::string flagOf(const Status &status, const RunOptions &options) {
  const std::string &s = status.subject();
  // On a grid the world size is --grid's TP (shardlin-run sets both); --grid
  // is the compiler's flag, not a run flag (shardlin-exec runs no grid).
  if (s == "replicas" || (s == "worldSize" && options.replicas > 1))
    return "--grid=" + std::to_string(options.replicas) + "x" +
           std::to_string(options.worldSize);
  for (const RunFlag &flag : table())
    if (!s.empty() && flag.subject == s && flag.show)
      return "--" + std::string(flag.name) + "=" + flag.show(options);
  return "";
}

std::string flagMessage(const Status &status, const RunOptions &options) {
  const std::string flag = flagOf(status, options);
  return flag.empty() ? status.message() : flag + ": " + status.message();
}

Status checkRunFlags(const RunOptions &options) {
  // The values' ranges first: they hold whatever the backend, which may be
  // one this runtime was built without.
  SHARDLIN_RETURN_IF_ERROR(checkRunOptions(options));
  const BackendInfo *backend = nullptr;
  return lookupBackend(options.backend, backend).withSubject("backend");
}

} // namespace shardlin::rt
