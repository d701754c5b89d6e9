//===- Execute.cpp - Run a program in memory on W ranks -------------------===//

#include "shardlin/runtime/program/ProgramText.h"
#include "shardlin/runtime/exec/Execute.h"
#include "exec/Replicated.h"

#include <chrono>
#include <cstdio>
#include <cstring>

namespace shardlin::rt {

namespace {
/// Seconds since the last lap.
class Stopwatch {
public:
  double lap() {
    auto now = std::chrono::steady_clock::now();
    double seconds = std::chrono::duration<double>(now - last_).count();
    last_ = now;
    return seconds;
  }

private:
  std::chrono::steady_clock::time_point last_ =
      std::chrono::steady_clock::now();
};

/// What every rank must hold the same of: the program's 48-bit
/// fingerprint (SharedProgram::fingerprint) as three 16-bit parts, then the
/// plan option that changes the collectives (PlanOptions::overlapChunks,
/// plus 1). Each part t goes into the agreement as t and t^2. Summed over
/// W ranks, the sums equal W*t and W*t^2 for every part exactly when all
/// ranks hold the same t: any difference gives the sums a non-zero
/// variance, which every rank sees. All values stay exact in a double for
/// W up to 2^21.
class AgreedParts {
public:
  static constexpr size_t kProgramParts = 3;
  AgreedParts(uint64_t fingerprint, const PlanOptions &options) {
    for (size_t i = 0; i < kProgramParts; ++i)
      parts_.push_back(static_cast<double>((fingerprint >> (16 * i)) & 0xffff));
    parts_.push_back(static_cast<double>(options.overlapChunks + 1));
  }
  /// Only the program's parts (the replicas' agreement).
  explicit AgreedParts(uint64_t fingerprint) : AgreedParts(fingerprint, {}) {
    parts_.resize(kProgramParts);
  }
  std::vector<double> terms() const {
    std::vector<double> t;
    for (double p : parts_) {
      t.push_back(p);
      t.push_back(p * p);
    }
    return t;
  }
  /// The first part whose sums say that the ranks differ, or -1.
  int firstDiffering(const double *sums, int worldSize) const {
    for (size_t i = 0; i < parts_.size(); ++i)
      if (sums[2 * i] != worldSize * parts_[i] ||
          sums[2 * i + 1] != worldSize * parts_[i] * parts_[i])
        return static_cast<int>(i);
    return -1;
  }
  /// Why the ranks cannot run together if part `i` differs.
  static Status differs(int i, const char *ranks) {
    if (i < static_cast<int>(kProgramParts))
      return Status::invalidArgument(
          std::string("the ") + ranks +
          " do not all run the same program (its fingerprint differs "
          "between ranks); start every rank with the same program");
    return Status::invalidArgument(
        std::string("the ") + ranks +
        " were not all given the same overlap chunks (PlanOptions::"
        "overlapChunks, the tools' --overlap-chunks), which decide the "
        "pipelined blocks' collectives; give every rank the same");
  }

private:
  std::vector<double> parts_;
};

/// FNV-1a of the text form without its source locations: an instruction's
/// or argument's location is its line's tail after " loc "
/// (serializeProgram writes it last), skipped up to the end of the line.
uint64_t fingerprintOf(const std::string &text) {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&h](unsigned char c) {
    h ^= c;
    h *= 1099511628211ull;
  };
  static const char kLoc[] = " loc ";
  size_t line = 0;
  while (line < text.size()) {
    size_t end = text.find('\n', line);
    if (end == std::string::npos)
      end = text.size();
    size_t stop = end;
    if (text.compare(line, 6, "instr ") == 0 ||
        text.compare(line, 4, "arg ") == 0) {
      const size_t loc = text.find(kLoc, line);
      if (loc != std::string::npos && loc < end)
        stop = loc;
    }
    for (size_t i = line; i < stop; ++i)
      mix(static_cast<unsigned char>(text[i]));
    mix('\n');
    line = end + 1;
  }
  return h;
}

/// Checks the caller's buffer tables against the plan.
Status checkBuffers(const Plan &plan, const RankBuffers &buffers) {
  if (buffers.args.size() != plan.numArgs())
    return Status::invalidArgument(
        "the plan takes " + std::to_string(plan.numArgs()) +
        " argument buffer(s) but " + std::to_string(buffers.args.size()) +
        " were bound");
  if (buffers.results.size() != plan.numResults())
    return Status::invalidArgument(
        "the plan returns " + std::to_string(plan.numResults()) +
        " result(s) but " + std::to_string(buffers.results.size()) +
        " result buffer(s) were bound");
  return Status::ok();
}

/// What `after` counted beyond `before` (counters only grow between them:
/// nothing else runs on the rank's thread meanwhile).
CommStats statsSince(const CommStats &before, const CommStats &after) {
  CommStats d;
  d.bytesSent = after.bytesSent - before.bytesSent;
  d.calls = after.calls - before.calls;
  return d;
}

} // namespace

