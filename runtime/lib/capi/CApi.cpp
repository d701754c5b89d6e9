//===- CApi.cpp - The runtime's C ABI (shardlin-c/Runtime.h) --------------===//
//
// A thin layer over the C++ runtime. A context is one rank: its
// communicator, its host device (OpenBLAS GEMM, host local ops, host
// allocator) and its sticky status. Each op reads and checks its views
// (capi/Views.h), computes its chunk tables as the plan does (ChunkLayout.h,
// Exchange.h), packs what is not dense into per-context scratch buffers that
// only grow, and calls the communicator, the GEMM or the local ops. No C++
// exception leaves this file.
//
// A rank whose collective fails before it reaches the communicator (bad
// views, or a context that failed earlier) still takes part in the
// collective through Communicator::failCollective: on the threads backend
// every rank then fails at once, naming this rank and why, instead of
// waiting for it until the timeout.
//
//===----------------------------------------------------------------------===//

#include "shardlin-c/Runtime.h"
#include "shardlin/runtime/capi/CApi.h"

#include "backends/Backends.h"
#include "exec/Exchange.h"
#include "exec/GemmValidation.h"
#include "capi/Views.h"
#include "backends/mpi/LaunchEnv.h"
#include "shardlin/runtime/backends/Registry.h"
#include "shardlin/runtime/base/ChunkLayout.h"
#include "shardlin/runtime/backends/Mpi.h"
#include "shardlin/runtime/backends/Host.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <exception>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <utility>
#include <string>
#include <vector>

namespace rt = shardlin::rt;
using rt::capi::View;

namespace shardlin::rt::capi {

/// The scratch buffers of one context, one per role in an op, so that an
/// op's packed copies never alias each other.
enum class Slot {
  InDense,
  SendStage,
  RecvStage,
  OutDense,
  Lhs,
  Rhs,
  Bias,
  Count
};

/// Host buffers kept across calls; each only grows, so a program that
/// repeats its ops allocates once.
class Scratch {
public:
  /// A buffer of at least `bytes` for `slot` (null if bytes is 0).
  Status get(Slot slot, int64_t bytes, char *&p) {
    Buffer &b = buffers_[static_cast<size_t>(slot)];
    if (b.bytes() < static_cast<size_t>(bytes))
      SHARDLIN_RETURN_IF_ERROR(
          Buffer::allocate(hostAllocator(), static_cast<size_t>(bytes), b));
    p = bytes == 0 ? nullptr : static_cast<char *>(b.data());
    return Status::ok();
  }

private:
  Buffer buffers_[static_cast<size_t>(Slot::Count)];
};

} // namespace shardlin::rt::capi

struct shardlin_context {
  /// The rank's communicator and its (prepared) device: the context's own
  /// when the C ABI created it, else borrowed from a C++ caller that keeps
  /// them alive longer (shardlin::rt::wrapContext, CApi.h).
  rt::Communicator *comm = nullptr;
  rt::RankDevice *device = nullptr;
  std::unique_ptr<rt::Communicator> ownedComm;
  std::unique_ptr<rt::RankDevice> ownedDevice;
  shardlin_status status = SHARDLIN_OK;
  std::string message;
  rt::capi::Scratch scratch;
};

