//===- GpuBenchSupport.h - What the GPU bench's sections share -*- C++ -*-===//
//
// Medians, fixed-point figures and the aligned Markdown tables the
// sections of shardlin-gpu-bench print (shardlin-gpu-bench.cpp's GEMM and
// collectives, GpuBlocks.cpp's blocks).
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_BENCH_GPU_GPUBENCHSUPPORT_H
#define SHARDLIN_BENCH_GPU_GPUBENCHSUPPORT_H

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

namespace shardlin::gpubench {

/// Deterministic random values for the benches' operands (splitmix64: fast
/// enough for the large blocks' weights).
class SplitMix {
public:
  explicit SplitMix(uint64_t seed) : state_(seed * 0x9E3779B97F4A7C15ull + 1) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  /// +-[0.25, 1]: never zero, all of one magnitude.
  double signedUnit() {
    const uint64_t r = next();
    const double mag = 0.25 + 0.75 * double(r >> 11) * 0x1p-53;
    return r & 1 ? -mag : mag;
  }

private:
  uint64_t state_;
};

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

inline std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", digits, v);
  return buf;
}

/// Rows of a table, columns aligned when printed.
class Table {
public:
  explicit Table(std::vector<std::string> header) {
    rows_.push_back(std::move(header));
  }
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  void print() const {
    std::vector<size_t> width;
    for (const auto &row : rows_)
      for (size_t c = 0; c < row.size(); ++c) {
        width.resize(std::max(width.size(), row.size()), 0);
        width[c] = std::max(width[c], row[c].size());
      }
    for (size_t r = 0; r < rows_.size(); ++r) {
      std::string line = "|";
      for (size_t c = 0; c < rows_[r].size(); ++c)
        line += " " + rows_[r][c] +
                std::string(width[c] - rows_[r][c].size(), ' ') + " |";
      std::cout << line << "\n";
      if (r == 0) {
        std::string rule = "|";
        for (size_t w : width)
          rule += std::string(w + 2, '-') + "|";
        std::cout << rule << "\n";
      }
    }
    std::cout << std::flush;
  }

private:
  std::vector<std::vector<std::string>> rows_;
};

} // namespace shardlin::gpubench

#endif // SHARDLIN_BENCH_GPU_GPUBENCHSUPPORT_H
