//===- GemmEpiloguePlanTest.cpp - Plans that fuse a chain into a GEMM -----===//
//
// A plan runs an elementwise instruction that reads the result of the gemm
// right before it as that GEMM's epilogue (PlanOptions::fuseGemmEpilogues).
// Here on the host (OpenBLAS, one block of rows after another) for the
// local part of a col-wise linear: rank r computes act(x W_c(r)^T + b_c(r))
// for its chunk c(r) of the N output features, with
//  - N = 5 over W = 4 ranks, placements [3, 0, 2, 1]: chunks of 2, 2, 1 and
//    0 features, so rank 1's GEMM and chain have no columns;
//  - N = 3072 over W = 3, placements [2, 0, 1], 530 rows: blocks of 256,
//    256 and 18 rows (CpuGemm.cpp's epilogueRows), checked against the
//    reference on the rows at and around the blocks' edges and every 37th,
//    and fused against unfused on every element;
// in two forms: GELU-tanh of a GEMM with its bias fused, written over C;
// and ReLU(C + the bias chunk as a row vector) where C is also a program
// result (so the chain's result is a buffer of its own and C must still
// hold the product). Every rank's results, fused and unfused, on every
// dtype, are compared with the float64 reference (bound: the GEMM's, as in
// GemmSuite.h, times the activation's slope 1.2, plus the activation's own
// 4e-6 relative and 1e-6 absolute in f32, and one rounding for f16/bf16),
// and the fused results with the unfused ones within twice that. The plan
// itself is checked to have fused (or not) the pair.
//
//===----------------------------------------------------------------------===//

#include "ExprTestSupport.h"
#include "GemmSuite.h"

#include "shardlin/runtime/program/ProgramText.h"
#include "shardlin/runtime/base/ChunkLayout.h"
#include "shardlin/runtime/exec/Plan.h"
#include "shardlin/runtime/program/Program.h"
#include "shardlin/runtime/tooling/Runner.h"
#include "shardlin/runtime/backends/Host.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace rt = shardlin::rt;
using rt::DType;
using rt::ExprOp;

namespace {

/// @T@ the element type, @B@ rows, @K@, @N@, @W@ the world size, @P@ the
/// placements. Value 5 (the GEMM's result) and value 6 (the chain's) are
/// results; the elementwise's expression is set by the test.
const char *const kProgram = R"(shardlin-program v1
name main
world_size @W@
values 7
value 0 @T@ 2 @B@ @K@
value 1 @T@ 2 ? @K@
value 2 @T@ 1 @N@
value 3 @T@ 2 ? @K@
value 4 @T@ 1 ?
value 5 @T@ 2 @B@ ?
value 6 @T@ 2 @B@ ?
arg 0 plain
arg 1 sharded 2 @N@ @K@ spec 0 @W@ @P@
arg 2 plain
instr local_shard result 3 operands 1 1
instr local_chunk result 4 operands 1 2 chunk 0 @W@ @P@
instr gemm result 5 operands @GEMM@ trans 0 1
instr elementwise result 6 operands @EW@ expr 1 input 0
results @RESULTS@
end
)";

