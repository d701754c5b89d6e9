//===- FaultyCommunicator.h - A communicator that injects faults -*- C++
//-*-===//
//
// Wraps a rank's communicator (RunConfig::wrapCommunicator) and, on one rank
// at one collective call, misbehaves the way a broken rank would:
//
//   error     the rank's run ends there with an error, as if its code had
//             thrown: it never enters the collective;
//   exit      the process ends at once with _exit(3) (MPI only: a thread
//             cannot exit alone);
//   skip      the rank skips the collective (returns success without
//             entering it) and goes on to the next one;
//   mismatch  the rank enters the collective with one element more than its
//             peers expect from it (from a larger copy of its buffers, so
//             the rank itself stays within its memory).
//
// Calls are counted per rank from 0: call 0 is the runner's agreement
// before the program, 1 is the program's first collective. Under mpi the
// file runner's agreements are on a communicator of their own, which is not
// wrapped: call 0 is the program's first collective there.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_UNITTESTS_FAULT_FAULTYCOMMUNICATOR_H
#define SHARDLIN_UNITTESTS_FAULT_FAULTYCOMMUNICATOR_H

#include "shardlin/runtime/comm/Communicator.h"

#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <unistd.h>
#include <vector>

namespace shardlin::fault {

enum class FaultKind { None, Error, Exit, Skip, Mismatch };

inline const char *faultName(FaultKind k) {
  switch (k) {
  case FaultKind::None:
    return "none";
  case FaultKind::Error:
    return "error";
  case FaultKind::Exit:
    return "exit";
  case FaultKind::Skip:
    return "skip";
  case FaultKind::Mismatch:
    return "mismatch";
  }
  return "?";
}

inline bool parseFault(const std::string &s, FaultKind &out) {
  for (FaultKind k : {FaultKind::None, FaultKind::Error, FaultKind::Exit,
                      FaultKind::Skip, FaultKind::Mismatch})
    if (s == faultName(k)) {
      out = k;
      return true;
    }
  return false;
}

struct FaultSpec {
  FaultKind kind = FaultKind::None;
  int rank = 1;
  int call = 1;
};

/// Called after every collective of every rank with its name and result.
using CollectiveObserver =
    std::function<void(int rank, const char *op, const rt::Status &)>;

class FaultyCommunicator final : public rt::Communicator {
public:
  FaultyCommunicator(std::unique_ptr<rt::Communicator> inner, FaultSpec spec,
                     CollectiveObserver observer = {})
      : inner_(std::move(inner)), spec_(spec), observer_(std::move(observer)) {}

  int rank() const override { return inner_->rank(); }
  int worldSize() const override { return inner_->worldSize(); }
  const char *backendName() const override { return inner_->backendName(); }
  rt::Device device() const override { return inner_->device(); }

protected:
  // The hooks forward the caller's arguments as given, valid or not: the
  // inner communicator checks them (and, for threads, takes part in the
  // rendezvous with invalid ones), so its messages are what callers see.
  rt::Status doAllGatherV(const rt::CollectiveCall &c) override {
    FaultKind k = next();
    if (k == FaultKind::Mismatch) {
      std::vector<unsigned char> big = grown(c.send, c.count, c.dtype);
      return done("allGatherV",
                  inner_->allGatherV(big.data(), c.count + 1, c.recv,
                                     *c.recvCounts, *c.recvDispls, c.dtype));
    }
    if (k != FaultKind::None)
      return injected("allGatherV", k);
    return done("allGatherV",
                inner_->allGatherV(c.send, c.count, c.recv, *c.recvCounts,
                                   *c.recvDispls, c.dtype));
  }

  rt::Status doAllToAllV(const rt::CollectiveCall &c) override {
    FaultKind k = next();
    if (k == FaultKind::Mismatch) {
      // One more element to the next rank, from a packed copy with room.
      const int w = worldSize(), to = (rank() + 1) % w;
      const size_t es = rt::dtypeSize(c.dtype);
      std::vector<int64_t> counts = *c.sendCounts, displs(w);
      int64_t total = 0;
      for (int d = 0; d < w; ++d) {
        displs[d] = total;
        total += counts[d] + (d == to ? 1 : 0);
      }
      std::vector<unsigned char> packed(static_cast<size_t>(total) * es, 0);
      for (int d = 0; d < w; ++d)
        if (counts[d] > 0)
          std::memcpy(packed.data() + displs[d] * es,
                      static_cast<const unsigned char *>(c.send) +
                          (*c.sendDispls)[d] * es,
                      static_cast<size_t>(counts[d]) * es);
      counts[to] += 1;
      return done("allToAllV",
                  inner_->allToAllV(packed.data(), counts, displs, c.recv,
                                    *c.recvCounts, *c.recvDispls, c.dtype));
    }
    if (k != FaultKind::None)
      return injected("allToAllV", k);
    return done("allToAllV",
                inner_->allToAllV(c.send, *c.sendCounts, *c.sendDispls, c.recv,
                                  *c.recvCounts, *c.recvDispls, c.dtype));
  }