SharedProgram::SharedProgram(const Program &program)
    : SharedProgram(std::make_shared<const Program>(program)) {}

SharedProgram::SharedProgram(std::shared_ptr<const Program> program)
    : program_(std::move(program)),
      text_(std::make_shared<const std::string>(serializeProgram(*program_))),
      fingerprint_(fingerprintOf(*text_)) {}

Status RankRun::execute() {
  ++executions_;
  last_ = CommStats();
  SHARDLIN_RETURN_IF_ERROR(checkBuffers(plan_, buffers_));
  if (!executor_ && !lane_ && plan_.pipelinesAny())
    SHARDLIN_RETURN_IF_ERROR(device_.createCommLane(comm_, lane_));
  const CommStats before = comm_.stats();
  Status ran = executor_ ? executor_->run(buffers_)
                         : plan_.run(comm_, device_.gemm(), device_.localOps(),
                                     buffers_.args, buffers_.results,
                                     lane_.get());
  last_ = statsSince(before, comm_.stats());
  total_.bytesSent += last_.bytesSent;
  total_.calls += last_.calls;
  return ran;
}

RankResult runRank(const SharedProgram &shared, Communicator &comm,
                   RankDevice &device, const RankCallbacks &callbacks,
                   Communicator *agree, const GridPlace *grid) {
  const Program &program = shared.program();
  Communicator &agreeOn = agree ? *agree : comm;
  RankResult result;
  result.rank = comm.rank();
  struct Release {
    const RankCallbacks &callbacks;
    int rank;
    ~Release() {
      if (callbacks.release)
        callbacks.release(rank);
    }
  } release{callbacks, result.rank};
  auto fail = [&](Status s) {
    result.status = s.withContext("rank " + std::to_string(result.rank));
    return result;
  };

  // Everything that can fail because of the inputs happens before the first
  // collective of the program: building the plan, binding (on a device, its
  // memory is allocated and filled here too, so that running out of it is
  // agreed on like a bad input).
  RankResult::Phases &seconds = result.seconds;
  Stopwatch clock;
  Status prepared = device.prepare(comm);

  // Every agreement also checks that every rank runs the same program:
  // ranks started with different programs (e.g. an MPMD mpirun) would
  // otherwise issue different collectives, which MPI does not detect.
  // `values` (summed over ranks) follow the flag and the fingerprint.
  AgreedParts print(shared.fingerprint(), callbacks.planOptions);
  // Each rank's own flag follows the fingerprint, so that the others name
  // the ranks that failed.
  const int w = comm.worldSize();
  auto agreeOnce = [&](const Status &ok, std::vector<double> &values,
                       const char *stopped) -> Status {
    std::vector<double> agreement = print.terms();
    agreement.insert(agreement.begin(), ok ? 0.0 : 1.0);
    const size_t flags = agreement.size();
    agreement.resize(flags + size_t(w), 0.0);
    agreement[flags + size_t(result.rank)] = ok ? 0.0 : 1.0;
    const size_t head = agreement.size();
    agreement.insert(agreement.end(), values.begin(), values.end());
    Status reduced = agreeOn.allReduce(agreement.data(), agreement.data(),
                                       static_cast<int64_t>(agreement.size()),
                                       DType::F64);
    // A rank that could not prepare reports that, even if the agreement
    // then failed too (the others gave up waiting for it).
    if (!reduced)
      return ok ? reduced : ok;
    if (int part = print.firstDiffering(agreement.data() + 1, w); part >= 0)
      return AgreedParts::differs(part, "ranks");
    if (!ok)
      return ok;
    if (agreement[0] > 0) {
      std::string failed;
      for (int r = 0; r < w; ++r)
        if (agreement[flags + size_t(r)] > 0)
          failed += (failed.empty() ? "" : ", ") + std::to_string(r);
      return Status::aborted(std::string(stopped) + " (rank " + failed +
                             "; its own error says why)");
    }
    values.assign(agreement.begin() + head, agreement.end());
    return Status::ok();
  };
  // On a grid, the outcome of the replica's agreement, agreed on by every
  // rank of every replica: a failed replica stops the others too. The
  // replicas' programs are compared there too (the gradients they average
  // must be the same program's).
  AgreedParts worldPrint(shared.fingerprint());
  auto agreeOnGrid = [&](const Status &agreed) -> Status {
    if (!grid || !grid->world)
      return agreed;
    std::vector<double> sums = worldPrint.terms();
    sums.insert(sums.begin(), agreed ? 0.0 : 1.0);
    Status reduced = grid->world->allReduce(
        sums.data(), sums.data(), static_cast<int64_t>(sums.size()),
        DType::F64);
    if (!agreed)
      return agreed;
    if (!reduced)
      return reduced.withContext("agreeing with the other replicas");
    if (worldPrint.firstDiffering(sums.data() + 1,
                                  grid->world->worldSize()) >= 0)
      return AgreedParts::differs(0, "replicas");
    if (sums[0] > 0)
      return Status::aborted("stopped because a rank of another replica "
                             "failed (its own error says why)");
    return Status::ok();
  };
  // An agreement closes the binding phase: the time until it counts as
  // binding, its own as agreeing. `then` checks what the ranks exchanged
  // (the same on every rank, so every rank of the replica decides the
  // same), before the replicas agree.
  auto agreeAll = [&](const Status &ok, std::vector<double> &values,
                      const char *stopped,
                      const std::function<Status()> &then = nullptr) {
    seconds.bind += clock.lap();
    Status agreed = agreeOnce(ok, values, stopped);
    if (agreed && then)
      agreed = then();
    agreed = agreeOnGrid(agreed);
    seconds.agree += clock.lap();
    return agreed;
  };

  // Dynamic argument dims: every rank's sizes, exchanged before any plan is
  // built (a collective that stacks rows needs every rank's), in the slots
  // of one all_reduce (sizes are exact in a double up to 2^53).
  DynamicSizes sizes;
  const size_t numDynamic = dynamicArgDims(program).size();
  if (numDynamic > 0) {
    std::vector<int64_t> mine;
    if (prepared && !callbacks.argShapes)
      prepared = Status::invalidArgument(
          "the program '" + program.name +
          "' has dynamic argument dims, but the caller gave no argument "
          "shapes (RankCallbacks::argShapes)");
    if (prepared) {
      std::vector<std::vector<int64_t>> shapes;
      std::vector<std::string> names;
      prepared = callbacks.argShapes(result.rank, shapes, names);
      if (prepared)
        prepared = dynamicSizesOf(program, shapes, mine, names);
    }
    std::vector<double> slots(static_cast<size_t>(w) * numDynamic, 0.0);
    for (size_t i = 0; prepared && i < numDynamic; ++i)
      slots[result.rank * numDynamic + i] = static_cast<double>(mine[i]);
    Status exchanged = agreeAll(
        prepared, slots,
        "stopped because another rank failed to give the shapes of its "
        "inputs",
        [&] {
          sizes.assign(w, std::vector<int64_t>(numDynamic));
          for (int p = 0; p < w; ++p)
            for (size_t i = 0; i < numDynamic; ++i)
              sizes[p][i] = static_cast<int64_t>(slots[p * numDynamic + i]);
          return callbacks.checkReplicated
                     ? checkReplicatedSizes(program, sizes)
                     : Status::ok();
        });
    if (!exchanged)
      return fail(exchanged);
  }

  // The plan: from the cache when its sizes were seen before (host memory
  // only: a device's memory does not outlive the run), given back at the
  // end whatever the outcome.
  std::unique_ptr<Plan> plan;
  PlanCache *cache =
      device.kind() == DeviceKind::Host ? callbacks.plans : nullptr;
  PlanCache::Key key;
  struct GiveBack {
    PlanCache *cache;
    PlanCache::Key &key;
    std::unique_ptr<Plan> &plan;
    ~GiveBack() {
      if (cache && plan)
        cache->put(std::move(key), std::move(plan));
    }
  } giveBack{cache, key, plan};
  RankBuffers buffers;
  if (prepared) {
    if (cache) {
      key = PlanCache::keyOf(shared, result.rank, comm.worldSize(), sizes,
                             callbacks.planOptions);
      prepared = cache->take(shared, key, device.allocator(), plan,
                             result.planReused);
    } else {
      prepared = Plan::build(shared.shared(), result.rank, comm.worldSize(),
                             device.allocator(), plan, sizes,
                             callbacks.planOptions);
    }
  }
  seconds.plan = clock.lap();
  if (prepared)
    result.pipelines = plan->pipelines();
  if (prepared && callbacks.bind)
    prepared = callbacks.bind(*plan, device, buffers);
  if (callbacks.loadedBytes)
    result.bytesLoaded = callbacks.loadedBytes(result.rank);
  if (prepared)
    prepared = checkBuffers(*plan, buffers);
  // A compiled program's executor, made before the agreement so that a
  // failure to make it is agreed on like a bad input. It is destroyed
  // before this function returns, while comm and device are alive.
  std::unique_ptr<RankExecutor> executor;
  if (prepared && !program.compiled.empty()) {
    if (!callbacks.executor)
      prepared = Status::invalidArgument(
          "the program '" + program.name + "' is compiled code (" +
          program.compiled +
          "): it runs only where that code is, through its executor "
          "(RankCallbacks::executor; shardlin-run --jit), not from a "
          "program file");
    else
      prepared = callbacks.executor(*plan, comm, device, executor);
    if (prepared && !executor)
      prepared = Status::internal("the executor callback made no executor");
  }
  // The replicated arguments' hashes ride in the agreement: rank r's in
  // its own slot of each (Replicated.h).
  const std::vector<size_t> replicated =
      callbacks.checkReplicated ? replicatedArgs(program) : std::vector<size_t>();
  std::vector<double> hashes(replicated.size() * size_t(w), 0.0);
  if (prepared && !replicated.empty()) {
    seconds.bind += clock.lap();
    for (size_t k = 0; prepared && k < replicated.size(); ++k) {
      const size_t arg = replicated[k];
      uint64_t hash = 0;
      prepared = hashArgumentValue(device, buffers.args[arg],
                                   plan->argType(arg), plan->argShape(arg),
                                   hash)
                     .withContext("hashing replicated " +
                                  describeArgument(program, arg));
      hashes[size_t(result.rank) * replicated.size() + k] =
          static_cast<double>(hash);
    }
    seconds.check = clock.lap();
  }
  Status agreed = agreeAll(
      prepared, hashes,
      "stopped because another rank failed to prepare its inputs", [&] {
        return checkReplicatedHashes(program, replicated, hashes, w);
      });
  if (!agreed)
    return fail(agreed);

  comm.resetStats();
  RankRun run(*plan, comm, device, buffers, executor.get(),
              grid ? grid->replicas : nullptr);
  Status ran = callbacks.run ? callbacks.run(run) : run.execute();
  result.stats = run.stats();
  seconds.run = clock.lap();
  if (!ran)
    return fail(ran);
  if (callbacks.finish) {
    Status finished = callbacks.finish(*plan, device, buffers, agreeOn);
    seconds.finish = clock.lap();
    if (!finished)
      return fail(finished);
  }
  return result;
}

