//===- LocalSliceTest.cpp - local_slice: per-rank ranges of a whole value -===//
//
// local_slice (docs/runtime.md, "local_slice") gives rank r the range
// [b_r, e_r) of one dim of a value every rank holds whole; the ranges may
// overlap and may be empty. Checked here:
//  - the text form read back exactly, and the verifier's messages;
//  - a program of three slices through runProgram on 3 threads: along the
//    outermost dim (a view), along a middle dim (a strided copy of rows)
//    and along the last dim with a static result, with overlapping ranges
//    and an empty one; every rank's every result equals the slice of the
//    random (non-zero) input computed here, bit for bit (a copy).
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

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

namespace rt = shardlin::rt;

namespace {

// a [6, 5] and b [3, 6, 4], every rank the same values; on 3 ranks:
// value 2 = a[b_r:e_r, :] with ranges [0,4) [2,6) [3,3) (a view),
// value 3 = b[:, b_r:e_r, :] with [1,3) [0,6) [5,6) (a strided copy),
// value 4 = b[:, :, b_r:e_r] with [0,2) [2,4) [1,3) (static, overlapping).
const char *kSlices = R"(shardlin-program v1
name slices
world_size 3
values 5
value 0 f32 2 6 5
value 1 f32 3 3 6 4
value 2 f32 2 ? 5
value 3 f32 3 3 ? 4
value 4 f32 3 3 6 2
arg 0 plain replicated
arg 1 plain replicated
instr local_slice result 2 operands 1 0 dim 1 0 ranges 6 0 4 2 6 3 3 loc s.mlir:1:1
instr local_slice result 3 operands 1 1 dim 1 1 ranges 6 1 3 0 6 5 6 loc s.mlir:2:1
instr local_slice result 4 operands 1 1 dim 1 2 ranges 6 0 2 2 4 1 3 loc s.mlir:3:1
results 3 2 3 4
end
)";

TEST(LocalSlice, TextFormReadsBackExactly) {
  rt::Program p;
  rt::Status s = rt::parseProgram(kSlices, p);
  ASSERT_TRUE(s) << s.message();
  EXPECT_EQ(rt::serializeProgram(p), kSlices);
  EXPECT_EQ(p.instrs[1].op, rt::OpCode::LocalSlice);
  EXPECT_EQ(p.instrs[1].sliceDim, std::vector<int64_t>{1});
  EXPECT_EQ(p.instrs[1].ranges, (std::vector<int64_t>{1, 3, 0, 6, 5, 6}));
}

TEST(LocalSlice, TheVerifierNamesWhatIsWrong) {
  rt::testutil::expectRefused(
      kSlices,
      {{"dim 1 0 ranges", "dim 1 2 ranges",
        "instruction 0 (local_slice) needs one dim of its operand [6, 5]"},
       {"ranges 6 0 4 2 6 3 3", "ranges 4 0 4 2 6",
        "instruction 0 (local_slice) needs one [begin, end) pair per rank, "
        "not 4 numbers"},
       {"ranges 6 0 4 2 6 3 3", "ranges 6 0 4 2 7 3 3",
        "instruction 0 (local_slice): the range [2, 7) of rank 1 is not "
        "within dim 0 of [6, 5]"},
       {"ranges 6 0 4 2 6 3 3", "ranges 6 0 4 6 2 3 3",
        "instruction 0 (local_slice): the range [6, 2) of rank 1 is not "
        "within dim 0 of [6, 5]"},
       {"ranges 6 0 2 2 4 1 3", "ranges 6 0 2 2 4 1 4",
        "instruction 2 (local_slice): the result [3, 6, 2] is static along "
        "dim 2 but the range [1, 4) of rank 2 has 3"},
       {"value 2 f32 2 ? 5", "value 2 f32 2 ? 4",
        "instruction 0 (local_slice) changes dim 1: [6, 5] to [?, 4]"},
       {"value 2 f32 2 ? 5", "value 2 f32 3 1 ? 5",
        "instruction 0 (local_slice) changes the rank"}});
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

TEST(LocalSlice, EveryRankGetsItsRangeOnThreeThreads) {
  rt::Program program;
  rt::Status parsed = rt::parseProgram(kSlices, program);
  ASSERT_TRUE(parsed) << parsed.message();
  const int w = 3;
  const std::vector<float> a = rt::test::randomValues(6 * 5, 91);
  const std::vector<float> b = rt::test::randomValues(3 * 6 * 4, 92);
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
      results[r].emplace_back(size_t(n) + 1, -7.0f);
    }
    for (std::vector<float> &out : results[r])
      buffers.results.push_back(out.data());
    return rt::Status::ok();
  };
  rt::RunOptions options;
  options.worldSize = w;
  rt::Status s = rt::runProgram(program, options, callbacks);
  ASSERT_TRUE(s) << s.message();
  for (int r = 0; r < w; ++r) {
    SCOPED_TRACE("rank " + std::to_string(r));
    const std::vector<float> want[3] = {
        sliceOf(a, {6, 5}, 0, program.instrs[0].ranges[2 * r],
                program.instrs[0].ranges[2 * r + 1]),
        sliceOf(b, {3, 6, 4}, 1, program.instrs[1].ranges[2 * r],
                program.instrs[1].ranges[2 * r + 1]),
        sliceOf(b, {3, 6, 4}, 2, program.instrs[2].ranges[2 * r],
                program.instrs[2].ranges[2 * r + 1])};
    for (size_t i = 0; i < 3; ++i) {
      ASSERT_EQ(results[r][i].size(), want[i].size() + 1) << "result " << i;
      // std::equal: an empty range compares no pointer (memcmp takes no
      // null one).
      EXPECT_TRUE(std::equal(want[i].begin(), want[i].end(),
                             results[r][i].begin()))
          << "result " << i;
      EXPECT_EQ(results[r][i].back(), -7.0f) << "result " << i
                                             << " wrote past its end";
    }
  }
}

} // namespace