  rt::Status doReduceScatterV(const rt::CollectiveCall &c) override {
    const std::vector<int64_t> &counts = *c.sendCounts;
    const std::vector<int64_t> &displs = *c.sendDispls;
    FaultKind k = next();
    if (k == FaultKind::Mismatch) {
      // Segment 0 one element longer (later segments shifted by one).
      const int w = worldSize();
      const size_t es = rt::dtypeSize(c.dtype);
      std::vector<int64_t> cs = counts, d(w);
      cs[0] += 1;
      int64_t total = 0;
      for (int r = 0; r < w; ++r) {
        d[r] = total;
        total += cs[r];
      }
      std::vector<unsigned char> packed(static_cast<size_t>(total) * es, 0);
      for (int r = 0; r < w; ++r)
        if (counts[r] > 0)
          std::memcpy(packed.data() + d[r] * es,
                      static_cast<const unsigned char *>(c.send) +
                          displs[r] * es,
                      static_cast<size_t>(counts[r]) * es);
      std::vector<unsigned char> out(static_cast<size_t>(cs[rank()]) * es + es);
      rt::Status s =
          inner_->reduceScatterV(packed.data(), cs, d, out.data(), c.dtype);
      return done("reduceScatterV", s);
    }
    if (k != FaultKind::None)
      return injected("reduceScatterV", k);
    return done("reduceScatterV", inner_->reduceScatterV(c.send, counts, displs,
                                                         c.recv, c.dtype));
  }

  rt::Status doAllReduce(const rt::CollectiveCall &c) override {
    FaultKind k = next();
    if (k == FaultKind::Mismatch) {
      std::vector<unsigned char> big = grown(c.send, c.count, c.dtype);
      rt::Status s =
          inner_->allReduce(big.data(), big.data(), c.count + 1, c.dtype);
      return done("allReduce", s);
    }
    if (k != FaultKind::None)
      return injected("allReduce", k);
    return done("allReduce",
                inner_->allReduce(c.send, c.recv, c.count, c.dtype));
  }

  rt::Status doBroadcast(const rt::CollectiveCall &c) override {
    FaultKind k = next();
    if (k == FaultKind::Mismatch) {
      std::vector<unsigned char> big = grown(c.recv, c.count, c.dtype);
      return done("broadcast",
                  inner_->broadcast(big.data(), c.count + 1, c.dtype, c.root));
    }
    if (k != FaultKind::None)
      return injected("broadcast", k);
    return done("broadcast",
                inner_->broadcast(c.recv, c.count, c.dtype, c.root));
  }

  rt::Status doBarrier(const rt::CollectiveCall &) override {
    FaultKind k = next();
    if (k != FaultKind::None && k != FaultKind::Mismatch)
      return injected("barrier", k);
    return done("barrier", inner_->barrier());
  }

private:
  /// The fault to inject at this call, or None.
  FaultKind next() {
    int call = calls_++;
    if (rank() == spec_.rank && call == spec_.call)
      return spec_.kind;
    return FaultKind::None;
  }

  static std::vector<unsigned char> grown(const void *data, int64_t count,
                                          rt::DType dtype) {
    const size_t es = rt::dtypeSize(dtype);
    std::vector<unsigned char> big(static_cast<size_t>(count + 1) * es, 0);
    if (count > 0)
      std::memcpy(big.data(), data, static_cast<size_t>(count) * es);
    return big;
  }

  rt::Status injected(const char *op, FaultKind k) {
    switch (k) {
    case FaultKind::Exit:
      // What a crashing or killed rank looks like to its peers.
      ::_exit(3);
    case FaultKind::Skip:
      return done(op, rt::Status::ok());
    default:
      return done(op, rt::Status::internal(
                          std::string("injected fault: rank ") +
                          std::to_string(rank()) + " fails before " + op));
    }
  }

  rt::Status done(const char *op, rt::Status s) {
    if (observer_)
      observer_(rank(), op, s);
    return s;
  }

  std::unique_ptr<rt::Communicator> inner_;
  FaultSpec spec_;
  CollectiveObserver observer_;
  int calls_ = 0;
};

} // namespace shardlin::fault

#endif // SHARDLIN_UNITTESTS_FAULT_FAULTYCOMMUNICATOR_H
