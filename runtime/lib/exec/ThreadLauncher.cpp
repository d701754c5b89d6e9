//===- ThreadLauncher.cpp - Ranks as threads of this process --------------===//
//
// Every backend whose ranks are threads of one process (threads,
// cuda-local, nccl without mpirun) runs them here: one thread per rank,
// each running runRank over its communicator and a device of its own, and
// a waiting thread that gives up on ranks stuck outside the runtime once
// another rank failed (RunOptions::abandonLateRanks).
//
//===----------------------------------------------------------------------===//

#include "exec/ThreadLauncher.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <pthread.h>
#include <thread>

namespace shardlin::rt {

namespace {

/// Threads kept between runs (ThreadRanks::reuseThreads): a run hands each
/// rank's job to an idle one, or starts one where none is idle. A thread
/// whose rank was given up on (abandonLateRanks) stays busy until its job
/// returns, and the next runs start others. The pool is never destroyed
/// (its idle threads wait until the process ends); a child of fork(), which
/// has none of the parent's threads, starts with an empty one.
class ThreadPool {
public:
  static ThreadPool &get() {
    static ThreadPool *pool = [] {
      auto *p = new ThreadPool;
      pthread_atfork([] { get().mutex_.lock(); }, [] { get().mutex_.unlock(); },
                     [] {
                       ThreadPool &c = get();
                       c.idle_.clear(); // their threads are the parent's
                       c.mutex_.unlock();
                     });
      return p;
    }();
    return *pool;
  }

  /// Runs `job` on a pooled thread; `released` (if any) is called on it
  /// once the job and its captures are gone.
  void run(std::function<void()> job, std::function<void()> released) {
    Worker *w = nullptr;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!idle_.empty()) {
        w = idle_.back();
        idle_.pop_back();
      }
    }
    if (!w) {
      w = new Worker;
      w->job = std::move(job);
      w->released = std::move(released);
      std::thread([this, w] { loop(w); }).detach();
      return;
    }
    {
      std::lock_guard<std::mutex> lock(w->mutex);
      w->job = std::move(job);
      w->released = std::move(released);
    }
    w->wake.notify_one();
  }

private:
  struct Worker {
    std::mutex mutex;
    std::condition_variable wake;
    std::function<void()> job;
    std::function<void()> released;
  };

  void loop(Worker *w) {
    for (;;) {
      std::function<void()> job, released;
      {
        std::unique_lock<std::mutex> lock(w->mutex);
        w->wake.wait(lock, [w] { return bool(w->job); });
        job = std::move(w->job);
        released = std::move(w->released);
        w->job = nullptr;
        w->released = nullptr;
      }
      job();
      // Its captures (the run's shared state: the program, the
      // communicators) go before the run is told, so that none of it is
      // destroyed on this thread after runProgram returned (at exit,
      // beside the static destructors).
      job = nullptr;
      if (released)
        released();
      released = nullptr;
      std::lock_guard<std::mutex> lock(mutex_);
      idle_.push_back(w);
    }
  }

  std::mutex mutex_;
  std::vector<Worker *> idle_;
};

/// What the rank threads of one run share with the thread that waits for
/// them. Owned jointly, so that a rank given up on (RunOptions::
/// abandonLateRanks) keeps what it uses alive after runProgram returned.
struct ThreadsRun {
  explicit ThreadsRun(SharedProgram program) : program(std::move(program)) {}
  // Shared, not copied: the ranks' plans and the ranks given up on keep it
  // alive.
  SharedProgram program;
  RankCallbacks callbacks;
  std::vector<std::unique_ptr<Communicator>> comms, agree;
  std::function<std::unique_ptr<RankDevice>()> makeDevice;

  std::mutex mutex;
  std::condition_variable changed;
  std::vector<RankResult> ranks;
  std::vector<char> done;
  /// Which callback each rank is in (argShapes, bind or finish: outside the
  /// runtime's timed waits), or null: in the runtime, whose waits are
  /// collectives with the timeout.
  std::vector<const char *> outside;
};

/// The callbacks of the rank on thread `thread` (its replica's, on a
/// grid), reporting where it is.
RankCallbacks trackedCallbacks(const std::shared_ptr<ThreadsRun> &run,
                               const RankCallbacks &base, size_t thread) {
  RankCallbacks c = base;
  c.perReplica = nullptr; // `base` is already the replica's
  // Only a weak reference: the callbacks are a member of `run`.
  std::weak_ptr<ThreadsRun> weak = run;
  auto mark = [weak, thread](const char *where) {
    if (std::shared_ptr<ThreadsRun> r = weak.lock()) {
      std::lock_guard<std::mutex> lock(r->mutex);
      r->outside[thread] = where;
    }
  };
  if (base.argShapes)
    c.argShapes = [mark, shapesOf = base.argShapes](
                      int rank, std::vector<std::vector<int64_t>> &shapes,
                      std::vector<std::string> &names) {
      mark("reading its inputs' shapes (argShapes)");
      Status s = shapesOf(rank, shapes, names);
      mark(nullptr);
      return s;
    };
  if (base.bind)
    c.bind = [mark, bind = base.bind](const Plan &plan, RankDevice &device,
                                      RankBuffers &buffers) {
      mark("loading its inputs (bind)");
      Status s = bind(plan, device, buffers);
      mark(nullptr);
      return s;
    };
  if (base.finish)
    c.finish = [mark, finish = base.finish](const Plan &plan,
                                            RankDevice &device,
                                            const RankBuffers &buffers,
                                            Communicator &agree) {
      mark("writing its outputs (finish)");
      Status s = finish(plan, device, buffers, agree);
      mark(nullptr);
      return s;
    };
  return c;
}

} // namespace

