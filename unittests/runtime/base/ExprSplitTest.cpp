//===- ExprSplitTest.cpp - Expressions cut into instructions --------------===//
//
// splitExpr (Expr.h): random expressions of 70 to 400 nodes (every op,
// shared subexpressions, comparisons feeding selects, constants, row-vector
// operands) are split into pieces of at most 8, 16 and 64 nodes. Every
// piece must be a valid expression of at most that many nodes that comes
// after the pieces it reads, and the pieces, evaluated one after the other
// in float64 on random operands, must give the whole expression's float64
// value exactly (the same operations in the same order: bound 0). A part
// of constants alone too large for a piece is an InvalidArgument naming the
// node. The executor's use of it (a 70 and a 150-op chain against float64)
// is in e2e.blocks.LongChains.
//
//===----------------------------------------------------------------------===//

#include "ExprTestSupport.h"

#include "shardlin/runtime/base/Expr.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

namespace shardlin::rt {
namespace {

using testing::Builder;
using testing::referenceAt;

/// A random expression of `size` nodes over `operands` operands: every op,
/// args drawn mostly from the last few nodes (long chains) and sometimes
/// from anywhere (shared values), values kept finite by the choice of ops.
ExprProgram randomExpr(std::mt19937 &rng, int size, int operands) {
  Builder b;
  std::vector<int> values; // float nodes
  for (int k = 0; k < operands; ++k)
    values.push_back(b.input(k));
  auto pick = [&]() {
    std::uniform_int_distribution<int> near(0, 3), any(0, int(values.size()) - 1);
    if (rng() % 4 != 0)
      return values[values.size() - 1 - std::min<size_t>(near(rng), values.size() - 1)];
    return values[size_t(any(rng))];
  };
  const ExprOp unary[] = {ExprOp::Neg, ExprOp::Abs, ExprOp::Tanh, ExprOp::Erf};
  const ExprOp binary[] = {ExprOp::Add, ExprOp::Sub, ExprOp::Mul,
                           ExprOp::Maximum, ExprOp::Minimum, ExprOp::MaxNum,
                           ExprOp::MinNum};
  while (static_cast<int>(b.p.nodes.size()) < size) {
    switch (rng() % 6) {
    case 0:
      values.push_back(b.op(unary[rng() % 4], pick()));
      break;
    case 1: {
      const int c = b.cmp(CmpPredicate(rng() % 6 + 1), pick(), pick());
      values.push_back(b.op(ExprOp::Select, c, pick(), pick()));
      break;
    }
    case 2:
      values.push_back(b.op(ExprOp::Mul, pick(),
                            b.constant(0.5 + double(rng() % 100) / 128)));
      break;
    default:
      values.push_back(b.op(binary[rng() % 7], pick(), pick()));
      // Keep magnitudes bounded (tanh of the sum).
      if (rng() % 3 == 0)
        values.push_back(b.op(ExprOp::Tanh, values.back()));
    }
  }
  return b.p;
}

/// Evaluates `pieces` in order at one element and returns the last one's
/// value; checks each piece's shape.
double evaluatePieces(const std::vector<ExprPiece> &pieces,
                      const std::vector<double> &operands) {
  std::vector<double> results;
  for (const ExprPiece &piece : pieces) {
    std::vector<double> in;
    for (int ref : piece.operands)
      in.push_back(ref >= 0 ? operands[size_t(ref)]
                            : results[size_t(-1 - ref)]);
    results.push_back(referenceAt(piece.expr, in));
  }
  return results.back();
}

/// The number of nodes the result reads (the others are dropped).
size_t liveNodes(const ExprProgram &e) {
  std::vector<bool> live(e.nodes.size(), false);
  live.back() = true;
  for (size_t n = e.nodes.size(); n-- > 0;)
    if (live[n])
      for (int k = 0; k < exprOpArity(e.nodes[n].op); ++k)
        live[size_t(e.nodes[n].args[k])] = true;
  return size_t(std::count(live.begin(), live.end(), true));
}

TEST(ExprSplit, PiecesComputeTheWholeExpressionExactly) {
  std::mt19937 rng(27);
  int splits = 0;
  for (int trial = 0; trial < 60; ++trial) {
    const int size = 70 + int(rng() % 331);
    const int operands = 1 + int(rng() % 4);
    const ExprProgram whole = randomExpr(rng, size, operands);
    ASSERT_TRUE(validateExpr(whole, size_t(operands), "the whole").isOk() ||
                whole.nodes.size() > kMaxExprNodes);
    std::vector<bool> rowVectors(size_t(operands), false);
    for (int k = 1; k < operands; ++k)
      rowVectors[size_t(k)] = rng() % 2 == 0;
    for (size_t maxNodes : {size_t(8), size_t(16), kMaxExprNodes}) {
      SCOPED_TRACE("trial " + std::to_string(trial) + ", " +
                   std::to_string(size) + " nodes in pieces of " +
                   std::to_string(maxNodes));
      std::vector<ExprPiece> pieces;
      Status s = splitExpr(whole, rowVectors, maxNodes, "test", pieces);
      ASSERT_TRUE(s.isOk()) << s.message();
      if (liveNodes(whole) > maxNodes) {
        EXPECT_GE(pieces.size(), 2u);
        ++splits;
      }
      for (size_t p = 0; p < pieces.size(); ++p) {
        const ExprPiece &piece = pieces[p];
        EXPECT_LE(piece.expr.nodes.size(), maxNodes) << "piece " << p;
        Status valid = validateExpr(piece.expr, piece.operands.size(),
                                    "piece " + std::to_string(p));
        EXPECT_TRUE(valid.isOk()) << valid.message();
        bool allRowVectors = true;
        for (int ref : piece.operands) {
          ASSERT_LT(ref, operands);
          ASSERT_LT(-1 - ref, static_cast<int>(p)) << "reads a later piece";
          allRowVectors = allRowVectors &&
                          (ref >= 0 ? bool(rowVectors[size_t(ref)])
                                    : pieces[size_t(-1 - ref)].rowVector);
        }
        EXPECT_EQ(piece.rowVector, allRowVectors) << "piece " << p;
      }
      std::uniform_real_distribution<double> value(-3, 3);
      for (int e = 0; e < 50; ++e) {
        std::vector<double> in(static_cast<size_t>(operands));
        for (double &v : in)
          v = value(rng);
        const double want = referenceAt(whole, in);
        const double got = evaluatePieces(pieces, in);
        ASSERT_TRUE(got == want || (std::isnan(got) && std::isnan(want)))
            << "element " << e << ": " << got << " against " << want;
      }
    }
  }
  EXPECT_GE(splits, 150); // most expressions need several pieces
}

/// A straight chain of 150 ops over one operand (the executor's long
/// chains): pieces of at most 64 nodes, the last one computes the result.
TEST(ExprSplit, StraightChainOf150Ops) {
  Builder b;
  int v = b.input(0);
  for (int i = 0; i < 150; ++i)
    v = i % 3 == 0 ? b.op(ExprOp::Tanh, v)
                   : b.op(i % 3 == 1 ? ExprOp::Add : ExprOp::Mul, v,
                          b.constant(0.75));
  std::vector<ExprPiece> pieces;
  ASSERT_TRUE(splitExpr(b.p, {false}, kMaxExprNodes, "chain", pieces).isOk());
  EXPECT_GE(pieces.size(), 4u); // 250 nodes
  for (const ExprPiece &piece : pieces)
    EXPECT_LE(piece.expr.nodes.size(), kMaxExprNodes);
  for (double x : {-2.0, -0.3, 0.0, 1.7})
    EXPECT_EQ(evaluatePieces(pieces, {x}), referenceAt(b.p, {x}));
}

TEST(ExprSplit, ConstantsAloneTooLargeAreInvalidArgument) {
  Builder b;
  int c = b.constant(0.5);
  for (int i = 0; i < 80; ++i)
    c = b.op(ExprOp::Tanh, c);
  b.op(ExprOp::Add, b.input(0), c);
  std::vector<ExprPiece> pieces;
  Status s = splitExpr(b.p, {false}, kMaxExprNodes, "this chain", pieces);
  ASSERT_FALSE(s.isOk());
  EXPECT_EQ(s.code(), StatusCode::InvalidArgument);
  EXPECT_NE(s.message().find("this chain: expression node"),
            std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("constants alone"), std::string::npos)
      << s.message();
  EXPECT_EQ(splitExpr(ExprProgram(), {}, 64, "empty", pieces).code(),
            StatusCode::InvalidArgument);
  EXPECT_EQ(splitExpr(b.p, {false}, 4, "small", pieces).code(),
            StatusCode::InvalidArgument);
}

} // namespace
} // namespace shardlin::rt
