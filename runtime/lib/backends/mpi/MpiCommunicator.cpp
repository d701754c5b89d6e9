//===- MpiCommunicator.cpp - One rank per MPI process ---------------------===//
//
// Each collective is issued as MPI's nonblocking variant and completed by
// polling MPI_Test with a backoff, because MPI has no timeout of its own: a
// rank that never joins would otherwise hang the others forever.
//
// f16/bf16 move as 2-byte MPI_UINT16_T. Their reductions are staged through
// f32 (convert, MPI_SUM on MPI_FLOAT, convert back) rather than reduced on the
// wire with a user-defined MPI_Op over 2-byte elements: MPI combines partial
// results pairwise, so an op whose inputs and output are 2-byte values must
// round to f16/bf16 after every combination, W - 1 roundings in all, while
// Communicator.h promises "summed in f32 and rounded once". The price is twice
// the bytes on the wire for those two types; CommStats still counts the
// payload at its own element size, as its rules are algorithm independent.
//
// MPI counts and displacements are `int`: every one is checked, and a clear
// error returned, before anything is issued.
//
//===----------------------------------------------------------------------===//

#include "shardlin/runtime/backends/Mpi.h"

#include "comm/CommChecks.h"
#include "backends/LaunchEnv.h"

// OMPI_SKIP_MPICXX / MPICH_SKIP_MPICXX come with MPI::MPI_C
// (runtime/CMakeLists.txt): the C API only.
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <vector>

