//===- CommLane.h - Collectives beside a rank's compute ---------*- C++ -*-===//
//
// A pipelined block (Plan, docs/runtime.md "Overlapping communication with
// the GEMMs") issues its collectives to a CommLane: a second lane of work
// beside the rank's own, so that chunk i + 1's all_gather and chunk i - 1's
// reduce_scatter move data while chunk i's GEMMs run. A threaded lane runs
// the collectives, in the order they were submitted, on a thread of its own
// (the rank's thread keeps computing); an inline lane runs each within
// submit (the same collectives in the same order, for communicators that
// must be called from one thread, and the reference the tests compare the
// threaded one with).
//
// On a device whose work is asynchronous (a GPU stream), a LaneOrdering from
// the device orders the two lanes: each collective waits for the compute work
// issued before its submit, and compute issued after a wait() waits for
// that collective. Host devices need none: their work is done when its call
// returns.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_RUNTIME_EXEC_COMMLANE_H
#define SHARDLIN_RUNTIME_EXEC_COMMLANE_H

#include "shardlin/runtime/base/Status.h"
#include "shardlin/runtime/comm/Communicator.h"

#include <cstddef>
#include <functional>
#include <memory>

namespace shardlin::rt {

/// The device's half of a lane: points in its compute work and in the
/// lane's, and waits between them. Slots index the points of one pipeline
/// run (begin() says how many there may be); the host calls them in the
/// order: markCompute(k) on the rank's thread at submit, commWaits(k) and
/// markComm(k) on the lane's thread around collective k, computeWaits(k) on
/// the rank's thread at wait(k).
class LaneOrdering {
public:
  virtual ~LaneOrdering() = default;
  /// Before a pipeline's first submit (on the rank's thread): room for
  /// `slots` collectives, and the communicator's collectives moved to the
  /// lane (a GPU rank: to a second stream).
  virtual Status begin(size_t slots) = 0;
  /// A point after the compute work issued so far.
  virtual Status markCompute(size_t slot) = 0;
  /// The lane's next collective waits for markCompute(slot)'s point.
  virtual Status commWaits(size_t slot) = 0;
  /// A point after the lane's work so far.
  virtual Status markComm(size_t slot) = 0;
  /// Compute issued from now on waits for markComm(slot)'s point.
  virtual Status computeWaits(size_t slot) = 0;
  /// After the pipeline (every collective done on the host side): later
  /// compute waits for all of the lane's work, and the communicator's
  /// collectives are back on the rank's own lane.
  virtual Status end() = 0;
};

class CommLane {
public:
  /// A lane over `comm` (which outlives it): threaded or inline (see
  /// above), with the device's ordering if it needs one (else null).
  static std::unique_ptr<CommLane>
  create(Communicator &comm, bool threaded,
         std::unique_ptr<LaneOrdering> ordering = nullptr);
  ~CommLane();
  CommLane(const CommLane &) = delete;
  CommLane &operator=(const CommLane &) = delete;

  bool threaded() const;

  /// Starts a pipeline of at most `collectives` submits.
  Status begin(size_t collectives);
  /// Queues `collective` after the ones submitted before it (and, with an
  /// ordering, after the compute work issued so far); returns its ticket.
  /// Once a collective of this pipeline has failed, the later ones are not
  /// run: they take that failure.
  size_t submit(std::function<Status(Communicator &)> collective);
  /// Waits until collective `ticket` has run; its status. Compute issued
  /// afterwards is ordered after it.
  Status wait(size_t ticket);
  /// Waits for every submitted collective, ends the pipeline; the first
  /// failure of any (or of the ordering), else ok.
  Status end();

  struct Impl;

private:
  explicit CommLane(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

} // namespace shardlin::rt

#endif // SHARDLIN_RUNTIME_EXEC_COMMLANE_H