std::string replaceAll(std::string s, const std::string &from,
                       const std::string &to) {
  for (size_t at = s.find(from); at != std::string::npos;
       at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

struct Layer {
  int w;
  std::vector<int> placements;
  int64_t rows, k, n;
};

/// The two forms: GELU-tanh over a GEMM with its bias (only the chain's
/// result returned, so it runs in place over C), or ReLU(C + bias chunk)
/// with C returned too.
rt::Program makeProgram(const Layer &l, DType t, bool relu) {
  std::string places;
  for (int p : l.placements)
    places += " " + std::to_string(p);
  std::string text = kProgram;
  text = replaceAll(text, "@T@", rt::dtypeName(t));
  text = replaceAll(text, "@W@", std::to_string(l.w));
  text = replaceAll(text, " @P@", places);
  text = replaceAll(text, "@B@", std::to_string(l.rows));
  text = replaceAll(text, "@K@", std::to_string(l.k));
  text = replaceAll(text, "@N@", std::to_string(l.n));
  text = replaceAll(text, "@GEMM@", relu ? "2 0 3" : "3 0 3 4");
  text = replaceAll(text, "@EW@", relu ? "2 5 4" : "1 5");
  text = replaceAll(text, "@RESULTS@", relu ? "2 6 5" : "1 6");
  rt::Program p;
  rt::Status s = rt::parseProgram(text, p);
  EXPECT_TRUE(s.isOk()) << s.message() << "\n" << text;
  rt::testing::Builder b;
  if (relu)
    b.op(ExprOp::Maximum, b.op(ExprOp::Add, b.input(0), b.input(1)),
         b.constant(0));
  else
    b.p = rt::testing::geluTanh();
  p.instrs.back().expr = b.p;
  s = p.validate();
  EXPECT_TRUE(s.isOk()) << s.message();
  return p;
}

/// The OpenBLAS backend, counting the calls of each kind (to see whether
/// the plan fused the pair).
class CountingGemm final : public rt::GemmBackend {
public:
  const char *name() const override { return inner_->name(); }
  rt::Status run(const rt::GemmOp &op) override {
    ++runs;
    return inner_->run(op);
  }
  rt::Status runWithEpilogue(const rt::GemmOp &op,
                             const rt::GemmEpilogue &epilogue,
                             rt::LocalOps &ops) override {
    ++fused;
    return inner_->runWithEpilogue(op, epilogue, ops);
  }
  int runs = 0, fused = 0;

private:
  std::unique_ptr<rt::GemmBackend> inner_ = rt::createCpuGemm();
};

/// Random values in +-[0.25, 1] stored in t, and their exact values.
void randomTensor(std::mt19937 &rng, DType t, size_t n, rt::testing::Bytes &bytes,
                  std::vector<double> &values) {
  const rt::testing::Matrix m = rt::testing::randomMatrix(rng, t, 1, int64_t(n),
                                                          int64_t(n));
  bytes = m.bytes;
  values = m.values;
}

void checkLayer(const Layer &l, bool relu) {
  for (DType t : {DType::F64, DType::F32, DType::F16, DType::BF16}) {
    SCOPED_TRACE(std::string(relu ? "relu(C + bias)" : "gelu-tanh(C)") +
                 " " + rt::dtypeName(t) + " N=" + std::to_string(l.n) +
                 " W=" + std::to_string(l.w));
    const rt::Program program = makeProgram(l, t, relu);
    std::mt19937 rng(static_cast<unsigned>(l.n + 7 * int(t)));
    rt::testing::Bytes x, w, bias;
    std::vector<double> xv, wv, bv;
    randomTensor(rng, t, size_t(l.rows * l.k), x, xv);
    randomTensor(rng, t, size_t(l.n * l.k), w, wv);
    randomTensor(rng, t, size_t(l.n), bias, bv);
    const rt::ExprProgram &expr = program.instrs.back().expr;
    const rt::ChunkLayout layout(l.n, program.args[1].sharding.placements);
    const size_t es = rt::dtypeSize(t);
    auto comms = rt::createThreadsGroup(l.w);
    for (int r = 0; r < l.w; ++r) {
      SCOPED_TRACE("rank " + std::to_string(r));
      const rt::Range cols = layout.ofRank(r);
      std::vector<uint8_t> chunk;
      rt::extractLocalChunk(w.data(), {l.n, l.k}, t, program.args[1].sharding,
                            r, chunk);
      // Fused and unfused: the chain's result, and C when returned.
      std::vector<rt::testing::Bytes> y(2), c(2);
      for (int fused = 0; fused < 2; ++fused) {
        rt::PlanOptions options;
        options.fuseGemmEpilogues = fused == 1;
        std::unique_ptr<rt::Plan> plan;
        rt::Status s =
            rt::Plan::build(program, r, l.w, rt::hostAllocator(), plan, {}, options);
        ASSERT_TRUE(s.isOk()) << s.message();
        ASSERT_EQ(plan->resultShape(0),
                  (std::vector<int64_t>{l.rows, cols.size}));
        y[fused].assign(size_t(l.rows * cols.size) * es, 0xFF);
        c[fused].assign(size_t(l.rows * cols.size) * es, 0xFF);
        std::vector<void *> results = {y[fused].data()};
        if (relu)
          results.push_back(c[fused].data());
        CountingGemm gemm;
        std::unique_ptr<rt::LocalOps> ops = rt::createHostLocalOps();
        s = plan->run(*comms[r], gemm, *ops,
                      {x.data(), chunk.data(), bias.data()}, results);
        ASSERT_TRUE(s.isOk()) << s.message();
        EXPECT_EQ(gemm.fused, fused);
        EXPECT_EQ(gemm.runs, 1 - fused);
      }
      const size_t count = size_t(l.rows * cols.size);
      std::vector<double> got(count), unfused(count), cv(count);
      rt::convertToF64(t, y[1].data(), got.data(), count);
      rt::convertToF64(t, y[0].data(), unfused.data(), count);
      rt::convertToF64(t, c[1].data(), cv.data(), count);
      int failures = 0;
      for (int64_t i = 0; i < l.rows; ++i)
        for (int64_t j = 0; j < cols.size; ++j) {
          const int64_t f = cols.offset + j; // the global feature
          double g = relu ? 0.0 : bv[f], cond = std::fabs(g);
          for (int64_t p = 0; p < l.k; ++p) {
            g += xv[i * l.k + p] * wv[f * l.k + p];
            cond += std::fabs(xv[i * l.k + p] * wv[f * l.k + p]);
          }
          const double gemmErr = rt::testing::gemmBound(t, false, l.k, g, cond);
          // The reference on the rows at and around the blocks' edges and
          // every 37th; fused against unfused everywhere.
          const bool checkRow = rt::testing::epilogueReferenceRow(i, l.rows);
          const size_t e = size_t(i * cols.size + j);
          const double ref =
              !checkRow ? unfused[e]
                        : rt::testing::referenceAt(
                              expr, relu ? std::vector<double>{g, bv[f]}
                                         : std::vector<double>{g});
          const double bound = rt::testing::epilogueBound(
              t, 1.2, gemmErr, ref, t == DType::F64 ? 1e-14 : 4e-6,
              t == DType::F64 ? 1e-14 : 1e-6);
          std::string problem;
          if (checkRow && !(std::fabs(got[e] - ref) <= bound))
            problem = "fused " + std::to_string(got[e]) + ", reference " +
                      std::to_string(ref);
          else if (checkRow && !(std::fabs(unfused[e] - ref) <= bound))
            problem = "unfused " + std::to_string(unfused[e]) +
                      ", reference " + std::to_string(ref);
          else if (!(std::fabs(got[e] - unfused[e]) <= 2 * bound))
            problem = "fused " + std::to_string(got[e]) + ", unfused " +
                      std::to_string(unfused[e]);
          else if (relu && checkRow && !(std::fabs(cv[e] - g) <= gemmErr))
            problem = "C " + std::to_string(cv[e]) + ", product " +
                      std::to_string(g);
          if (!problem.empty() && ++failures <= 5)
            ADD_FAILURE() << "[" << i << "][" << j << "]: " << problem;
        }
    }
  }
}

TEST(GemmEpiloguePlan, UnevenAndEmptyChunks) {
  const Layer l{4, {3, 0, 2, 1}, 7, 6, 5};
  checkLayer(l, false);
  checkLayer(l, true);
}

TEST(GemmEpiloguePlan, BlocksOfRows) {
  const Layer l{3, {2, 0, 1}, 530, 4, 3072};
  checkLayer(l, false);
  checkLayer(l, true);
}

} // namespace