namespace shardlin::rt {
namespace {

using detail::formatSeconds;
using detail::offsetBytes;

std::string mpiErrorText(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(code, text, &len) != MPI_SUCCESS)
    return "MPI error code " + std::to_string(code);
  return std::string(text, len);
}

MPI_Datatype wireType(DType t) {
  switch (t) {
  case DType::F16:
  case DType::BF16:
    return MPI_UINT16_T;
  case DType::F32:
    return MPI_FLOAT;
  case DType::F64:
    return MPI_DOUBLE;
  }
  return MPI_DATATYPE_NULL;
}

bool isHalfType(DType t) { return t == DType::F16 || t == DType::BF16; }

/// Everything a nonblocking collective reads or writes besides the caller's
/// buffers: MPI may use it until the request completes.
struct InFlight {
  MPI_Request request = MPI_REQUEST_NULL;
  std::vector<int> counts, displs, counts2, displs2;
  std::unique_ptr<unsigned char[]> packed;
  std::unique_ptr<float[]> f32Send, f32Recv;
  /// True if MPI reads or writes the caller's buffers (every collective but
  /// a barrier). Once such a collective has timed out, its caller has been
  /// told it failed and may free those buffers, while a late peer can still
  /// make MPI write them: after that, nothing may drive MPI's progress (any
  /// MPI call that communicates), so the job must end with MPI_Abort.
  bool userBuffers = true;
};

/// True if any of `states` uses its caller's buffers (see InFlight).
bool anyUserBuffers(const std::vector<std::unique_ptr<InFlight>> &states) {
  for (const auto &state : states)
    if (state->userBuffers)
      return true;
  return false;
}

/// Collectives of this process that timed out and were still pending when
/// their communicator went away. MPI owns them until they complete (a
/// pending collective request may be neither cancelled nor freed), and
/// MPI_Finalize would wait for them forever if a peer never joins: the
/// MpiSession checks this list and ends the job with MPI_Abort instead
/// (~MpiSession). Process-wide because MPI's state is. Never destroyed: MPI
/// may write the staging buffers until the process ends.
struct PendingCollectives {
  std::mutex mutex;
  std::vector<std::unique_ptr<InFlight>> states;
};
PendingCollectives &pendingCollectives() {
  static PendingCollectives *pending = new PendingCollectives();
  return *pending;
}

/// Tests `state`'s request once; true if it is complete (or MPI failed it).
bool completedNow(InFlight &state) {
  if (state.request == MPI_REQUEST_NULL)
    return true;
  int done = 0;
  if (MPI_Test(&state.request, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
    return true;
  return done != 0;
}

template <typename T> bool allocate(std::unique_ptr<T[]> &p, int64_t n) {
  if (n <= 0)
    return true;
  p.reset(new (std::nothrow) T[static_cast<size_t>(n)]);
  return p != nullptr;
}

class MpiCommunicator final : public Communicator {
public:
  MpiCommunicator(MPI_Comm comm, int rank, int size, double timeoutSeconds)
      : comm_(comm), rank_(rank), size_(size), timeoutSeconds_(timeoutSeconds) {
  }
  ~MpiCommunicator() override;

  int rank() const override { return rank_; }
  int worldSize() const override { return size_; }
  const char *backendName() const override { return "mpi"; }
  /// MPI_THREAD_SERIALIZED or more (MpiSession asks for it; a caller that
  /// initialized MPI may have given less).
  bool callableFromAnyThread() const override {
    int provided = MPI_THREAD_SINGLE;
    return MPI_Query_thread(&provided) == MPI_SUCCESS &&
           provided >= MPI_THREAD_SERIALIZED;
  }

protected:
  SHARDLIN_COMMUNICATOR_OVERRIDES
  /// MPI counts and displacements are int.
  std::string checkBackendArguments(const CollectiveCall &call) const override;

private:
  /// Fails fast once a collective has timed out or MPI reported an error:
  /// the ranks' sequences of collectives no longer line up after that.
  Status checkUsable(const std::string &at) const {
    if (failed_.empty())
      return Status::ok();
    return Status::aborted(at + ": communicator failed earlier: " + failed_);
  }

  /// Turns the return code of an MPI call into a Status. An MPI error leaves
  /// the communicator unusable (MPI does not promise it can recover).
  Status check(int rc, const std::string &at, const char *call) {
    if (rc == MPI_SUCCESS)
      return Status::ok();
    std::string reason = std::string(call) + " failed: " + mpiErrorText(rc);
    failed_ = at + ": " + reason;
    return Status::internal(at + ": " + reason);
  }

  /// Polls `state->request` until it completes or the timeout passes. On
  /// timeout, takes `state` away (into abandoned_), since MPI may still use
  /// it; otherwise leaves it to the caller, which may read its buffers.
  Status complete(std::unique_ptr<InFlight> &state, const std::string &at,
                  const char *call);

  MPI_Comm comm_;
  int rank_;
  int size_;
  double timeoutSeconds_;
  std::string failed_;
  /// Collectives that timed out: MPI may still write their staging buffers,
  /// and a pending collective request may be neither cancelled nor freed.
  std::vector<std::unique_ptr<InFlight>> abandoned_;
};

MpiCommunicator::~MpiCommunicator() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) {
    // Staging memory of a timed-out collective may still be written by
    // MPI; leak it rather than hand it back to the allocator.
    for (auto &state : abandoned_)
      (void)state.release();
    return;
  }
  // A timed-out barrier completes if its late ranks joined after all, and
  // testing it is safe. A timed-out collective on the caller's buffers must
  // not be tested (see InFlight::userBuffers). One still pending keeps its
  // communicator and staging memory, and makes ~MpiSession end the job
  // with MPI_Abort rather than finalize.
  std::vector<std::unique_ptr<InFlight>> stillPending;
  const bool mayProgress = !anyUserBuffers(abandoned_);
  for (auto &state : abandoned_)
    if (!mayProgress || !completedNow(*state))
      stillPending.push_back(std::move(state));
  if (stillPending.empty()) {
    MPI_Comm_free(&comm_);
    return;
  }
  PendingCollectives &pending = pendingCollectives();
  std::lock_guard<std::mutex> lock(pending.mutex);
  for (auto &state : stillPending)
    pending.states.push_back(std::move(state));
}

Status MpiCommunicator::complete(std::unique_ptr<InFlight> &state,
                                 const std::string &at, const char *call) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  // Yield first (short collectives finish within microseconds), then sleep
  // with a doubling nap up to 1 ms, so waiting ranks leave the cores to the
  // ranks still working when there are more ranks than cores. MPI_Test is
  // also what drives the progress of the nonblocking collective.
  auto nap = std::chrono::microseconds(1);
  const auto maxNap = std::chrono::microseconds(1000);
  for (int polls = 0;; ++polls) {
    int done = 0;
    SHARDLIN_RETURN_IF_ERROR(
        check(MPI_Test(&state->request, &done, MPI_STATUS_IGNORE), at, call));
    if (done)
      return Status::ok();
    double elapsed =
        std::chrono::duration<double>(Clock::now() - start).count();
    if (elapsed >= timeoutSeconds_) {
      std::string reason = "timed out after " + formatSeconds(timeoutSeconds_) +
                           " s in " + call +
                           " (a rank did not join this collective, or is "
                           "stuck)";
      failed_ = at + ": " + reason;
      abandoned_.push_back(std::move(state));
      return Status::deadlineExceeded(at + ": " + reason);
    }
    if (polls < 64) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(nap);
      nap = std::min(nap * 2, maxNap);
    }
  }
}

