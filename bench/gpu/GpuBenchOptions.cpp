//===- GpuBenchOptions.cpp - shardlin-gpu-bench's command line ------------===//

#include "GpuBenchOptions.h"

#include "shardlin/runtime/backends/Cuda.h"

#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>

namespace shardlin::gpubench {

namespace {

namespace rt = ::shardlin::rt;

[[noreturn]] void die(const std::string &message) {
  std::cerr << ("shardlin-gpu-bench: error: " + message + "\n") << std::flush;
  std::exit(1);
}


const char *usage =
    "usage: shardlin-gpu-bench [--device=N] [--gemm-size=8192] "
    "[--gemm-reps=30]\n"
    "                          [--coll-sizes=64K,64M,256M] [--coll-reps=20] "
    "[--ranks=2,8]\n"
    "                          [--no-gemm] [--no-collectives]\n"
    "                          [--blocks=DIR] [--blocks-reps=20]\n"
    "                          [--blocks-backend=cuda-local|threads]\n"
    "                          [--torch-blocks=FILE] [--blocks-overlap=2,4]\n"
    "                          [--bias-experiments]\n";

bool parseInt(const std::string &text, int64_t lo, int64_t hi, int64_t &out) {
  char *end = nullptr;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || !end || *end != '\0' || v < lo || v > hi)
    return false;
  out = v;
  return true;
}

} // namespace

Options parseOptions(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](const char *flag, std::string &out) {
      const std::string f = std::string(flag) + "=";
      if (a.rfind(f, 0) != 0)
        return false;
      out = a.substr(f.size());
      return true;
    };
    std::string v;
    int64_t n = 0;
    if (a == "--help" || a == "-h") {
      std::cout << usage;
      std::exit(0);
    } else if (a == "--no-gemm") {
      o.gemm = false;
    } else if (a == "--bias-experiments") {
      o.biasExperiments = true;
    } else if (a == "--no-collectives") {
      o.collectives = false;
    } else if (value("--device", v)) {
      if (!parseInt(v, 0, 1 << 16, n))
        die("--device must be a device number, got '" + v + "'");
      o.device = int(n);
    } else if (value("--gemm-size", v)) {
      if (!parseInt(v, 1, 65536, n))
        die("--gemm-size must be in [1, 65536], got '" + v + "'");
      o.gemmSize = n;
    } else if (value("--gemm-reps", v)) {
      if (!parseInt(v, 1, 100000, n))
        die("--gemm-reps must be a positive integer, got '" + v + "'");
      o.gemmReps = int(n);
    } else if (value("--coll-sizes", v)) {
      // Sizes with a K (KiB) or M (MiB) suffix, comma-separated.
      o.collBytes.clear();
      std::stringstream ss(v);
      std::string item;
      while (std::getline(ss, item, ',')) {
        const char unit = item.empty() ? '\0' : item.back();
        const int shift = unit == 'K' ? 10 : unit == 'M' ? 20 : -1;
        if (shift < 0 ||
            !parseInt(item.substr(0, item.size() - 1), 1,
                      shift == 10 ? (int64_t(1) << 26) : 65536, n))
          die("--coll-sizes takes sizes like 64K or 256M (KiB, MiB; at most "
              "64 GiB), got '" + v + "'");
        o.collBytes.push_back(size_t(n) << shift);
      }
      if (o.collBytes.empty())
        die("--coll-sizes is empty");
    } else if (value("--coll-reps", v)) {
      if (!parseInt(v, 1, 100000, n))
        die("--coll-reps must be a positive integer, got '" + v + "'");
      o.collReps = int(n);
    } else if (value("--blocks", v)) {
      if (v.empty())
        die("--blocks needs a directory");
      o.blocks.dir = v;
    } else if (value("--blocks-reps", v)) {
      if (!parseInt(v, 1, 100000, n))
        die("--blocks-reps must be a positive integer, got '" + v + "'");
      o.blocks.reps = int(n);
    } else if (value("--blocks-backend", v)) {
      if (v != "cuda-local" && v != "threads")
        die("--blocks-backend is cuda-local or threads, not '" + v + "'");
      o.blocks.backend = v;
    } else if (value("--torch-blocks", v)) {
      o.blocks.torchResults = v;
    } else if (value("--blocks-overlap", v)) {
      // Row chunk counts, comma-separated; "0": no overlap table.
      o.blocks.overlapChunks.clear();
      std::stringstream ss(v);
      std::string item;
      while (std::getline(ss, item, ',')) {
        if (!parseInt(item, 0, 64, n))
          die("--blocks-overlap takes chunk counts from 2 to 64 (or 0: no "
              "overlap table), got '" + v + "'");
        if (n >= 2)
          o.blocks.overlapChunks.push_back(int(n));
        else if (n == 1)
          die("--blocks-overlap takes chunk counts from 2 to 64 (or 0: no "
              "overlap table), got '" + v + "'");
      }
    } else if (value("--ranks", v)) {
      o.ranks.clear();
      std::stringstream ss(v);
      std::string item;
      while (std::getline(ss, item, ','))
        if (!parseInt(item, 1, rt::kMaxCudaLocalRanks, n))
          die("--ranks takes world sizes in [1, " +
              std::to_string(rt::kMaxCudaLocalRanks) + "], got '" + v + "'");
        else
          o.ranks.push_back(int(n));
      if (o.ranks.empty())
        die("--ranks is empty");
    } else {
      die("unknown option '" + a + "'\n" + usage);
    }
  }
  return o;
}

} // namespace shardlin::gpubench