namespace {

using rt::Status;
using rt::capi::Slot;

/// The most ranks a context of the threads backend may have (as
/// resolveWorldSize allows), and the bound on placement tables.
constexpr int kMaxWorldSize = 4096;

/// The message of the last failed call on this thread.
thread_local std::string lastError;
thread_local shardlin_context *threadContext = nullptr;

/// The C ABI's codes and the C++ runtime's, one pair each.
constexpr std::pair<rt::StatusCode, shardlin_status> kStatusCodes[] = {
    {rt::StatusCode::Ok, SHARDLIN_OK},
    {rt::StatusCode::InvalidArgument, SHARDLIN_INVALID_ARGUMENT},
    {rt::StatusCode::DeadlineExceeded, SHARDLIN_DEADLINE_EXCEEDED},
    {rt::StatusCode::Aborted, SHARDLIN_ABORTED},
    {rt::StatusCode::IoError, SHARDLIN_IO_ERROR},
    {rt::StatusCode::Unavailable, SHARDLIN_UNAVAILABLE},
    {rt::StatusCode::Internal, SHARDLIN_INTERNAL},
    {rt::StatusCode::NotFound, SHARDLIN_NOT_FOUND},
    {rt::StatusCode::ResourceExhausted, SHARDLIN_RESOURCE_EXHAUSTED},
};

shardlin_status toC(rt::StatusCode code) {
  for (const auto &[cpp, c] : kStatusCodes)
    if (cpp == code)
      return c;
  return SHARDLIN_INTERNAL;
}

rt::StatusCode fromC(shardlin_status status) {
  for (const auto &[cpp, c] : kStatusCodes)
    if (c == status)
      return cpp;
  return rt::StatusCode::Internal;
}

/// Never throws: a message that cannot be stored is dropped.
void setLastError(const std::string &message) {
  try {
    lastError = message;
  } catch (...) {
  }
}

/// Records `st`'s message as this thread's last error (if it failed) and
/// returns its code.
shardlin_status finish(const Status &st) {
  if (st.isOk())
    return SHARDLIN_OK;
  setLastError(st.message());
  return toC(st.code());
}

/// The status of an exception caught at the C boundary.
Status fromException(const char *fn) {
  try {
    throw;
  } catch (const std::bad_alloc &) {
    return Status::resourceExhausted(std::string(fn) + ": out of host memory");
  } catch (const std::exception &e) {
    return Status::internal(std::string(fn) + ": " + e.what());
  } catch (...) {
    return Status::internal(std::string(fn) + ": unknown C++ exception");
  }
}

/// Runs a function without a context: its status, exceptions caught.
template <typename Body> shardlin_status guarded(const char *fn, Body body) {
  try {
    return finish(body());
  } catch (...) {
    try {
      return finish(fromException(fn));
    } catch (...) {
      return SHARDLIN_INTERNAL;
    }
  }
}

std::string str(int64_t v) { return std::to_string(v); }

Status invalid(const std::string &message) {
  return Status::invalidArgument(message);
}

//===----------------------------------------------------------------------===//
// Options and contexts
//===----------------------------------------------------------------------===//

struct Options {
  rt::CommOptions comm;
  int blasThreads = 0;
};

Status readOptions(const shardlin_options *given, Options &out) {
  const shardlin_options o = given ? *given : shardlin_default_options();
  if (std::isnan(o.timeout_seconds))
    return invalid("options->timeout_seconds is NaN");
  out.comm.timeoutSeconds = o.timeout_seconds <= 0 ? 300.0 : o.timeout_seconds;
  if (o.blas_threads < 0)
    return invalid("options->blas_threads is " + str(o.blas_threads) +
                   "; it must be >= 0 (0: the cores / the ranks per host)");
  out.blasThreads = o.blas_threads;
  return Status::ok();
}

/// A context over `comm` with a host device prepared for its rank.
Status makeContext(std::unique_ptr<rt::Communicator> comm,
                   std::unique_ptr<shardlin_context> &out) {
  auto ctx = std::make_unique<shardlin_context>();
  ctx->ownedDevice = rt::createHostDevice();
  SHARDLIN_RETURN_IF_ERROR(ctx->ownedDevice->prepare(*comm));
  ctx->ownedComm = std::move(comm);
  ctx->comm = ctx->ownedComm.get();
  ctx->device = ctx->ownedDevice.get();
  out = std::move(ctx);
  return Status::ok();
}

Status threadsGroup(int worldSize, const shardlin_options *options,
                    shardlin_context **contexts) {
  const char *fn = "shardlin_threads_group_create";
  if (!contexts)
    return invalid(std::string(fn) + ": contexts is null");
  if (worldSize < 1 || worldSize > kMaxWorldSize)
    return invalid(std::string(fn) + ": world_size must be in [1, " +
                   str(kMaxWorldSize) + "], got " + str(worldSize));
  std::fill(contexts, contexts + worldSize, nullptr);
  Options o;
  SHARDLIN_RETURN_IF_ERROR(readOptions(options, o).withContext(fn));
  std::vector<std::unique_ptr<rt::Communicator>> comms =
      rt::createThreadsGroup(worldSize, o.comm);
  std::vector<std::unique_ptr<shardlin_context>> made(worldSize);
  for (int r = 0; r < worldSize; ++r)
    SHARDLIN_RETURN_IF_ERROR(
        makeContext(std::move(comms[r]), made[r]).withContext(fn));
  rt::setBlasThreads(o.blasThreads > 0
                         ? o.blasThreads
                         : rt::autoBlasThreads(worldSize));
  for (int r = 0; r < worldSize; ++r)
    contexts[r] = made[r].release();
  return Status::ok();
}

/// The process's MPI session: created with the first MPI context (MPI is
/// initialized then, unless the caller did), destroyed at exit (which
/// finalizes MPI if the session initialized it, or ends the job with
/// MPI_Abort if a collective timed out and may still be pending; see
/// MpiSession).
Status mpiSession() {
  static std::mutex mutex;
  static std::unique_ptr<rt::MpiSession> session;
  std::lock_guard<std::mutex> lock(mutex);
  if (session)
    return Status::ok();
  return rt::MpiSession::create(nullptr, nullptr, session);
}

Status mpiContext(const shardlin_options *options, shardlin_context **context) {
  const char *fn = "shardlin_mpi_context_create";
  if (!context)
    return invalid(std::string(fn) + ": context is null");
  *context = nullptr;
  Options o;
  SHARDLIN_RETURN_IF_ERROR(readOptions(options, o).withContext(fn));
  SHARDLIN_RETURN_IF_ERROR(mpiSession().withContext(fn));
  std::unique_ptr<rt::Communicator> comm;
  SHARDLIN_RETURN_IF_ERROR(
      rt::createMpiCommunicator(o.comm, comm).withContext(fn));
  std::unique_ptr<shardlin_context> made;
  SHARDLIN_RETURN_IF_ERROR(makeContext(std::move(comm), made).withContext(fn));
  const int local = rt::detail::launchEnvironment().localSize;
  rt::setBlasThreads(o.blasThreads > 0
                         ? o.blasThreads
                         : rt::autoBlasThreads(std::max(1, local)));
  *context = made.release();
  return Status::ok();
}

Status backendContext(const char *backend, int worldSize,
                      const shardlin_options *options,
                      shardlin_context **contexts) {
  const std::string fn = "shardlin_context_create";
  if (!backend)
    return invalid(fn + ": backend is null");
  const rt::BackendInfo *info = rt::findBackend(backend);
  if (!info)
    return invalid(fn + ": unknown backend '" + backend +
                   "' (the C ABI has threads and mpi; this runtime has " +
                   rt::availableBackends() + ")");
  const std::string name = info->name;
  if (name == "threads") {
    SHARDLIN_RETURN_IF_ERROR(
        rt::detail::checkThreadsLaunch("threads").withContext(fn));
    return threadsGroup(worldSize, options, contexts);
  }
  if (name != "mpi")
    return Status::unavailable(
        fn + ": the " + name +
        " backend is not available through the C ABI (it has threads and "
        "mpi); GPU programs run with shardlin-run or shardlin-exec");
  if (!contexts)
    return invalid(fn + ": contexts is null");
  contexts[0] = nullptr;
  if (worldSize < 0)
    return invalid(fn + ": world_size is " + str(worldSize) +
                   "; for mpi it is 0 or the MPI job's size");
  shardlin_context *made = nullptr;
  SHARDLIN_RETURN_IF_ERROR(mpiContext(options, &made));
  std::unique_ptr<shardlin_context> owned(made);
  const int jobSize = owned->comm->worldSize();
  if (worldSize != 0 && worldSize != jobSize)
    return invalid(fn + ": world_size " + str(worldSize) +
                   " does not match the MPI job's " + str(jobSize) +
                   " processes (pass 0 to take the job's size)");
  contexts[0] = owned.release();
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// Running an op on a context
//===----------------------------------------------------------------------===//

/// Records a failure on `ctx` (the first one sticks) and returns the
/// context's status.
shardlin_status record(shardlin_context *ctx, const Status &st) {
  if (st.isOk())
    return SHARDLIN_OK;
  if (ctx->status == SHARDLIN_OK) {
    ctx->status = toC(st.code());
    try {
      ctx->message = st.message();
    } catch (...) {
      ctx->message.clear();
    }
  }
  finish(st);
  return ctx->status;
}

/// "shardlin_gemm (rank 1 of 4)"
std::string where(const shardlin_context *ctx, const char *fn) {
  return std::string(fn) + " (rank " + str(ctx->comm->rank()) + " of " +
         str(ctx->comm->worldSize()) + ")";
}

/// Runs `body(joined)` for the C function `fn` on `ctx`: the sticky rule,
/// the message's prefix, exceptions caught. For a collective, `kind` is its
/// kind and `body` sets `joined` right before it calls the communicator; a
/// rank that fails before that still takes part (failCollective), see the
/// file comment.
template <typename Body>
shardlin_status runOp(shardlin_context *ctx, const char *fn,
                      std::optional<rt::CollectiveKind> kind, int dtypeValue,
                      Body body) {
  if (!ctx)
    return finish(invalid(std::string(fn) + ": context is null"));
  bool joined = false;
  Status st;
  std::string why;
  try {
    if (ctx->status != SHARDLIN_OK) {
      why = "rank " + str(ctx->comm->rank()) +
            "'s context failed earlier: " + ctx->message;
    } else {
      st = body(joined);
      if (!st) {
        st = st.withContext(where(ctx, fn));
        why = st.message();
      }
    }
  } catch (...) {
    try {
      st = fromException(fn);
      why = "rank " + str(ctx->comm->rank()) + " failed: " + st.message();
    } catch (...) {
      // Not even the message fits in memory: the code alone.
      if (ctx->status == SHARDLIN_OK)
        ctx->status = SHARDLIN_INTERNAL;
      return ctx->status;
    }
  }
  if (kind && !joined && !why.empty()) {
    try {
      rt::DType t = rt::DType::F32;
      (void)rt::capi::toDType(dtypeValue, "dtype", t);
      (void)ctx->comm->failCollective(*kind, t, why);
    } catch (...) {
    }
  }
  if (ctx->status != SHARDLIN_OK) {
    setLastError(ctx->message);
    return ctx->status;
  }
  return record(ctx, st);
}

Status readDType(int value, const char *what, rt::DType &out) {
  return rt::capi::toDType(value, what, out);
}

/// A chunk spec's placements: `worldSize` entries, a permutation.
Status readPlacements(const int64_t *placements, const char *name,
                      int worldSize, std::vector<int64_t> &out) {
  if (!placements)
    return invalid(std::string(name) + " is null (expected the " +
                   str(worldSize) + " ranks' placements)");
  out.assign(placements, placements + worldSize);
  std::string problem = rt::checkPlacements(out);
  if (!problem.empty())
    return invalid(std::string(name) + ": " + problem);
  return Status::ok();
}

Status checkDim(int64_t dim, const char *name, const View &v) {
  if (dim < 0 || dim >= v.rank())
    return invalid(std::string(name) + " " + str(dim) +
                   " is out of range for " + v.name + " of rank " +
                   str(v.rank()));
  return Status::ok();
}

/// "rank 1's chunk of 5 (chunk 2 of 4, split 2) has 1"
std::string chunkText(int64_t n, const std::vector<int64_t> &placements,
                      int rank) {
  const int64_t w = static_cast<int64_t>(placements.size());
  const int64_t chunk = std::find(placements.begin(), placements.end(), rank) -
                        placements.begin();
  return "rank " + str(rank) + "'s chunk of " + str(n) + " (chunk " +
         str(chunk) + " of " + str(w) + ", split " + str(rt::chunkSplit(n, w)) +
         ") has " + str(rt::chunkRange(n, w, chunk).size);
}

Status checkSameRank(const View &a, const View &b) {
  if (a.rank() != b.rank())
    return invalid(a.name + " " + a.shape() + " has rank " + str(a.rank()) +
                   " but " + b.name + " " + b.shape() + " has rank " +
                   str(b.rank()));
  return Status::ok();
}

/// Every dim of `a` but `skip1` and `skip2` equals b's.
Status checkSameDims(const View &a, const View &b, int64_t skip1,
                     int64_t skip2) {
  SHARDLIN_RETURN_IF_ERROR(checkSameRank(a, b));
  for (int64_t i = 0; i < a.rank(); ++i)
    if (i != skip1 && i != skip2 && a.sizes[i] != b.sizes[i])
      return invalid(a.name + " " + a.shape() + " and " + b.name + " " +
                     b.shape() + " differ in dim " + str(i));
  return Status::ok();
}

/// The checks every output gets: one address per element, no memory
/// shared with an input.
Status checkOutput(const View &out, std::initializer_list<const View *> ins) {
  SHARDLIN_RETURN_IF_ERROR(rt::capi::checkOneAddressPerElement(out));
  for (const View *in : ins)
    SHARDLIN_RETURN_IF_ERROR(rt::capi::checkDisjoint(out, *in));
  return Status::ok();
}

/// The view's elements in row-major order: its own memory if dense, else
/// packed into `slot`.
Status denseInput(shardlin_context *ctx, const View &v, Slot slot,
                  const char *&p) {
  if (v.dense()) {
    p = v.data;
    return Status::ok();
  }
  char *dense = nullptr;
  SHARDLIN_RETURN_IF_ERROR(
      ctx->scratch.get(slot, v.elements * static_cast<int64_t>(v.elt), dense));
  rt::capi::copyViewToDense(v, dense);
  p = dense;
  return Status::ok();
}

/// Where an op writes the view's elements in row-major order: its own
/// memory if dense, else `slot` (copied out by finishOutput).
Status denseOutput(shardlin_context *ctx, const View &v, Slot slot, char *&p) {
  if (v.dense()) {
    p = v.data;
    return Status::ok();
  }
  return ctx->scratch.get(slot, v.elements * static_cast<int64_t>(v.elt), p);
}

void finishOutput(const View &v, const char *dense) {
  if (!v.dense())
    rt::capi::copyDenseToView(dense, v);
}

/// The send buffer of a collective: the input's elements, packed into
/// rank blocks when the exchange is staged.
Status sendBuffer(shardlin_context *ctx, const View &in, const rt::Exchange &ex,
                  const char *&send) {
  SHARDLIN_RETURN_IF_ERROR(denseInput(ctx, in, Slot::InDense, send));
  if (!ex.staged)
    return Status::ok();
  char *staging = nullptr;
  SHARDLIN_RETURN_IF_ERROR(ctx->scratch.get(
      Slot::SendStage, ex.totalCount() * static_cast<int64_t>(in.elt),
      staging));
  SHARDLIN_RETURN_IF_ERROR(rt::movePieces(
      ctx->device->localOps(), ex, rt::Direction::Pack, send, staging, in.elt));
  send = staging;
  return Status::ok();
}

/// Where a collective receives `out`'s elements: `buffer`, which is `dense`
/// (out itself, or scratch when out is not dense) or, for a staged
/// exchange, a staging buffer of rank blocks.
struct RecvBuffer {
  char *dense = nullptr, *buffer = nullptr;
};

Status recvBuffer(shardlin_context *ctx, const View &out,
                  const rt::Exchange &ex, RecvBuffer &rb) {
  SHARDLIN_RETURN_IF_ERROR(denseOutput(ctx, out, Slot::OutDense, rb.dense));
  rb.buffer = rb.dense;
  if (!ex.staged)
    return Status::ok();
  return ctx->scratch.get(Slot::RecvStage,
                          ex.totalCount() * static_cast<int64_t>(out.elt),
                          rb.buffer);
}

/// Moves what a collective received into `out`.
Status finishRecv(shardlin_context *ctx, const View &out,
                  const rt::Exchange &ex, const RecvBuffer &rb) {
  if (ex.staged)
    SHARDLIN_RETURN_IF_ERROR(rt::movePieces(ctx->device->localOps(), ex,
                                            rt::Direction::Unpack, rb.buffer,
                                            rb.dense, out.elt));
  finishOutput(out, rb.dense);
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// The ops
//===----------------------------------------------------------------------===//

/// The arguments of a collective along one dim (all_gather, reduce_scatter),
/// read and checked: `in` and `out` have the same shape but along `dim`,
/// where the whole one (all_gather's out, reduce_scatter's in) has n and
/// the other this rank's chunk of n.
struct AlongArgs {
  rt::DType t = rt::DType::F32;
  View in, out;
  /// The ranges ranks 0..W-1 hold of the dim.
  std::vector<rt::Range> ranges;
};

Status readAlong(shardlin_context *ctx, int dtypeValue,
                 const shardlin_memref *inRef, const shardlin_memref *outRef,
                 int64_t dim, const int64_t *placementsPtr, bool outIsWhole,
                 AlongArgs &a) {
  const int w = ctx->comm->worldSize(), r = ctx->comm->rank();
  SHARDLIN_RETURN_IF_ERROR(readDType(dtypeValue, "dtype", a.t));
  SHARDLIN_RETURN_IF_ERROR(rt::capi::readView(inRef, "in", a.t, -1, a.in));
  SHARDLIN_RETURN_IF_ERROR(rt::capi::readView(outRef, "out", a.t, -1, a.out));
  SHARDLIN_RETURN_IF_ERROR(checkSameRank(a.in, a.out));
  SHARDLIN_RETURN_IF_ERROR(checkDim(dim, "along_dim", a.in));
  SHARDLIN_RETURN_IF_ERROR(checkSameDims(a.in, a.out, dim, dim));
  std::vector<int64_t> placements;
  SHARDLIN_RETURN_IF_ERROR(
      readPlacements(placementsPtr, "along_placements", w, placements));
  const View &whole = outIsWhole ? a.out : a.in;
  const View &part = outIsWhole ? a.in : a.out;
  const int64_t n = whole.sizes[dim];
  const rt::ChunkLayout layout(n, placements);
  if (part.sizes[dim] != layout.ofRank(r).size)
    return invalid(part.name + " " + part.shape() + " has " +
                   str(part.sizes[dim]) + " along dim " + str(dim) + " but " +
                   chunkText(n, placements, r) + " (" + whole.name + " is " +
                   whole.shape() + ")");
  SHARDLIN_RETURN_IF_ERROR(checkOutput(a.out, {&a.in}));
  a.ranges = rt::rankRanges(layout, w);
  return Status::ok();
}

Status allGather(shardlin_context *ctx, int dtypeValue,
                 const shardlin_memref *inRef, const shardlin_memref *outRef,
                 int64_t dim, const int64_t *placementsPtr, bool &joined) {
  rt::Communicator &comm = *ctx->comm;
  AlongArgs a;
  SHARDLIN_RETURN_IF_ERROR(
      readAlong(ctx, dtypeValue, inRef, outRef, dim, placementsPtr, true, a));
  const View &in = a.in, &out = a.out;
  const rt::DType t = a.t;
  const int r = comm.rank();
  const rt::Exchange ex =
      rt::makeExchange(rt::splitAround(out.sizes, dim), std::move(a.ranges));
  const char *send = nullptr;
  SHARDLIN_RETURN_IF_ERROR(denseInput(ctx, in, Slot::InDense, send));
  RecvBuffer recv;
  SHARDLIN_RETURN_IF_ERROR(recvBuffer(ctx, out, ex, recv));
  joined = true;
  SHARDLIN_RETURN_IF_ERROR(comm.allGatherV(send, ex.counts[r], recv.buffer,
                                           ex.counts, ex.displs, t));
  return finishRecv(ctx, out, ex, recv);
}

Status allToAll(shardlin_context *ctx, int dtypeValue,
                const shardlin_memref *inRef, const shardlin_memref *outRef,
                int64_t splitDim, const int64_t *splitPtr, int64_t concatDim,
                const int64_t *concatPtr, bool &joined) {
  rt::Communicator &comm = *ctx->comm;
  const int w = comm.worldSize(), r = comm.rank();
  rt::DType t;
  SHARDLIN_RETURN_IF_ERROR(readDType(dtypeValue, "dtype", t));
  View in, out;
  SHARDLIN_RETURN_IF_ERROR(rt::capi::readView(inRef, "in", t, -1, in));
  SHARDLIN_RETURN_IF_ERROR(rt::capi::readView(outRef, "out", t, -1, out));
  SHARDLIN_RETURN_IF_ERROR(checkSameRank(in, out));
  SHARDLIN_RETURN_IF_ERROR(checkDim(splitDim, "split_dim", in));
  SHARDLIN_RETURN_IF_ERROR(checkDim(concatDim, "concat_dim", in));
  if (splitDim == concatDim)
    return invalid("split_dim and concat_dim are both " + str(splitDim) +
                   " (all_to_all splits one dim and concatenates another)");
  SHARDLIN_RETURN_IF_ERROR(checkSameDims(in, out, splitDim, concatDim));
  std::vector<int64_t> split, concat;
  SHARDLIN_RETURN_IF_ERROR(
      readPlacements(splitPtr, "split_placements", w, split));
  SHARDLIN_RETURN_IF_ERROR(
      readPlacements(concatPtr, "concat_placements", w, concat));
  const int64_t nSplit = in.sizes[splitDim], nConcat = out.sizes[concatDim];
  const rt::ChunkLayout splitLayout(nSplit, split);
  const rt::ChunkLayout concatLayout(nConcat, concat);
  if (in.sizes[concatDim] != concatLayout.ofRank(r).size)
    return invalid("in " + in.shape() + " has " + str(in.sizes[concatDim]) +
                   " along concat_dim " + str(concatDim) + " but " +
                   chunkText(nConcat, concat, r) + " (out is " + out.shape() +
                   ")");
  if (out.sizes[splitDim] != splitLayout.ofRank(r).size)
    return invalid("out " + out.shape() + " has " + str(out.sizes[splitDim]) +
                   " along split_dim " + str(splitDim) + " but " +
                   chunkText(nSplit, split, r) + " (in is " + in.shape() + ")");
  SHARDLIN_RETURN_IF_ERROR(checkOutput(out, {&in}));

  const rt::Exchange sendEx = rt::makeExchange(
      rt::splitAround(in.sizes, splitDim), rt::rankRanges(splitLayout, w));
  const rt::Exchange recvEx = rt::makeExchange(
      rt::splitAround(out.sizes, concatDim), rt::rankRanges(concatLayout, w));
  const char *send = nullptr;
  SHARDLIN_RETURN_IF_ERROR(sendBuffer(ctx, in, sendEx, send));
  RecvBuffer recv;
  SHARDLIN_RETURN_IF_ERROR(recvBuffer(ctx, out, recvEx, recv));
  joined = true;
  SHARDLIN_RETURN_IF_ERROR(comm.allToAllV(send, sendEx.counts, sendEx.displs,
                                          recv.buffer, recvEx.counts,
                                          recvEx.displs, t));
  return finishRecv(ctx, out, recvEx, recv);
}

Status reduceScatter(shardlin_context *ctx, int dtypeValue,
                     const shardlin_memref *inRef,
                     const shardlin_memref *outRef, int64_t dim,
                     const int64_t *placementsPtr, bool &joined) {
  rt::Communicator &comm = *ctx->comm;
  AlongArgs a;
  SHARDLIN_RETURN_IF_ERROR(
      readAlong(ctx, dtypeValue, inRef, outRef, dim, placementsPtr, false, a));
  const View &in = a.in, &out = a.out;
  const rt::DType t = a.t;
  const rt::Exchange ex =
      rt::makeExchange(rt::splitAround(in.sizes, dim), std::move(a.ranges));
  const char *send = nullptr;
  SHARDLIN_RETURN_IF_ERROR(sendBuffer(ctx, in, ex, send));
  char *recv = nullptr;
  SHARDLIN_RETURN_IF_ERROR(denseOutput(ctx, out, Slot::OutDense, recv));
  joined = true;
  SHARDLIN_RETURN_IF_ERROR(
      comm.reduceScatterV(send, ex.counts, ex.displs, recv, t));
  finishOutput(out, recv);
  return Status::ok();
}

/// How BLAS reads a 2-D view: row-major with a leading stride (`ld`), as
/// is; column-major (`transposed`: BLAS reads the transpose, row-major);
/// or packed into `slot` when it is neither.
struct Matrix {
  const char *p = nullptr;
  int64_t ld = 1;
  bool transposed = false;
};

/// If `v` (rows x cols) is row-major with a leading stride BLAS can take,
/// that stride.
std::optional<int64_t> rowMajorLd(int64_t rows, int64_t cols, int64_t s0,
                                  int64_t s1) {
  const int64_t minLd = std::max<int64_t>(1, cols);
  if (cols > 1 && s1 != 1)
    return std::nullopt;
  if (rows <= 1)
    return minLd;
  if (s0 < minLd || s0 > INT_MAX)
    return std::nullopt;
  return s0;
}

Status matrixOf(shardlin_context *ctx, const View &v, Slot slot, Matrix &m) {
  const int64_t rows = v.sizes[0], cols = v.sizes[1];
  if (auto ld = rowMajorLd(rows, cols, v.strides[0], v.strides[1])) {
    m = {v.data, *ld, false};
    return Status::ok();
  }
  if (auto ld = rowMajorLd(cols, rows, v.strides[1], v.strides[0])) {
    m = {v.data, *ld, true};
    return Status::ok();
  }
  const char *dense = nullptr;
  SHARDLIN_RETURN_IF_ERROR(denseInput(ctx, v, slot, dense));
  m = {dense, std::max<int64_t>(1, cols), false};
  return Status::ok();
}

Status gemm(shardlin_context *ctx, int dtypeValue,
            const shardlin_memref *lhsRef, const shardlin_memref *rhsRef,
            const shardlin_memref *biasRef, int outDtypeValue,
            const shardlin_memref *outRef, bool transLhs, bool transRhs) {
  rt::DType t, outT;
  SHARDLIN_RETURN_IF_ERROR(readDType(dtypeValue, "dtype", t));
  SHARDLIN_RETURN_IF_ERROR(readDType(outDtypeValue, "out_dtype", outT));
  if (outT != t && outT != rt::DType::F32)
    return invalid(std::string("out_dtype is ") + rt::dtypeName(outT) +
                   " with " + rt::dtypeName(t) +
                   " operands: it is dtype, or f32 for f16 and bf16 "
                   "operands without a bias");
  View lhs, rhs, bias, out;
  SHARDLIN_RETURN_IF_ERROR(rt::capi::readView(lhsRef, "lhs", t, 2, lhs));
  SHARDLIN_RETURN_IF_ERROR(rt::capi::readView(rhsRef, "rhs", t, 2, rhs));
  if (biasRef)
    SHARDLIN_RETURN_IF_ERROR(rt::capi::readView(biasRef, "bias", t, 1, bias));
  SHARDLIN_RETURN_IF_ERROR(rt::capi::readView(outRef, "out", outT, 2, out));
  const int64_t m = transLhs ? lhs.sizes[1] : lhs.sizes[0];
  const int64_t ka = transLhs ? lhs.sizes[0] : lhs.sizes[1];
  const int64_t kb = transRhs ? rhs.sizes[1] : rhs.sizes[0];
  const int64_t n = transRhs ? rhs.sizes[0] : rhs.sizes[1];
  if (ka != kb)
    return invalid("the contraction dims differ: op(lhs) is " + str(m) + " x " +
                   str(ka) + " (lhs " + lhs.shape() +
                   (transLhs ? ", transposed" : "") + ") but op(rhs) is " +
                   str(kb) + " x " + str(n) + " (rhs " + rhs.shape() +
                   (transRhs ? ", transposed" : "") + ")");
  if (out.sizes[0] != m || out.sizes[1] != n)
    return invalid("out is " + out.shape() + ", expected [" + str(m) + ", " +
                   str(n) + "] (op(lhs) rows x op(rhs) columns)");
  if (biasRef && bias.sizes[0] != n)
    return invalid("bias has " + str(bias.sizes[0]) + " elements, expected " +
                   str(n) + " (out's columns)");
  SHARDLIN_RETURN_IF_ERROR(checkOutput(out, {&lhs, &rhs, &bias}));

  rt::GemmOp op;
  op.m = m;
  op.n = n;
  op.k = ka;
  op.dtype = t;
  op.f32Result = outT != t;
  Matrix a, b;
  SHARDLIN_RETURN_IF_ERROR(matrixOf(ctx, lhs, Slot::Lhs, a));
  SHARDLIN_RETURN_IF_ERROR(matrixOf(ctx, rhs, Slot::Rhs, b));
  op.a = a.p;
  op.lda = a.ld;
  op.transA = transLhs != a.transposed;
  op.b = b.p;
  op.ldb = b.ld;
  op.transB = transRhs != b.transposed;
  if (biasRef) {
    const char *p = nullptr;
    SHARDLIN_RETURN_IF_ERROR(denseInput(ctx, bias, Slot::Bias, p));
    // A bias of no elements (n == 0) is still a bias (validateGemmOp's
    // rules about biases apply), and is never read: any non-null address.
    op.bias = p ? p : static_cast<const void *>(&op);
  }
  char *c = nullptr;
  if (auto ld = rowMajorLd(m, n, out.strides[0], out.strides[1])) {
    c = out.data;
    op.ldc = *ld;
  } else {
    SHARDLIN_RETURN_IF_ERROR(denseOutput(ctx, out, Slot::OutDense, c));
    op.ldc = std::max<int64_t>(1, n);
  }
  op.c = c;
  SHARDLIN_RETURN_IF_ERROR(rt::validateGemmOp(op, "OpenBLAS"));
  SHARDLIN_RETURN_IF_ERROR(ctx->device->gemm().run(op));
  if (c != out.data)
    rt::capi::copyDenseToView(c, out);
  return Status::ok();
}

Status biasAdd(shardlin_context *ctx, int dtypeValue,
               const shardlin_memref *inRef, const shardlin_memref *biasRef,
               const shardlin_memref *outRef) {
  rt::DType t;
  SHARDLIN_RETURN_IF_ERROR(readDType(dtypeValue, "dtype", t));
  View in, bias, out;
  SHARDLIN_RETURN_IF_ERROR(rt::capi::readView(inRef, "in", t, -1, in));
  if (in.rank() == 0)
    return invalid("in has rank 0; bias_add needs rows x cols (rank >= 1, "
                   "the bias along the last dim)");
  SHARDLIN_RETURN_IF_ERROR(rt::capi::readView(biasRef, "bias", t, 1, bias));
  SHARDLIN_RETURN_IF_ERROR(
      rt::capi::readView(outRef, "out", t, in.rank(), out));
  SHARDLIN_RETURN_IF_ERROR(checkSameDims(in, out, -1, -1));
  const int64_t cols = in.sizes.back();
  if (bias.sizes[0] != cols)
    return invalid("bias has " + str(bias.sizes[0]) + " elements, expected " +
                   str(cols) + " (the last dim of in " + in.shape() + ")");
  SHARDLIN_RETURN_IF_ERROR(rt::capi::checkOneAddressPerElement(out));
  SHARDLIN_RETURN_IF_ERROR(rt::capi::checkDisjoint(out, in, true));
  SHARDLIN_RETURN_IF_ERROR(rt::capi::checkDisjoint(out, bias));
  const int64_t rows = cols == 0 ? 0 : in.elements / cols;
  const char *x = nullptr, *b = nullptr;
  char *y = nullptr;
  SHARDLIN_RETURN_IF_ERROR(denseInput(ctx, in, Slot::InDense, x));
  SHARDLIN_RETURN_IF_ERROR(denseInput(ctx, bias, Slot::Bias, b));
  SHARDLIN_RETURN_IF_ERROR(denseOutput(ctx, out, Slot::OutDense, y));
  SHARDLIN_RETURN_IF_ERROR(
      ctx->device->localOps().biasAdd(x, b, y, rows, cols, t));
  finishOutput(out, y);
  return Status::ok();
}

Status convert(shardlin_context *ctx, const shardlin_memref *inRef,
               int fromValue, const shardlin_memref *outRef, int toValue) {
  rt::DType from, to;
  SHARDLIN_RETURN_IF_ERROR(readDType(fromValue, "from", from));
  SHARDLIN_RETURN_IF_ERROR(readDType(toValue, "to", to));
  if (!rt::isConversion(from, to))
    return invalid(std::string("converts ") + rt::dtypeName(from) + " to " +
                   rt::dtypeName(to) +
                   "; convert is f32 to f16 or bf16, or "
                   "back");
  View in, out;
  SHARDLIN_RETURN_IF_ERROR(rt::capi::readView(inRef, "in", from, -1, in));
  SHARDLIN_RETURN_IF_ERROR(
      rt::capi::readView(outRef, "out", to, in.rank(), out));
  SHARDLIN_RETURN_IF_ERROR(checkSameDims(in, out, -1, -1));
  SHARDLIN_RETURN_IF_ERROR(checkOutput(out, {&in}));
  const char *x = nullptr;
  char *y = nullptr;
  SHARDLIN_RETURN_IF_ERROR(denseInput(ctx, in, Slot::InDense, x));
  SHARDLIN_RETURN_IF_ERROR(denseOutput(ctx, out, Slot::OutDense, y));
  SHARDLIN_RETURN_IF_ERROR(
      ctx->device->localOps().convert(x, from, y, to, in.elements));
  finishOutput(out, y);
  return Status::ok();
}

Status chunkRange(int64_t n, int64_t worldSize, const int64_t *placementsPtr,
                  int64_t rank, int64_t *offset, int64_t *size) {
  const std::string fn = "shardlin_chunk_range";
  if (!offset || !size)
    return invalid(fn + ": offset and size must not be null");
  if (n < 0)
    return invalid(fn + ": n is negative (" + str(n) + ")");
  if (worldSize < 1 || worldSize > kMaxWorldSize)
    return invalid(fn + ": world_size must be in [1, " + str(kMaxWorldSize) +
                   "], got " + str(worldSize));
  std::vector<int64_t> placements;
  SHARDLIN_RETURN_IF_ERROR(readPlacements(placementsPtr, "placements",
                                          static_cast<int>(worldSize),
                                          placements)
                               .withContext(fn));
  if (rank < 0 || rank >= worldSize)
    return invalid(fn + ": rank " + str(rank) + " is not in [0, " +
                   str(worldSize - 1) + "]");
  const rt::Range range = rt::ChunkLayout(n, placements).ofRank(rank);
  *offset = range.offset;
  *size = range.size;
  return Status::ok();
}

Status viewInit(shardlin_memref *view, shardlin_view_storage *storage,
                void *data, int64_t rank, const int64_t *sizes) {
  const std::string fn = "shardlin_view_init";
  if (!view || !storage)
    return invalid(fn + ": view and storage must not be null");
  if (rank < 0 || rank > SHARDLIN_MAX_VIEW_RANK)
    return invalid(fn + ": rank " + str(rank) + " is out of range [0, " +
                   str(SHARDLIN_MAX_VIEW_RANK) + "]");
  if (rank > 0 && !sizes)
    return invalid(fn + ": sizes is null for rank " + str(rank));
  for (int64_t i = 0; i < rank; ++i)
    if (sizes[i] < 0)
      return invalid(fn + ": size " + str(sizes[i]) + " of dim " + str(i) +
                     " is negative");
  *storage = shardlin_view_storage();
  storage->allocated = data;
  storage->aligned = data;
  storage->offset = 0;
  int64_t stride = 1;
  for (int64_t i = rank - 1; i >= 0; --i) {
    storage->sizes_and_strides[i] = sizes[i];
    storage->sizes_and_strides[rank + i] = stride;
    // Saturates instead of overflowing: such a view is refused when used.
    if (sizes[i] > 0 && __builtin_mul_overflow(stride, sizes[i], &stride))
      stride = INT64_MAX;
  }
  view->rank = rank;
  view->descriptor = storage;
  return Status::ok();
}

} // namespace

//===----------------------------------------------------------------------===//
// The C functions
//===----------------------------------------------------------------------===//

extern "C" {

const char *shardlin_status_name(shardlin_status status) {
  // The table of both ways (kStatusCodes) names each C code once.
  for (const auto &[cpp, c] : kStatusCodes)
    if (c == status)
      return rt::statusCodeName(cpp);
  return "unknown";
}

const char *shardlin_last_error_message(void) { return lastError.c_str(); }

shardlin_status shardlin_view_init(shardlin_memref *view,
                                   shardlin_view_storage *storage, void *data,
                                   int64_t rank, const int64_t *sizes) {
  return guarded("shardlin_view_init",
                 [&] { return viewInit(view, storage, data, rank, sizes); });
}

shardlin_options shardlin_default_options(void) {
  shardlin_options o;
  o.timeout_seconds = 300.0;
  o.blas_threads = 0;
  return o;
}

shardlin_status shardlin_threads_group_create(int world_size,
                                              const shardlin_options *options,
                                              shardlin_context **contexts) {
  return guarded("shardlin_threads_group_create",
                 [&] { return threadsGroup(world_size, options, contexts); });
}

shardlin_status shardlin_mpi_context_create(const shardlin_options *options,
                                            shardlin_context **context) {
  return guarded("shardlin_mpi_context_create",
                 [&] { return mpiContext(options, context); });
}

shardlin_status shardlin_context_create(const char *backend, int world_size,
                                        const shardlin_options *options,
                                        shardlin_context **contexts) {
  return guarded("shardlin_context_create", [&] {
    return backendContext(backend, world_size, options, contexts);
  });
}

void shardlin_context_destroy(shardlin_context *context) {
  if (threadContext == context)
    threadContext = nullptr;
  // Destructors of the runtime do not throw; a terminate here would be a
  // runtime bug, not a caller's.
  delete context;
}

int shardlin_context_rank(const shardlin_context *context) {
  return context ? context->comm->rank() : -1;
}

int shardlin_context_world_size(const shardlin_context *context) {
  return context ? context->comm->worldSize() : -1;
}

shardlin_status shardlin_context_status(const shardlin_context *context) {
  return context ? context->status : SHARDLIN_INVALID_ARGUMENT;
}

const char *shardlin_context_message(const shardlin_context *context) {
  return context ? context->message.c_str() : "context is null";
}

uint64_t shardlin_context_bytes_sent(const shardlin_context *context) {
  return context ? context->comm->stats().bytesSent : 0;
}

uint64_t shardlin_context_collective_calls(const shardlin_context *context) {
  return context ? context->comm->stats().calls : 0;
}

void shardlin_set_thread_context(shardlin_context *context) {
  threadContext = context;
}

shardlin_context *shardlin_thread_context(void) { return threadContext; }

shardlin_status shardlin_chunk_range(int64_t n, int64_t world_size,
                                     const int64_t *placements, int64_t rank,
                                     int64_t *offset, int64_t *size) {
  return guarded("shardlin_chunk_range", [&] {
    return chunkRange(n, world_size, placements, rank, offset, size);
  });
}

shardlin_status
shardlin_all_gather(shardlin_context *context, shardlin_dtype dtype,
                    const shardlin_memref *in, const shardlin_memref *out,
                    int64_t along_dim, const int64_t *along_placements) {
  return runOp(context, "shardlin_all_gather", rt::CollectiveKind::AllGatherV,
               dtype, [&](bool &joined) {
                 return allGather(context, dtype, in, out, along_dim,
                                  along_placements, joined);
               });
}

shardlin_status
shardlin_all_to_all(shardlin_context *context, shardlin_dtype dtype,
                    const shardlin_memref *in, const shardlin_memref *out,
                    int64_t split_dim, const int64_t *split_placements,
                    int64_t concat_dim, const int64_t *concat_placements) {
  return runOp(context, "shardlin_all_to_all", rt::CollectiveKind::AllToAllV,
               dtype, [&](bool &joined) {
                 return allToAll(context, dtype, in, out, split_dim,
                                 split_placements, concat_dim,
                                 concat_placements, joined);
               });
}

shardlin_status
shardlin_reduce_scatter(shardlin_context *context, shardlin_dtype dtype,
                        const shardlin_memref *in, const shardlin_memref *out,
                        int64_t along_dim, const int64_t *along_placements) {
  return runOp(context, "shardlin_reduce_scatter",
               rt::CollectiveKind::ReduceScatterV, dtype, [&](bool &joined) {
                 return reduceScatter(context, dtype, in, out, along_dim,
                                      along_placements, joined);
               });
}

shardlin_status shardlin_gemm(shardlin_context *context, shardlin_dtype dtype,
                              const shardlin_memref *lhs,
                              const shardlin_memref *rhs,
                              const shardlin_memref *bias,
                              shardlin_dtype out_dtype,
                              const shardlin_memref *out, int transpose_lhs,
                              int transpose_rhs) {
  return runOp(context, "shardlin_gemm", std::nullopt, dtype, [&](bool &) {
    return gemm(context, dtype, lhs, rhs, bias, out_dtype, out,
                transpose_lhs != 0, transpose_rhs != 0);
  });
}

shardlin_status shardlin_bias_add(shardlin_context *context,
                                  shardlin_dtype dtype,
                                  const shardlin_memref *in,
                                  const shardlin_memref *bias,
                                  const shardlin_memref *out) {
  return runOp(context, "shardlin_bias_add", std::nullopt, dtype,
               [&](bool &) { return biasAdd(context, dtype, in, bias, out); });
}

shardlin_status shardlin_convert(shardlin_context *context,
                                 const shardlin_memref *in, shardlin_dtype from,
                                 const shardlin_memref *out,
                                 shardlin_dtype to) {
  return runOp(context, "shardlin_convert", std::nullopt, from,
               [&](bool &) { return convert(context, in, from, out, to); });
}

} // extern "C"

//===----------------------------------------------------------------------===//
// The C++ side (shardlin/runtime/capi/CApi.h)
//===----------------------------------------------------------------------===//

namespace shardlin::rt {

void ContextDeleter::operator()(shardlin_context *context) const {
  shardlin_context_destroy(context);
}

Status wrapContext(Communicator &comm, RankDevice &device, ContextPtr &out) {
  if (device.kind() != DeviceKind::Host)
    return Status::unavailable(
        "the C ABI runs on host memory; rank " + std::to_string(comm.rank()) +
        "'s device is " + deviceName(comm.device()));
  try {
    auto ctx = std::make_unique<shardlin_context>();
    ctx->comm = &comm;
    ctx->device = &device;
    out.reset(ctx.release());
  } catch (...) {
    return fromException("shardlin::rt::wrapContext");
  }
  return Status::ok();
}

Status contextStatus(const shardlin_context *context) {
  if (!context)
    return Status::invalidArgument("the context is null");
  if (context->status == SHARDLIN_OK)
    return Status::ok();
  // INTERNAL without a message: not even the message fitted in memory.
  return Status::error(fromC(context->status),
                       context->message.empty()
                           ? std::string(shardlin_status_name(context->status))
                           : context->message);
}

} // namespace shardlin::rt
