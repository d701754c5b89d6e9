//===- LocalPlaceTest.cpp - local_place: local_slice's adjoint ------------===//
//
// local_place (docs/runtime.md, "local_slice and local_place") gives rank r
// a zero value of the result's shape with its operand at [b_r, e_r) of one
// dim: the adjoint of local_slice, which the backward of a sliced K/V
// weight uses. Checked here:
//  - the text form read back exactly, and the verifier's messages;
//  - a program of three slices, each placed back, through runProgram on 3
//    threads: along the outermost dim (placed at other offsets than it was
//    sliced from, one range empty), a middle dim (a strided copy of rows)
//    and the last dim (overlapping ranges); every rank's every result
//    equals the placement computed here from the random (non-zero) inputs,
//    bit for bit (a copy and +0 elsewhere);
//  - an inf and a NaN in the input stay in their own elements: no other
//    element of any rank's result is non-finite.
//
//===----------------------------------------------------------------------===//

#include "shardlin/runtime/backends/Host.h"
#include "shardlin/runtime/backends/Registry.h"
#include "shardlin/runtime/exec/Execute.h"
#include "shardlin/runtime/program/OpTable.h"
#include "shardlin/runtime/program/ProgramText.h"

#include "ProgramEdit.h"
#include "RandomValues.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace rt = shardlin::rt;

namespace {

// a [6, 5] and b [3, 6, 4], every rank the same values; on 3 ranks:
// value 3 = a[0:4 | 2:6 | 3:3, :] placed at rows [1,5) [0,4) [6,6) of 6,
// value 5 = b[:, 1:3 | 0:6 | 5:6, :] placed back at the same rows of 6,
// value 7 = b[:, :, 0:2 | 2:4 | 1:3] placed back at the same columns of 4.
const char *kPlaces = R"(shardlin-program v1
name places
world_size 3
values 8
value 0 f32 2 6 5
value 1 f32 3 3 6 4
value 2 f32 2 ? 5
value 3 f32 2 6 5
value 4 f32 3 3 ? 4
value 5 f32 3 3 6 4
value 6 f32 3 3 6 2
value 7 f32 3 3 6 4
arg 0 plain replicated
arg 1 plain replicated
instr local_slice result 2 operands 1 0 dim 1 0 ranges 6 0 4 2 6 3 3 loc p.mlir:1:1
instr local_place result 3 operands 1 2 dim 1 0 ranges 6 1 5 0 4 6 6 loc p.mlir:2:1
instr local_slice result 4 operands 1 1 dim 1 1 ranges 6 1 3 0 6 5 6 loc p.mlir:3:1
instr local_place result 5 operands 1 4 dim 1 1 ranges 6 1 3 0 6 5 6 loc p.mlir:4:1
instr local_slice result 6 operands 1 1 dim 1 2 ranges 6 0 2 2 4 1 3 loc p.mlir:5:1
instr local_place result 7 operands 1 6 dim 1 2 ranges 6 0 2 2 4 1 3 loc p.mlir:6:1
results 3 3 5 7
end
)";

TEST(LocalPlace, TextFormReadsBackExactly) {
  rt::Program p;
  rt::Status s = rt::parseProgram(kPlaces, p);
  ASSERT_TRUE(s) << s.message();
  EXPECT_EQ(rt::serializeProgram(p), kPlaces);
  EXPECT_EQ(p.instrs[1].op, rt::OpCode::LocalPlace);
  EXPECT_EQ(p.instrs[1].sliceDim, std::vector<int64_t>{0});
  EXPECT_EQ(p.instrs[1].ranges, (std::vector<int64_t>{1, 5, 0, 4, 6, 6}));
}

