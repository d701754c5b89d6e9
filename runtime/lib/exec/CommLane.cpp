//===- CommLane.cpp - Collectives beside a rank's compute -----------------===//
//
// One worker thread per threaded lane, started with the lane and kept for
// its life (a plan replayed many times reuses it); a queue of the current
// pipeline's collectives, run in submit order; each one's status kept until
// the pipeline ends.
//
//===----------------------------------------------------------------------===//

#include "shardlin/runtime/exec/CommLane.h"
#include "shardlin/runtime/exec/Device.h"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

namespace shardlin::rt {

struct CommLane::Impl {
  Impl(Communicator &comm, bool threaded,
       std::unique_ptr<LaneOrdering> ordering)
      : comm(comm), threaded(threaded), ordering(std::move(ordering)) {}

  Communicator &comm;
  const bool threaded;
  std::unique_ptr<LaneOrdering> ordering;

  std::mutex mu;
  std::condition_variable queued, ran;
  struct Job {
    size_t ticket;
    std::function<Status(Communicator &)> fn;
  };
  std::deque<Job> jobs;
  /// Each submitted collective's status and whether it finished, by
  /// ticket; `finished` of them did.
  std::vector<Status> results;
  std::vector<char> done;
  size_t finished = 0;
  /// The pipeline's first failure (of a collective or of the ordering).
  Status failure = Status::ok();
  bool stopping = false;
  std::thread worker;

  /// Runs collective `ticket` on the calling thread (the worker's, or the
  /// rank's for an inline lane), unless an earlier one failed.
  Status runOne(size_t ticket, const std::function<Status(Communicator &)> &fn,
                const Status &earlier) {
    if (!earlier)
      return earlier;
    if (ordering)
      SHARDLIN_RETURN_IF_ERROR(ordering->commWaits(ticket));
    SHARDLIN_RETURN_IF_ERROR(fn(comm));
    return ordering ? ordering->markComm(ticket) : Status::ok();
  }

  /// Records collective `ticket`'s status.
  void finish(size_t ticket, Status st) {
    std::lock_guard<std::mutex> lock(mu);
    if (!st && failure)
      failure = st;
    results[ticket] = std::move(st);
    done[ticket] = 1;
    ++finished;
    ran.notify_all();
  }

  void loop() {
    for (;;) {
      Job job;
      Status earlier = Status::ok();
      {
        std::unique_lock<std::mutex> lock(mu);
        queued.wait(lock, [&] { return stopping || !jobs.empty(); });
        if (jobs.empty())
          return; // stopping, nothing left
        job = std::move(jobs.front());
        jobs.pop_front();
        earlier = failure;
      }
      finish(job.ticket, runOne(job.ticket, job.fn, earlier));
    }
  }
};

CommLane::CommLane(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

std::unique_ptr<CommLane>
CommLane::create(Communicator &comm, bool threaded,
                 std::unique_ptr<LaneOrdering> ordering) {
  std::unique_ptr<CommLane> lane(new CommLane(
      std::make_unique<Impl>(comm, threaded, std::move(ordering))));
  if (threaded) {
    Impl *im = lane->impl_.get();
    im->worker = std::thread([im] { im->loop(); });
  }
  return lane;
}

CommLane::~CommLane() {
  Impl &im = *impl_;
  if (!im.worker.joinable())
    return;
  {
    std::lock_guard<std::mutex> lock(im.mu);
    im.stopping = true;
  }
  im.queued.notify_all();
  im.worker.join();
}

bool CommLane::threaded() const { return impl_->threaded; }

Status CommLane::begin(size_t collectives) {
  Impl &im = *impl_;
  std::lock_guard<std::mutex> lock(im.mu);
  im.results.clear();
  im.results.reserve(collectives);
  im.done.clear();
  im.done.reserve(collectives);
  im.finished = 0;
  im.failure = Status::ok();
  if (im.ordering)
    im.failure = im.ordering->begin(collectives);
  return im.failure;
}

size_t CommLane::submit(std::function<Status(Communicator &)> collective) {
  Impl &im = *impl_;
  size_t ticket = 0;
  Status earlier = Status::ok();
  {
    std::lock_guard<std::mutex> lock(im.mu);
    ticket = im.results.size();
    im.results.push_back(Status::ok());
    im.done.push_back(0);
    earlier = im.failure;
  }
  if (earlier && im.ordering)
    earlier = im.ordering->markCompute(ticket);
  if (!im.threaded || !earlier) {
    im.finish(ticket, im.runOne(ticket, collective, earlier));
    return ticket;
  }
  {
    std::lock_guard<std::mutex> lock(im.mu);
    im.jobs.push_back({ticket, std::move(collective)});
  }
  im.queued.notify_one();
  return ticket;
}

Status CommLane::wait(size_t ticket) {
  Impl &im = *impl_;
  Status st = Status::ok();
  {
    std::unique_lock<std::mutex> lock(im.mu);
    if (ticket >= im.results.size())
      return Status::internal("CommLane::wait: no collective " +
                              std::to_string(ticket) + " was submitted");
    im.ran.wait(lock, [&] { return im.done[ticket] != 0; });
    st = im.results[ticket];
  }
  if (st && im.ordering)
    st = im.ordering->computeWaits(ticket);
  return st;
}

Status CommLane::end() {
  Impl &im = *impl_;
  Status st = Status::ok();
  {
    std::unique_lock<std::mutex> lock(im.mu);
    im.ran.wait(lock, [&] { return im.finished == im.results.size(); });
    st = im.failure;
  }
  if (im.ordering) {
    Status ended = im.ordering->end();
    if (st)
      st = ended;
  }
  return st;
}

Status RankDevice::createCommLane(Communicator &comm,
                                  std::unique_ptr<CommLane> &out) {
  out = CommLane::create(comm, comm.callableFromAnyThread());
  return Status::ok();
}

} // namespace shardlin::rt
