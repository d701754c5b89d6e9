//===- ErrorBound.h - The tests' error bound, written once ------*- C++ -*-===//
//
// Every numerical test compares each rank's output with a dense float64
// reference on inputs exactly representable in the tested type, so only
// the program's own roundings count. For f16/bf16 (unit roundoff u = 2^-11
// / 2^-8) each rounding of a stored value adds at most u times the
// magnitude: a computation that rounds `roundings` times is within
// roundings * u of the magnitude. f32 (u = 2^-24) and f64 (2^-53) get fixed
// bounds, 1e-5 and 1e-12, far above what their K additions and a few
// rounded steps can reach at the tests' sizes. The callers count their
// roundings (E2ESupport.cpp's linear layers: W + 2; BlockTesting.cpp's
// blocks: W + 4).
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_TESTING_ERRORBOUND_H
#define SHARDLIN_TESTING_ERRORBOUND_H

#include "shardlin/runtime/base/DType.h"

namespace shardlin::testing {

/// The relative bound (of the output's magnitude) of a computation in
/// `dtype` that rounds a stored value `roundings` times.
inline double roundingErrorBound(rt::DType dtype, double roundings) {
  switch (dtype) {
  case rt::DType::F64:
    return 1e-12;
  case rt::DType::F32:
    return 1e-5;
  case rt::DType::F16:
    return roundings * 0x1.0p-11;
  case rt::DType::BF16:
    return roundings * 0x1.0p-8;
  }
  return 0;
}

} // namespace shardlin::testing

#endif // SHARDLIN_TESTING_ERRORBOUND_H