TEST(LocalPlace, TheVerifierNamesWhatIsWrong) {
  rt::testutil::expectRefused(
      kPlaces,
      {{"dim 1 0 ranges 6 1 5", "dim 1 2 ranges 6 1 5",
        "instruction 1 (local_place) needs one dim of its result [6, 5]"},
       {"ranges 6 1 5 0 4 6 6", "ranges 4 1 5 0 4",
        "instruction 1 (local_place) needs one [begin, end) pair per rank, "
        "not 4 numbers"},
       {"ranges 6 1 5 0 4 6 6", "ranges 6 1 5 0 4 6 7",
        "instruction 1 (local_place): the range [6, 7) of rank 2 is not "
        "within dim 0 of [6, 5]"},
       {"ranges 6 0 2 2 4 1 3 loc p.mlir:6:1",
        "ranges 6 0 2 2 4 1 4 loc p.mlir:6:1",
        "instruction 5 (local_place): the operand [3, 6, 2] is static along "
        "dim 2 but the range [1, 4) of rank 2 has 3"},
       {"value 3 f32 2 6 5", "value 3 f32 2 6 4",
        "instruction 1 (local_place) changes dim 1: [?, 5] to [6, 4]"},
       {"value 3 f32 2 6 5", "value 3 f32 2 ? 5",
        "instruction 1 (local_place) places into a result [?, 5] dynamic "
        "along dim 0, which must be static"},
       {"value 3 f32 2 6 5", "value 3 f64 2 6 5",
        "instruction 1 (local_place) mixes element types"}});
}

/// y = zeros of `shape` with x (rows of `dim` sized e - b) at [b, e) of
/// `dim`, row-major.
std::vector<float> placeOf(const std::vector<float> &x,
                           const std::vector<int64_t> &shape, size_t dim,
                           int64_t b, int64_t e) {
  int64_t outer = 1, inner = 1, total = 1;
  for (size_t d = 0; d < dim; ++d)
    outer *= shape[d];
  for (size_t d = dim + 1; d < shape.size(); ++d)
    inner *= shape[d];
  for (int64_t d : shape)
    total *= d;
  std::vector<float> y(size_t(total), 0.0f);
  size_t k = 0;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = b; i < e; ++i)
      for (int64_t j = 0; j < inner; ++j)
        y[size_t((o * shape[dim] + i) * inner + j)] = x[k++];
  return y;
}

/// x[.., b:e, ..] along `dim` of a row-major tensor of `shape`.
std::vector<float> sliceOf(const std::vector<float> &x,
                           const std::vector<int64_t> &shape, size_t dim,
                           int64_t b, int64_t e) {
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < dim; ++d)
    outer *= shape[d];
  for (size_t d = dim + 1; d < shape.size(); ++d)
    inner *= shape[d];
  std::vector<float> out;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = b; i < e; ++i)
      for (int64_t j = 0; j < inner; ++j)
        out.push_back(x[size_t((o * shape[dim] + i) * inner + j)]);
  return out;
}

/// Every rank's results of kPlaces on 3 threads, each with one sentinel
/// element past its end.
std::vector<std::vector<std::vector<float>>>
runPlaces(const rt::Program &program, const std::vector<float> &a,
          const std::vector<float> &b) {
  const int w = 3;
  std::vector<std::vector<std::vector<float>>> results(w);
  rt::RankCallbacks callbacks;
  callbacks.bind = [&](const rt::Plan &plan, rt::RankDevice &,
                       rt::RankBuffers &buffers) {
    const int r = plan.rank();
    buffers.args = {a.data(), b.data()};
    results[r].clear();
    buffers.results.clear();
    for (size_t i = 0; i < plan.numResults(); ++i) {
      int64_t n = 1;
      for (int64_t d : plan.resultShape(i))
        n *= d;
      // Not zero: the op must write its zeros itself.
      results[r].emplace_back(size_t(n) + 1, -7.0f);
    }
    for (std::vector<float> &out : results[r])
      buffers.results.push_back(out.data());
    return rt::Status::ok();
  };
  rt::RunOptions options;
  options.worldSize = w;
  rt::Status s = rt::runProgram(program, options, callbacks);
  EXPECT_TRUE(s) << s.message();
  return results;
}