/// "" if every entry of `values` fits in an MPI count, else which does not.
/// The entries are known to be non-negative (Communicator checked them).
std::string checkInts(const char *name, const std::vector<int64_t> &values) {
  for (size_t i = 0; i < values.size(); ++i)
    if (values[i] > INT_MAX)
      return std::string(name) + "[" + std::to_string(i) +
             "] = " + std::to_string(values[i]) +
             " does not fit in an MPI count (int)";
  return {};
}

std::string checkInt(const char *name, int64_t count) {
  if (count > INT_MAX)
    return std::string(name) + " = " + std::to_string(count) +
           " does not fit in an MPI count (int)";
  return {};
}

/// `values` as ints (checked by checkInts).
std::vector<int> toInts(const std::vector<int64_t> &values) {
  return std::vector<int>(values.begin(), values.end());
}

std::string
MpiCommunicator::checkBackendArguments(const CollectiveCall &c) const {
  std::string problem;
  switch (c.kind) {
  case CollectiveKind::AllGatherV:
    problem = checkInt("sendCount", c.count);
    if (problem.empty())
      problem = checkInts("recvCounts", *c.recvCounts);
    if (problem.empty())
      problem = checkInts("recvDispls", *c.recvDispls);
    return problem;
  case CollectiveKind::AllToAllV:
    problem = checkInts("sendCounts", *c.sendCounts);
    if (problem.empty())
      problem = checkInts("sendDispls", *c.sendDispls);
    if (problem.empty())
      problem = checkInts("recvCounts", *c.recvCounts);
    if (problem.empty())
      problem = checkInts("recvDispls", *c.recvDispls);
    return problem;
  case CollectiveKind::ReduceScatterV: {
    // MPI_Reduce_scatter has no displacements (segments are packed for it
    // when they are not already), and Open MPI sums the counts in an int.
    int64_t total = 0;
    for (int64_t n : *c.sendCounts) {
      total += n;
      if (total > INT_MAX)
        return "the counts sum to more than an MPI count (int) can hold";
    }
    return {};
  }
  case CollectiveKind::AllReduce:
  case CollectiveKind::Broadcast:
    return checkInt("count", c.count);
  case CollectiveKind::Barrier:
    return {};
  }
  return {};
}

Status MpiCommunicator::doAllGatherV(const CollectiveCall &c) {
  const std::string &at = c.where;
  SHARDLIN_RETURN_IF_ERROR(checkUsable(at));
  if (!c.invalid.empty())
    return rejectInvalid(c);
  auto state = std::make_unique<InFlight>();
  state->counts = toInts(*c.recvCounts);
  state->displs = toInts(*c.recvDispls);

  // A caller gathering in place passes its own block of recv as send. MPI
  // forbids aliased buffers and has MPI_IN_PLACE for exactly this case.
  const void *wireSend = c.send;
  if (c.count > 0 &&
      c.send == offsetBytes(c.recv, (*c.recvDispls)[rank_], dtypeSize(c.dtype)))
    wireSend = MPI_IN_PLACE;
  MPI_Datatype type = wireType(c.dtype);
  SHARDLIN_RETURN_IF_ERROR(
      check(MPI_Iallgatherv(wireSend, static_cast<int>(c.count), type, c.recv,
                            state->counts.data(), state->displs.data(), type,
                            comm_, &state->request),
            at, "MPI_Iallgatherv"));
  return complete(state, at, "MPI_Iallgatherv");
}

