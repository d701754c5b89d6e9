//===- RandomValues.h - Random test inputs that are never zero --*- C++ -*-===//
#ifndef SHARDLIN_RUNTIME_TEST_RANDOMVALUES_H
#define SHARDLIN_RUNTIME_TEST_RANDOMVALUES_H

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

namespace shardlin::rt::test {

/// `n` floats uniform in +-[0.25, 1] (never zero), from `seed`.
inline std::vector<float> randomValues(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> mag(0.25f, 1.0f);
  std::vector<float> v(n);
  for (float &x : v)
    x = (rng() & 1 ? -1.0f : 1.0f) * mag(rng);
  return v;
}

} // namespace shardlin::rt::test

#endif // SHARDLIN_RUNTIME_TEST_RANDOMVALUES_H
