//===- ImportMpiTest.cpp - Upstream shard modules under mpirun ------------===//
//
// ImportEndToEndTest's cases for a job of W processes (ImportCases.h), each
// process running its rank through the file runner on the mpi backend and
// checking its own output (and rank 0 the assembled result). A plain
// program that ctest starts under mpirun; it exits non-zero on any failure,
// which fails the job.
//
//===----------------------------------------------------------------------===//

#include "ImportCases.h"
#include "shardlin/runtime/backends/Mpi.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>

namespace rt = ::shardlin::rt;
using namespace shardlin::e2e;

int main(int argc, char **argv) {
  std::unique_ptr<rt::MpiSession> mpi;
  if (rt::Status s = rt::MpiSession::create(&argc, &argv, mpi); !s) {
    std::fprintf(stderr, "mpi import: %s\n", s.message().c_str());
    return 1;
  }
  const int rank = mpi->rank(), w = mpi->worldSize();
  // Each process its own directory: its copies of the inputs, its outputs.
  char pattern[] = "/tmp/shardlin-import-mpi-XXXXXX";
  if (!mkdtemp(pattern)) {
    std::perror("mkdtemp");
    return 1;
  }
  const std::string dir = pattern;
  const std::vector<ImportCase> cases = importMpiCases(w);
  int failed = 0;
  for (const ImportCase &c : cases) {
    std::string report;
    if (runImportCase(c, "mpi", rank, dir, report) != 0) {
      ++failed;
      std::fprintf(stderr, "mpi import: rank %d of %d: FAILED %s\n%s", rank, w,
                   c.name().c_str(), report.c_str());
    }
  }
  std::filesystem::remove_all(dir);
  std::printf("mpi import: rank %d of %d: %zu cases, %d failed\n", rank, w,
              cases.size(), failed);
  return failed == 0 ? 0 : 1;
}