Status MpiCommunicator::doAllToAllV(const CollectiveCall &c) {
  const std::string &at = c.where;
  SHARDLIN_RETURN_IF_ERROR(checkUsable(at));
  if (!c.invalid.empty())
    return rejectInvalid(c);
  auto state = std::make_unique<InFlight>();
  state->counts = toInts(*c.sendCounts);
  state->displs = toInts(*c.sendDispls);
  state->counts2 = toInts(*c.recvCounts);
  state->displs2 = toInts(*c.recvDispls);

  MPI_Datatype type = wireType(c.dtype);
  SHARDLIN_RETURN_IF_ERROR(
      check(MPI_Ialltoallv(c.send, state->counts.data(), state->displs.data(),
                           type, c.recv, state->counts2.data(),
                           state->displs2.data(), type, comm_, &state->request),
            at, "MPI_Ialltoallv"));
  return complete(state, at, "MPI_Ialltoallv");
}

Status MpiCommunicator::doReduceScatterV(const CollectiveCall &c) {
  const std::string &at = c.where;
  SHARDLIN_RETURN_IF_ERROR(checkUsable(at));
  if (!c.invalid.empty())
    return rejectInvalid(c);
  const std::vector<int64_t> &counts = *c.sendCounts;
  const std::vector<int64_t> &displs = *c.sendDispls;
  const DType dtype = c.dtype;
  auto state = std::make_unique<InFlight>();
  state->counts = toInts(counts);
  int64_t total = 0;
  bool packed = true;
  for (int d = 0; d < size_; ++d) {
    if (counts[d] > 0 && displs[d] != total)
      packed = false;
    total += counts[d];
  }

  const size_t es = dtypeSize(dtype);
  const int64_t mine = counts[rank_];
  const void *wireSend = c.send;
  void *wireRecv = c.recv;
  MPI_Datatype type = wireType(dtype);
  if (isHalfType(dtype)) {
    // Pack and widen in one pass; see the file comment for why f32.
    if (!allocate(state->f32Send, total) || !allocate(state->f32Recv, mine))
      return Status::internal(at +
                              ": cannot allocate f32 staging buffers for " +
                              std::to_string(total) + " elements");
    int64_t offset = 0;
    for (int d = 0; d < size_; ++d) {
      if (counts[d] > 0)
        convertToF32(dtype, offsetBytes(c.send, displs[d], es),
                     state->f32Send.get() + offset,
                     static_cast<size_t>(counts[d]));
      offset += counts[d];
    }
    wireSend = state->f32Send.get();
    wireRecv = state->f32Recv.get();
    type = MPI_FLOAT;
  } else if (!packed) {
    if (!allocate(state->packed, total * static_cast<int64_t>(es)))
      return Status::internal(at + ": cannot allocate a packing buffer of " +
                              std::to_string(total * es) + " bytes");
    int64_t offset = 0;
    for (int d = 0; d < size_; ++d) {
      if (counts[d] > 0)
        std::memcpy(state->packed.get() + offset * es,
                    offsetBytes(c.send, displs[d], es), counts[d] * es);
      offset += counts[d];
    }
    wireSend = state->packed.get();
  }

  SHARDLIN_RETURN_IF_ERROR(
      check(MPI_Ireduce_scatter(wireSend, wireRecv, state->counts.data(), type,
                                MPI_SUM, comm_, &state->request),
            at, "MPI_Ireduce_scatter"));
  SHARDLIN_RETURN_IF_ERROR(complete(state, at, "MPI_Ireduce_scatter"));
  if (isHalfType(dtype))
    convertFromF32(dtype, state->f32Recv.get(), c.recv,
                   static_cast<size_t>(mine));
  return Status::ok();
}

Status MpiCommunicator::doAllReduce(const CollectiveCall &c) {
  const std::string &at = c.where;
  SHARDLIN_RETURN_IF_ERROR(checkUsable(at));
  if (!c.invalid.empty())
    return rejectInvalid(c);
  const int64_t count = c.count;
  auto state = std::make_unique<InFlight>();
  const void *wireSend = c.send == c.recv ? MPI_IN_PLACE : c.send;
  void *wireRecv = c.recv;
  MPI_Datatype type = wireType(c.dtype);
  if (isHalfType(c.dtype)) {
    if (!allocate(state->f32Recv, count))
      return Status::internal(at +
                              ": cannot allocate an f32 staging buffer for " +
                              std::to_string(count) + " elements");
    convertToF32(c.dtype, c.send, state->f32Recv.get(),
                 static_cast<size_t>(count));
    wireSend = MPI_IN_PLACE;
    wireRecv = state->f32Recv.get();
    type = MPI_FLOAT;
  }

  SHARDLIN_RETURN_IF_ERROR(
      check(MPI_Iallreduce(wireSend, wireRecv, static_cast<int>(count), type,
                           MPI_SUM, comm_, &state->request),
            at, "MPI_Iallreduce"));
  SHARDLIN_RETURN_IF_ERROR(complete(state, at, "MPI_Iallreduce"));
  if (isHalfType(c.dtype))
    convertFromF32(c.dtype, state->f32Recv.get(), c.recv,
                   static_cast<size_t>(count));
  return Status::ok();
}