std::vector<std::string> describePipelines(const Program &program,
                                           const RankResult &rank) {
  std::vector<std::string> lines;
  for (const PipelineInfo &p : rank.pipelines) {
    const Instr &gather = program.instrs[p.instr];
    lines.push_back(
        (gather.location.empty() ? std::string() : gather.location + ": ") +
        "block from instruction " + std::to_string(p.instr) +
        (p.chunks > 0 ? " to " + std::to_string(p.end) + " pipelined in " +
                            std::to_string(p.chunks) + " row chunks"
                      : " runs in sequence: " + p.why));
  }
  return lines;
}

std::string describeRank(const RankResult &rank, const char *bindName,
                         const char *finishName) {
  const RankResult::Phases &t = rank.seconds;
  char check[48] = "";
  if (t.check > 0)
    std::snprintf(check, sizeof check, "check replicated %.3f ms, ",
                  t.check * 1e3);
  char buf[384];
  std::snprintf(buf, sizeof buf,
                "rank %d: plan %.3f ms%s, %s %.3f ms, %sagree %.3f ms, run "
                "%.3f ms, %s %.3f ms; sent %llu bytes in %llu collectives",
                rank.rank, t.plan * 1e3, rank.planReused ? " (reused)" : "",
                bindName, t.bind * 1e3, check, t.agree * 1e3,
                t.run * 1e3, finishName, t.finish * 1e3,
                static_cast<unsigned long long>(rank.stats.bytesSent),
                static_cast<unsigned long long>(rank.stats.calls));
  std::string line = buf;
  if (rank.bytesLoaded)
    line += "; read " + std::to_string(rank.bytesLoaded) +
            " bytes of input files";
  if (!rank.status)
    line += "; failed: " + rank.status.message();
  return line;
}