/// What rank r's three results must be, bit for bit.
std::vector<std::vector<float>> expected(const rt::Program &p, int r,
                                         const std::vector<float> &a,
                                         const std::vector<float> &b) {
  auto range = [&](size_t instr, size_t end) {
    return p.instrs[instr].ranges[2 * size_t(r) + end];
  };
  return {placeOf(sliceOf(a, {6, 5}, 0, range(0, 0), range(0, 1)), {6, 5},
                  0, range(1, 0), range(1, 1)),
          placeOf(sliceOf(b, {3, 6, 4}, 1, range(2, 0), range(2, 1)),
                  {3, 6, 4}, 1, range(3, 0), range(3, 1)),
          placeOf(sliceOf(b, {3, 6, 4}, 2, range(4, 0), range(4, 1)),
                  {3, 6, 4}, 2, range(5, 0), range(5, 1))};
}

/// Checks every rank's results against `expected`, bit for bit (+0 where
/// nothing is placed, NaN payloads included), and the sentinels.
void checkRanks(const rt::Program &program,
                const std::vector<std::vector<std::vector<float>>> &results,
                const std::vector<float> &a, const std::vector<float> &b) {
  for (int r = 0; r < 3; ++r) {
    SCOPED_TRACE("rank " + std::to_string(r));
    ASSERT_EQ(results[r].size(), 3u);
    const std::vector<std::vector<float>> want = expected(program, r, a, b);
    for (size_t i = 0; i < 3; ++i) {
      ASSERT_EQ(results[r][i].size(), want[i].size() + 1) << "result " << i;
      EXPECT_EQ(std::memcmp(want[i].data(), results[r][i].data(),
                            want[i].size() * sizeof(float)),
                0)
          << "result " << i;
      EXPECT_EQ(results[r][i].back(), -7.0f)
          << "result " << i << " wrote past its end";
    }
  }
}

TEST(LocalPlace, EveryRankGetsItsRangeOnThreeThreads) {
  rt::Program program;
  rt::Status parsed = rt::parseProgram(kPlaces, program);
  ASSERT_TRUE(parsed) << parsed.message();
  const std::vector<float> a = rt::test::randomValues(6 * 5, 93);
  const std::vector<float> b = rt::test::randomValues(3 * 6 * 4, 94);
  for (float v : a)
    ASSERT_NE(v, 0.0f); // A placed zero would pass for an unplaced one.
  for (float v : b)
    ASSERT_NE(v, 0.0f);
  checkRanks(program, runPlaces(program, a, b), a, b);
}

TEST(LocalPlace, AnInfOrNaNStaysInItsElement) {
  rt::Program program;
  rt::Status parsed = rt::parseProgram(kPlaces, program);
  ASSERT_TRUE(parsed) << parsed.message();
  std::vector<float> a = rt::test::randomValues(6 * 5, 95);
  std::vector<float> b = rt::test::randomValues(3 * 6 * 4, 96);
  // a[2, 3] (in ranks 0's and 1's slices of a), b[1, 2, 1] (in ranks 0's
  // and 1's slices along dim 1, ranks 0's and 2's along dim 2).
  a[2 * 5 + 3] = std::numeric_limits<float>::infinity();
  b[(1 * 6 + 2) * 4 + 1] = std::numeric_limits<float>::quiet_NaN();
  const auto results = runPlaces(program, a, b);
  checkRanks(program, results, a, b);
  // The count of non-finite elements is the count of copies of the two.
  for (int r = 0; r < 3; ++r) {
    const std::vector<std::vector<float>> want = expected(program, r, a, b);
    for (size_t i = 0; i < 3; ++i) {
      size_t got = 0, wanted = 0;
      for (size_t k = 0; k < want[i].size(); ++k) {
        got += !std::isfinite(results[r][i][k]);
        wanted += !std::isfinite(want[i][k]);
      }
      EXPECT_EQ(got, wanted) << "rank " << r << " result " << i;
      EXPECT_LE(wanted, 1u);
    }
  }
  // The inf reaches rank 0's first result (a[2, 3] at row 3) and rank 1's
  // (at row 0): the test sees one.
  EXPECT_TRUE(std::isinf(results[0][0][3 * 5 + 3]));
  EXPECT_TRUE(std::isnan(results[1][1][(1 * 6 + 2) * 4 + 1]));
}

} // namespace