Status runRanksOnThreads(const SharedProgram &program,
                         const RunOptions &options,
                         const RankCallbacks &callbacks, ThreadRanks group,
                         std::vector<RankResult> &ranks) {
  const size_t w = group.comms.size();
  auto run = std::make_shared<ThreadsRun>(program);
  run->callbacks = callbacks;
  run->comms = std::move(group.comms);
  run->agree = std::move(group.agree);
  run->makeDevice = std::move(group.makeDevice);
  run->ranks.assign(w, RankResult());
  run->done.assign(w, 0);
  run->outside.assign(w, nullptr);
  // On a grid, thread g runs rank g % W of replica g / W (runWorldRank).
  const int replicas = options.replicas > 1 ? options.replicas : 1;
  const size_t perReplica = std::max<size_t>(1, w / size_t(replicas));
  std::vector<std::thread> threads;
  // Pooled ranks: set when a rank's job and its captures are gone (what a
  // join tells of a thread of its own).
  struct Released {
    std::mutex mutex;
    std::condition_variable changed;
    std::vector<char> ranks;
  };
  auto released = std::make_shared<Released>();
  released->ranks.assign(w, 0);
  for (size_t r = 0; r < w; ++r) {
    auto job = [run, replicas,
                tracked = trackedCallbacks(
                    run,
                    callbacksOfReplica(run->callbacks, int(r / perReplica)), r),
                r] {
      std::unique_ptr<RankDevice> device = run->makeDevice();
      RankResult result = runWorldRank(
          run->program, replicas, *run->comms[r], *device, tracked,
          run->agree.empty() ? nullptr : run->agree[r].get());
      device.reset();
      std::lock_guard<std::mutex> lock(run->mutex);
      run->ranks[r] = std::move(result);
      run->done[r] = 1;
      run->outside[r] = nullptr;
      run->changed.notify_all();
    };
    if (group.reuseThreads)
      ThreadPool::get().run(std::move(job), [released, r] {
        {
          std::lock_guard<std::mutex> lock(released->mutex);
          released->ranks[r] = 1;
        }
        released->changed.notify_all();
      });
    else
      threads.emplace_back(std::move(job));
  }

  // Wait for every rank; but once one has failed, the ranks still out of
  // the runtime's reach (in a callback, e.g. reading an input that never
  // comes) get a grace period, then are given up on if the caller allows.
  const double grace = lateRankGraceSeconds(options.comm);
  std::vector<size_t> late;
  {
    std::unique_lock<std::mutex> lock(run->mutex);
    auto allDone = [&] {
      return std::all_of(run->done.begin(), run->done.end(),
                         [](char d) { return d != 0; });
    };
    auto anyFailed = [&] {
      for (size_t r = 0; r < w; ++r)
        if (run->done[r] && !run->ranks[r].status)
          return true;
      return false;
    };
    run->changed.wait(lock, [&] { return allDone() || anyFailed(); });
    if (!allDone() && options.abandonLateRanks) {
      run->changed.wait_for(
          lock, std::chrono::duration<double>(grace), allDone);
      // Only ranks in a callback: one in a collective fails within its
      // timeout, and its own computation ends.
      for (size_t r = 0; r < w; ++r)
        if (!run->done[r] && run->outside[r])
          late.push_back(r);
    }
    run->changed.wait(lock, [&] {
      for (size_t r = 0; r < w; ++r)
        if (!run->done[r] &&
            std::find(late.begin(), late.end(), r) == late.end())
          return false;
      return true;
    });
    ranks = run->ranks;
    char limit[32];
    std::snprintf(limit, sizeof limit, "%g", grace);
    for (size_t r : late) {
      const char *where = run->outside[r];
      ranks[r].rank = static_cast<int>(r);
      ranks[r].status = Status::deadlineExceeded(
          "rank " + std::to_string(r) + ": still " + where + " " + limit +
          " s after another rank failed; given up on (its thread is left "
          "running and ends with the process)");
    }
  }
  std::vector<RankResult> onTime;
  for (size_t r = 0; r < w; ++r) {
    const bool isLate = std::find(late.begin(), late.end(), r) != late.end();
    if (!isLate)
      onTime.push_back(ranks[r]);
    if (threads.empty()) {
      // A pooled rank on time: wait until its job's captures are gone.
      if (!isLate) {
        std::unique_lock<std::mutex> lock(released->mutex);
        released->changed.wait(lock, [&] { return released->ranks[r] != 0; });
      }
      continue;
    }
    if (isLate)
      threads[r].detach();
    else
      threads[r].join();
  }
  // A rank given up on failed because another one did first: the root cause
  // is among the others (else a 1 ns timeout could name a bind that was
  // merely slow instead of the collective that timed out).
  if (Status cause = rootCause(onTime); !cause)
    return cause;
  return rootCause(ranks);
}

} // namespace shardlin::rt