Status MpiCommunicator::doBroadcast(const CollectiveCall &c) {
  const std::string &at = c.where;
  SHARDLIN_RETURN_IF_ERROR(checkUsable(at));
  if (!c.invalid.empty())
    return rejectInvalid(c);
  auto state = std::make_unique<InFlight>();
  SHARDLIN_RETURN_IF_ERROR(
      check(MPI_Ibcast(c.recv, static_cast<int>(c.count), wireType(c.dtype),
                       c.root, comm_, &state->request),
            at, "MPI_Ibcast"));
  return complete(state, at, "MPI_Ibcast");
}

Status MpiCommunicator::doBarrier(const CollectiveCall &c) {
  const std::string &at = c.where;
  SHARDLIN_RETURN_IF_ERROR(checkUsable(at));
  auto state = std::make_unique<InFlight>();
  state->userBuffers = false;
  SHARDLIN_RETURN_IF_ERROR(
      check(MPI_Ibarrier(comm_, &state->request), at, "MPI_Ibarrier"));
  return complete(state, at, "MPI_Ibarrier");
}

/// Makes the MpiCommunicator of a communicator MPI gave us: errors as
/// codes, its rank and size. Frees `comm` on failure.
Status wrapMpiComm(MPI_Comm comm, double timeoutSeconds, const char *at,
                   std::unique_ptr<Communicator> &out) {
  // Errors come back as codes (turned into Status) instead of aborting.
  int rc = MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  int rank = 0, size = 1;
  if (rc == MPI_SUCCESS)
    rc = MPI_Comm_rank(comm, &rank);
  if (rc == MPI_SUCCESS)
    rc = MPI_Comm_size(comm, &size);
  if (rc != MPI_SUCCESS) {
    MPI_Comm_free(&comm);
    return Status::internal(std::string(at) +
                            ": setting up the communicator failed: " +
                            mpiErrorText(rc));
  }
  out = std::make_unique<MpiCommunicator>(comm, rank, size, timeoutSeconds);
  return Status::ok();
}

Status MpiCommunicator::doSplit(int color, int key,
                                std::unique_ptr<Communicator> &out) {
  const std::string at = "mpi split (rank " + std::to_string(rank_) + " of " +
                         std::to_string(size_) + ")";
  SHARDLIN_RETURN_IF_ERROR(checkUsable(at));
  // MPI_Comm_split blocks until every rank calls it. A timed barrier first:
  // a rank that never comes fails the others after the timeout instead of
  // leaving them in MPI_Comm_split forever.
  SHARDLIN_RETURN_IF_ERROR(barrier().withContext(at));
  MPI_Comm comm = MPI_COMM_NULL;
  SHARDLIN_RETURN_IF_ERROR(
      check(MPI_Comm_split(comm_, color, key, &comm), at, "MPI_Comm_split"));
  return wrapMpiComm(comm, timeoutSeconds_, at.c_str(), out);
}

} // namespace

bool mpiAvailable() { return true; }

bool launchedByMpi() { return detail::launchedByMpiEnvironment(); }