Status rootCause(const std::vector<RankResult> &ranks) {
  // A rank's own error first; a timeout is most often another rank's
  // fault seen from outside ("timed out ... waiting for rank 1"); then
  // the ranks that stopped because of others.
  for (StatusCode skip : {StatusCode::DeadlineExceeded, StatusCode::Ok})
    for (const RankResult &r : ranks)
      if (!r.status && r.status.code() != StatusCode::Aborted &&
          r.status.code() != skip)
        return r.status;
  for (const RankResult &r : ranks)
    if (!r.status)
      return r.status;
  return Status::ok();
}

Status checkWorldSizeRange(int worldSize) {
  if (worldSize < 1 || worldSize > kMaxWorldSize)
    return Status::invalidArgument("the world size must be in [1, " +
                                   std::to_string(kMaxWorldSize) + "], got " +
                                   std::to_string(worldSize));
  return Status::ok();
}

Status checkRunOptions(const RunOptions &options) {
  if (options.worldSize < 0 || options.worldSize > kMaxWorldSize)
    return Status::invalidArgument(
               "the requested world size must be in [1, " +
               std::to_string(kMaxWorldSize) +
               "] (or 0: from the program), got " +
               std::to_string(options.worldSize))
        .withSubject("worldSize");
  if (options.device < -1)
    return Status::invalidArgument(
               "the device must be a device number (>= 0) or -1 (any), got " +
               std::to_string(options.device))
        .withSubject("device");
  if (options.replicas < 1 || options.replicas > kMaxWorldSize)
    return Status::invalidArgument(
               "a grid needs between 1 and " + std::to_string(kMaxWorldSize) +
               " replicas, not " + std::to_string(options.replicas))
        .withSubject("replicas");
  if (options.blasThreads < 0)
    return Status::invalidArgument(
               "the BLAS thread count must be >= 0 (0: cores / ranks per "
               "host), got " +
               std::to_string(options.blasThreads))
        .withSubject("blasThreads");
  if (!(options.comm.timeoutSeconds > 0)) {
    char value[32];
    std::snprintf(value, sizeof value, "%g", options.comm.timeoutSeconds);
    return Status::invalidArgument(
               std::string("the timeout must be a positive number of seconds, "
                           "got ") +
               value)
        .withSubject("timeout");
  }
  return Status::ok();
}

