//===- CollectiveBench.cpp - The collectives on their own ------------------===//
//
// Each collective the lowering emits, called on the communicator directly
// with f32 buffers of nccl-tests' "size" S (bytes):
//   all_gather      every rank sends S/W, receives S (the gathered buffer);
//   reduce_scatter  every rank sends S (W segments of S/W), receives S/W;
//   all_to_all      every rank sends S (W blocks of S/W), receives S.
// algbw = S / time; busbw = algbw * (W - 1) / W for all three (nccl-tests'
// PERFORMANCE.md). The bytes each rank's communicator counts are checked
// against Communicator.h's rule: (S/W) * (W - 1) for all three.
//
// runCollectivesSection runs them for the report's collectives section.
//
//===----------------------------------------------------------------------===//

#include "BenchCommon.h"
#include "BenchRun.h"

#include "shardlin/runtime/backends/Mpi.h"
#include "shardlin/runtime/backends/Host.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

namespace shardlin::bench {

static const char *const kOps[] = {"all_gather", "reduce_scatter",
                                   "all_to_all"};

rt::Status runCollectivesOnRank(rt::Communicator &comm,
                                const std::vector<uint64_t> &sizes,
                                const TimingOptions &opt,
                                std::vector<CollectiveResult> &results) {
  const int w = comm.worldSize();
  const int me = comm.rank();
  results.clear();
  for (uint64_t size : sizes)
    for (const char *op : kOps) {
      CollectiveResult r;
      r.backend = comm.backendName();
      r.op = op;
      r.worldSize = w;
      const int64_t count = std::max<int64_t>(1, size / (4 * w));
      r.sizeBytes = static_cast<uint64_t>(count) * w * 4;
      r.bytesExpected = static_cast<uint64_t>(count) * (w - 1) * 4;
      std::vector<float> send(static_cast<size_t>(r.op == "all_gather"
                                                      ? count
                                                      : count * w),
                              1.0f);
      std::vector<float> recv(static_cast<size_t>(
                                  r.op == "reduce_scatter" ? count : count * w),
                              0.0f);
      std::vector<int64_t> counts(w, count), displs(w);
      for (int q = 0; q < w; ++q)
        displs[q] = q * count;
      std::function<rt::Status()> run;
      if (r.op == "all_gather")
        run = [&] {
          return comm.allGatherV(send.data(), count, recv.data(), counts,
                                 displs, rt::DType::F32);
        };
      else if (r.op == "reduce_scatter")
        run = [&] {
          return comm.reduceScatterV(send.data(), counts, displs, recv.data(),
                                     rt::DType::F32);
        };
      else
        run = [&] {
          return comm.allToAllV(send.data(), counts, displs, recv.data(),
                                counts, displs, rt::DType::F32);
        };
      uint64_t bytes = 0;
      bool consistent = true;
      SHARDLIN_RETURN_IF_ERROR(
          timeOnRank(comm, opt, run, r.timing, bytes, consistent));
      std::vector<double> all;
      SHARDLIN_RETURN_IF_ERROR(gatherDoubles(
          comm, {double(bytes), consistent ? 1.0 : 0.0}, all));
      r.bytesMatch = true;
      for (int q = 0; q < w; ++q) {
        uint64_t b = static_cast<uint64_t>(all[2 * q]);
        r.bytesSent = std::max(r.bytesSent, b);
        r.bytesMatch &= b == r.bytesExpected && all[2 * q + 1] != 0.0;
      }
      double t = r.timing.median();
      r.algbw = t > 0 ? r.sizeBytes / t / 1e9 : 0;
      r.busbw = r.algbw * (w - 1) / w;
      (void)me;
      results.push_back(std::move(r));
    }
  return rt::Status::ok();
}

std::vector<CollectiveResult>
runCollectivesThreads(int worldSize, const std::vector<uint64_t> &sizes,
                      const TimingOptions &opt) {
  auto comms = rt::createThreadsGroup(worldSize);
  std::vector<std::vector<CollectiveResult>> perRank(worldSize);
  std::vector<rt::Status> status(worldSize);
  std::vector<std::thread> threads;
  for (int r = 0; r < worldSize; ++r)
    threads.emplace_back([&, r] {
      status[r] = runCollectivesOnRank(*comms[r], sizes, opt, perRank[r]);
    });
  for (std::thread &t : threads)
    t.join();
  for (int r = 0; r < worldSize; ++r)
    if (!status[r]) {
      CollectiveResult e;
      e.backend = "threads";
      e.worldSize = worldSize;
      e.error = status[r].message();
      return {e};
    }
  return perRank[0];
}

rt::Status runCollectivesMpi(int worldSize, const std::vector<uint64_t> &sizes,
                             const TimingOptions &opt,
                             const std::string &mpirun,
                             std::vector<CollectiveResult> &results) {
  results.clear();
  const std::string dir = makeTempDir();
  std::string sizeList;
  for (uint64_t s : sizes)
    sizeList += (sizeList.empty() ? "" : ",") + std::to_string(s);
  rt::Status launched = launchMpiWorker(
      mpirun, worldSize, " --mpi-collectives-worker=" + sizeList, dir, opt,
      [&](std::istringstream &ls) {
        CollectiveResult r;
        int match = 0, trials = 0;
        ls >> r.op >> r.worldSize >> r.sizeBytes >> r.bytesSent >>
            r.bytesExpected >> match >> r.timing.iters >> trials;
        for (int t = 0; t < trials; ++t) {
          double v;
          ls >> v;
          r.timing.perRun.push_back(v);
        }
        r.timing.trials = trials;
        r.backend = "mpi";
        r.bytesMatch = match != 0;
        double t = r.timing.median();
        r.algbw = t > 0 ? r.sizeBytes / t / 1e9 : 0;
        r.busbw = r.algbw * (r.worldSize - 1) / r.worldSize;
        results.push_back(std::move(r));
      });
  std::string rm = "rm -rf " + shellQuote(dir);
  (void)std::system(rm.c_str());
  return launched;
}

int mpiCollectivesWorkerMain(int argc, char **argv,
                             const std::vector<uint64_t> &sizes,
                             const std::string &outPath,
                             const TimingOptions &opt) {
  std::unique_ptr<rt::MpiSession> session;
  rt::Status s = rt::MpiSession::create(&argc, &argv, session);
  std::unique_ptr<rt::Communicator> comm;
  if (s)
    s = rt::createMpiCommunicator(rt::CommOptions(), comm);
  std::vector<CollectiveResult> results;
  if (s)
    s = runCollectivesOnRank(*comm, sizes, opt, results);
  if (!s) {
    std::fprintf(stderr, "shardlin-bench collectives worker: %s\n",
                 s.message().c_str());
    return 1;
  }
  if (comm->rank() == 0) {
    std::ofstream out(outPath);
    for (const CollectiveResult &r : results) {
      out << r.op << " " << r.worldSize << " " << r.sizeBytes << " "
          << r.bytesSent << " " << r.bytesExpected << " "
          << (r.bytesMatch ? 1 : 0) << " " << r.timing.iters << " "
          << r.timing.perRun.size();
      char buf[64];
      for (double v : r.timing.perRun) {
        std::snprintf(buf, sizeof buf, " %.9g", v);
        out << buf;
      }
      out << "\n";
    }
  }
  return 0;
}

//===----------------------------------------------------------------------===//
// The section
//===----------------------------------------------------------------------===//

/// Every backend and W >= 2 of the options; a failed MPI launch becomes one
/// result with its error.
static void measureCollectives(BenchRun &run) {
  const Options &o = run.opts;
  for (const std::string &backend : o.backends)
    for (int w : o.collectiveWorldSizes) {
      if (w < 2)
        continue;
      std::vector<CollectiveResult> rs;
      if (backend == "threads") {
        rs = runCollectivesThreads(w, o.collectiveSizes, o.timing);
      } else {
        rt::Status s =
            runCollectivesMpi(w, o.collectiveSizes, o.timing, o.mpirun, rs);
        if (!s) {
          CollectiveResult e;
          e.backend = "mpi";
          e.worldSize = w;
          e.error = s.message();
          rs.push_back(e);
        }
      }
      run.collectives.insert(run.collectives.end(), rs.begin(), rs.end());
    }
}

static void printCollectives(BenchRun &run) {
  std::printf("%-7s %1s %-14s %10s %10s %9s %9s %11s %11s %-3s\n", "backend",
              "W", "collective", "size", "time us", "algbw", "busbw",
              "bytes/rank", "expected", "ok");
  for (const CollectiveResult &c : run.collectives) {
    if (!c.error.empty()) {
      std::printf("%-7s %1d FAILED: %s\n", c.backend.c_str(), c.worldSize,
                  c.error.c_str());
      run.failed = true;
      continue;
    }
    if (!c.bytesMatch)
      run.failed = true;
    std::printf("%-7s %1d %-14s %10s %10.1f %9.2f %9.2f %11llu %11llu %-3s\n",
                c.backend.c_str(), c.worldSize, c.op.c_str(),
                humanBytes(c.sizeBytes).c_str(), 1e6 * c.timing.median(),
                c.algbw, c.busbw, (unsigned long long)c.bytesSent,
                (unsigned long long)c.bytesExpected,
                c.bytesMatch ? "yes" : "NO");
  }
  std::printf("(algbw, busbw in GB/s; busbw = algbw * (W-1)/W for all three, "
              "as nccl-tests)\n");
}

void runCollectivesSection(BenchRun &run) {
  run.beginSection("collectives");
  if (!run.opts.sections.count("collectives"))
    return;
  std::printf("\n== collectives (f32; size = nccl-tests' size; load %.2f) ==\n",
              run.sectionLoad["collectives"]);
  measureCollectives(run);
  printCollectives(run);
}

} // namespace shardlin::bench