Status MpiSession::create(int *argc, char ***argv,
                          std::unique_ptr<MpiSession> &out) {
  out.reset();
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized)
    return Status::internal(
        "MpiSession::create: MPI was already finalized in this process and "
        "cannot be initialized again");
  int initialized = 0;
  MPI_Initialized(&initialized);
  std::unique_ptr<MpiSession> session(new MpiSession());
  if (!initialized) {
    int provided = MPI_THREAD_SINGLE;
    int rc = MPI_Init_thread(argc, argv, MPI_THREAD_SERIALIZED, &provided);
    if (rc != MPI_SUCCESS)
      return Status::internal("MpiSession::create: MPI_Init_thread failed: " +
                           mpiErrorText(rc));
    session->ownsInit_ = true;
    // FUNNELED at least: the runtime may run other threads (GEMM, threads
    // backend) while the main thread alone calls MPI. SERIALIZED, which it
    // asks for, also lets a pipelined block's lane thread make the
    // collectives (one thread at a time). Returning here finalizes MPI
    // through the session's destructor.
    if (provided < MPI_THREAD_FUNNELED)
      return Status::internal("MpiSession::create: MPI_Init_thread provided "
                           "thread level " +
                           std::to_string(provided) +
                           ", below MPI_THREAD_FUNNELED");
    // Open MPI 4.1 reports an error of a nonblocking collective (e.g.
    // MPI_ERR_TRUNCATE when a peer sends more than expected) through
    // MPI_COMM_WORLD's error handler, not that of the request's
    // communicator, so MPI_ERRORS_RETURN on our communicators alone does
    // not stop the default MPI_ERRORS_ARE_FATAL from killing the job
    // without a word about the collective. The process is ours (we
    // initialized MPI): errors come back as codes everywhere.
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  }
  int rc = MPI_Comm_rank(MPI_COMM_WORLD, &session->rank_);
  if (rc == MPI_SUCCESS)
    rc = MPI_Comm_size(MPI_COMM_WORLD, &session->worldSize_);
  if (rc != MPI_SUCCESS)
    return Status::internal("MpiSession::create: querying MPI_COMM_WORLD "
                         "failed: " +
                         mpiErrorText(rc));
  out = std::move(session);
  return Status::ok();
}

MpiSession::~MpiSession() {
  if (!ownsInit_)
    return;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized)
    return;
  // A collective that timed out and is still pending means a peer never
  // joined it (it died, hangs, or left the collective sequence), and
  // MPI_Finalize would wait for it forever. If it works on a caller's
  // buffers, even testing it is unsafe (InFlight::userBuffers). Either way
  // the job is ended with MPI_Abort instead; the caller has printed its
  // error by now. A timed-out barrier gets a short grace to complete (a late
  // rank may have joined it after all).
  bool pending = false;
  {
    PendingCollectives &all = pendingCollectives();
    std::lock_guard<std::mutex> lock(all.mutex);
    // Testing drives MPI's progress, which must not happen while a
    // timed-out collective may still write a caller's freed buffers.
    pending = anyUserBuffers(all.states);
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(100);
    while (!pending && !all.states.empty()) {
      for (auto &state : all.states)
        if (!completedNow(*state))
          pending = true;
      if (!pending || std::chrono::steady_clock::now() >= deadline)
        break;
      pending = false;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  if (pending) {
    std::string line = "shardlin: rank " + std::to_string(rank_) +
                       ": a collective timed out and may still be pending; "
                       "ending the MPI job with MPI_Abort (MPI_Finalize "
                       "would wait for it forever)\n";
    std::fflush(stdout);
    std::fputs(line.c_str(), stderr);
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Finalize();
}

Status createMpiCommunicator(const CommOptions &options,
                             std::unique_ptr<Communicator> &out) {
  out.reset();
  const char *at = "createMpiCommunicator";
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized)
    return Status::internal(std::string(at) +
                         ": MPI is not initialized (create an MpiSession "
                         "first, and keep it alive)");
  // Messages print the timeout as given; a clamped one would not be
  // reached anyway.
  const double t = options.timeoutSeconds;
  double effective = 0;
  std::string badTimeout = detail::checkTimeoutSeconds(t, effective);
  if (!badTimeout.empty())
    return Status::invalidArgument(std::string(at) + ": " + badTimeout);

  // A private communicator, so our collectives never match messages of
  // other code that uses MPI_COMM_WORLD.
  MPI_Comm comm = MPI_COMM_NULL;
  int rc = MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  if (rc != MPI_SUCCESS)
    return Status::internal(std::string(at) +
                         ": MPI_Comm_dup failed: " + mpiErrorText(rc));
  return wrapMpiComm(comm, t, at, out);
}

} // namespace shardlin::rt