Status checkWorldSize(const Program &program, int requested) {
  if (requested != 0 && program.worldSize != 0 &&
      program.worldSize != requested)
    return Status::invalidArgument(
               "the requested world size " + std::to_string(requested) +
               " does not match the " + std::to_string(program.worldSize) +
               " placements of the program's sharded values")
        .withSubject("worldSize");
  return Status::ok();
}

Status resolveWorldSize(const Program &program, int requested, int launched,
                        int &worldSize) {
  if (launched > 0) {
    if (requested != 0 && requested != launched)
      return Status::invalidArgument(
                 "the requested world size " + std::to_string(requested) +
                 " does not match the MPI world size " +
                 std::to_string(launched))
          .withSubject("worldSize");
    if (program.worldSize != 0 && program.worldSize != launched)
      return Status::invalidArgument(
          "the MPI world size " + std::to_string(launched) +
          " does not match the " + std::to_string(program.worldSize) +
          " placements of the program's sharded values");
    worldSize = launched;
    return Status::ok();
  }
  worldSize = requested;
  if (worldSize == 0)
    worldSize = program.worldSize == 0 ? 1 : static_cast<int>(program.worldSize);
  SHARDLIN_RETURN_IF_ERROR(
      checkWorldSizeRange(worldSize).withSubject("worldSize"));
  return checkWorldSize(program, worldSize);
}

} // namespace shardlin::rt
