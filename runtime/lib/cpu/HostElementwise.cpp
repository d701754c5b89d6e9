//===- HostElementwise.cpp - Fused elementwise expressions on the host ----===//
//
// Evaluates an expression program (Expr.h) over blocks of elements: for one
// block, each node's values are one array in the compute type, every op is
// one loop over the block that the compiler vectorizes, and only the last
// node's array is stored (rounded once) into the result. Intermediate values
// stay in L1/L2; memory sees each operand read once and the result written
// once.
//
// Blocks are segments of one row (a row vector is then the same pointer
// offset by the segment's column), or, for short rows, several whole rows
// with the row vectors tiled once per call to the block's length. Without row
// vectors the tensor is one long row. Operands in the compute type are read
// in place; f16/bf16 ones are widened into a block array first.
//
// The block loop is compiled twice (target_clones): for x86-64-v3 (AVX2 +
// FMA, 8 floats per op) and for the baseline, chosen once at load time by
// the CPU. The float exp/log/tanh/erf are VectorMath.h's; f64 uses libm.
//
//===----------------------------------------------------------------------===//

#include "HostElementwise.h"

#include "VectorMath.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#if defined(__x86_64__) && defined(__GNUC__) && defined(__ELF__) &&          \
    !defined(SHARDLIN_NO_TARGET_CLONES)
#define SHARDLIN_TARGET_CLONES                                                 \
  __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define SHARDLIN_TARGET_CLONES
#endif

namespace shardlin::rt {

namespace {

template <typename C> struct BitsOf;
template <> struct BitsOf<float> {
  using U = uint32_t;
};
template <> struct BitsOf<double> {
  using U = uint64_t;
};

template <typename C, typename F>
SHARDLIN_VMATH_INLINE C combineBits(C a, C b, F f) {
  typename BitsOf<C>::U x, y;
  std::memcpy(&x, &a, sizeof(C));
  std::memcpy(&y, &b, sizeof(C));
  x = f(x, y);
  C r;
  std::memcpy(&r, &x, sizeof(C));
  return r;
}

/// arith.maximumf: NaN if either is NaN; of equal values (+0 and -0) the
/// one with the sign bit clear (the AND of the patterns).
template <typename C> SHARDLIN_VMATH_INLINE C maximum(C a, C b) {
  C r = a > b ? a : b;
  r = a == b ? combineBits(a, b, [](auto x, auto y) { return x & y; }) : r;
  return (a != a || b != b) ? a + b : r;
}

/// arith.minimumf: NaN if either is NaN; -0 below +0 (the OR).
template <typename C> SHARDLIN_VMATH_INLINE C minimum(C a, C b) {
  C r = a < b ? a : b;
  r = a == b ? combineBits(a, b, [](auto x, auto y) { return x | y; }) : r;
  return (a != a || b != b) ? a + b : r;
}

/// arith.maxnumf / minnumf: the other operand when one is NaN; otherwise
/// as maximum / minimum (so the sign of zero is decided the same way).
template <typename C> SHARDLIN_VMATH_INLINE C maxNum(C a, C b) {
  return a != a ? b : (b != b ? a : maximum(a, b));
}
template <typename C> SHARDLIN_VMATH_INLINE C minNum(C a, C b) {
  return a != a ? b : (b != b ? a : minimum(a, b));
}

SHARDLIN_VMATH_INLINE float expOf(float x) { return vmath::exp(x); }
SHARDLIN_VMATH_INLINE float logOf(float x) { return vmath::log(x); }
SHARDLIN_VMATH_INLINE float tanhOf(float x) { return vmath::tanh(x); }
SHARDLIN_VMATH_INLINE float erfOf(float x) { return vmath::erf(x); }
SHARDLIN_VMATH_INLINE double expOf(double x) { return std::exp(x); }
SHARDLIN_VMATH_INLINE double logOf(double x) { return std::log(x); }
SHARDLIN_VMATH_INLINE double tanhOf(double x) { return std::tanh(x); }
SHARDLIN_VMATH_INLINE double erfOf(double x) { return std::erf(x); }

// `out` is a block array of its own; the inputs may alias each other (x * x)
// and, for the operands read in place, the result tensor, which is written
// only after the block is evaluated.
template <typename C, typename F>
SHARDLIN_VMATH_INLINE void unary(const C *a, C *__restrict out, int n, F f) {
  for (int j = 0; j < n; ++j)
    out[j] = f(a[j]);
}

template <typename C, typename F>
SHARDLIN_VMATH_INLINE void binary(const C *a, const C *b, C *__restrict out,
                                  int n, F f) {
  for (int j = 0; j < n; ++j)
    out[j] = f(a[j], b[j]);
}

/// Booleans are the compute type's 1 and 0 (selects blend on them).
template <typename C>
SHARDLIN_VMATH_INLINE void compare(CmpPredicate p, const C *a, const C *b,
                                   C *__restrict out, int n) {
  const C t = 1, f = 0;
  switch (p) {
  case CmpPredicate::False:
    binary(a, b, out, n, [=](C, C) { return f; });
    return;
  case CmpPredicate::OEQ:
    binary(a, b, out, n, [=](C x, C y) { return x == y ? t : f; });
    return;
  case CmpPredicate::OGT:
    binary(a, b, out, n, [=](C x, C y) { return x > y ? t : f; });
    return;
  case CmpPredicate::OGE:
    binary(a, b, out, n, [=](C x, C y) { return x >= y ? t : f; });
    return;
  case CmpPredicate::OLT:
    binary(a, b, out, n, [=](C x, C y) { return x < y ? t : f; });
    return;
  case CmpPredicate::OLE:
    binary(a, b, out, n, [=](C x, C y) { return x <= y ? t : f; });
    return;
  case CmpPredicate::ONE:
    binary(a, b, out, n, [=](C x, C y) { return (x < y || x > y) ? t : f; });
    return;
  case CmpPredicate::ORD:
    binary(a, b, out, n, [=](C x, C y) { return (x == x && y == y) ? t : f; });
    return;
  // The unordered ones are the negations of the ordered opposites.
  case CmpPredicate::UEQ:
    binary(a, b, out, n, [=](C x, C y) { return (x < y || x > y) ? f : t; });
    return;
  case CmpPredicate::UGT:
    binary(a, b, out, n, [=](C x, C y) { return x <= y ? f : t; });
    return;
  case CmpPredicate::UGE:
    binary(a, b, out, n, [=](C x, C y) { return x < y ? f : t; });
    return;
  case CmpPredicate::ULT:
    binary(a, b, out, n, [=](C x, C y) { return x >= y ? f : t; });
    return;
  case CmpPredicate::ULE:
    binary(a, b, out, n, [=](C x, C y) { return x > y ? f : t; });
    return;
  case CmpPredicate::UNE:
    binary(a, b, out, n, [=](C x, C y) { return x == y ? f : t; });
    return;
  case CmpPredicate::UNO:
    binary(a, b, out, n, [=](C x, C y) { return (x == x && y == y) ? f : t; });
    return;
  case CmpPredicate::True:
    binary(a, b, out, n, [=](C, C) { return t; });
    return;
  }
}

/// Evaluates the computed nodes over one block of `n` elements. val[i] is
/// set for Input and Const nodes; computed node i writes scratch + i *
/// stride and points val[i] there.
template <typename C>
SHARDLIN_VMATH_INLINE void evalNodes(const ExprNode *nodes, int numNodes,
                                     const C **val, C *scratch, int stride,
                                     int n) {
  for (int i = 0; i < numNodes; ++i) {
    const ExprNode &node = nodes[i];
    if (node.op == ExprOp::Input || node.op == ExprOp::Const)
      continue;
    C *out = scratch + size_t(i) * stride;
    const C *a = val[node.args[0]];
    const C *b = node.args[1] >= 0 ? val[node.args[1]] : nullptr;
    switch (node.op) {
    case ExprOp::Input:
    case ExprOp::Const:
      break;
    case ExprOp::Neg:
      unary(a, out, n, [](C x) { return -x; });
      break;
    case ExprOp::Abs:
      unary(a, out, n, [](C x) { return std::fabs(x); });
      break;
    case ExprOp::Exp:
      unary(a, out, n, [](C x) { return expOf(x); });
      break;
    case ExprOp::Log:
      unary(a, out, n, [](C x) { return logOf(x); });
      break;
    case ExprOp::Sqrt:
      unary(a, out, n, [](C x) { return std::sqrt(x); });
      break;
    case ExprOp::Rsqrt:
      unary(a, out, n, [](C x) { return C(1) / std::sqrt(x); });
      break;
    case ExprOp::Tanh:
      unary(a, out, n, [](C x) { return tanhOf(x); });
      break;
    case ExprOp::Erf:
      unary(a, out, n, [](C x) { return erfOf(x); });
      break;
    case ExprOp::Add:
      binary(a, b, out, n, [](C x, C y) { return x + y; });
      break;
    case ExprOp::Sub:
      binary(a, b, out, n, [](C x, C y) { return x - y; });
      break;
    case ExprOp::Mul:
      binary(a, b, out, n, [](C x, C y) { return x * y; });
      break;
    case ExprOp::Div:
      binary(a, b, out, n, [](C x, C y) { return x / y; });
      break;
    case ExprOp::Maximum:
      binary(a, b, out, n, [](C x, C y) { return maximum(x, y); });
      break;
    case ExprOp::Minimum:
      binary(a, b, out, n, [](C x, C y) { return minimum(x, y); });
      break;
    case ExprOp::MaxNum:
      binary(a, b, out, n, [](C x, C y) { return maxNum(x, y); });
      break;
    case ExprOp::MinNum:
      binary(a, b, out, n, [](C x, C y) { return minNum(x, y); });
      break;
    case ExprOp::Cmp:
      compare(node.predicate, a, b, out, n);
      break;
    case ExprOp::Select: {
      const C *c = val[node.args[2]];
      for (int j = 0; j < n; ++j)
        out[j] = a[j] != C(0) ? b[j] : c[j];
      break;
    }
    }
    val[i] = out;
  }
}

// The entry points the CPU dispatch picks a clone of (templates cannot be
// cloned by every compiler that supports target_clones).
SHARDLIN_TARGET_CLONES
void evalNodesF32(const ExprNode *nodes, int numNodes, const float **val,
                  float *scratch, int stride, int n) {
  evalNodes<float>(nodes, numNodes, val, scratch, stride, n);
}

SHARDLIN_TARGET_CLONES
void evalNodesF64(const ExprNode *nodes, int numNodes, const double **val,
                  double *scratch, int stride, int n) {
  evalNodes<double>(nodes, numNodes, val, scratch, stride, n);
}

void evalBlock(const ExprNode *nodes, int numNodes, const float **val,
               float *scratch, int stride, int n) {
  evalNodesF32(nodes, numNodes, val, scratch, stride, n);
}
void evalBlock(const ExprNode *nodes, int numNodes, const double **val,
               double *scratch, int stride, int n) {
  evalNodesF64(nodes, numNodes, val, scratch, stride, n);
}

void widen(DType t, const void *src, float *dst, size_t n) {
  convertToF32(t, src, dst, n);
}
void widen(DType t, const void *src, double *dst, size_t n) {
  convertToF64(t, src, dst, n);
}
void narrow(DType t, const float *src, void *dst, size_t n) {
  convertFromF32(t, src, dst, n);
}
void narrow(DType t, const double *src, void *dst, size_t n) {
  convertFromF64(t, src, dst, n);
}

/// Elements per block: the block arrays of all nodes and operands together
/// about 24 KiB (within L1 on current x86 cores, with room for the streams),
/// a multiple of 16, and between 64 and 1024.
int blockElements(size_t arrays, size_t eltBytes) {
  size_t n = (24 * 1024 / eltBytes) / std::max<size_t>(arrays, 1);
  n = std::clamp<size_t>(n, 64, 1024);
  return static_cast<int>(n & ~size_t(15));
}

template <typename C>
void evaluate(const ExprProgram &expr, const std::vector<ExprOperand> &ops,
              void *y, int64_t rows, int64_t cols, DType dtype) {
  const int numNodes = static_cast<int>(expr.nodes.size());
  const size_t numOps = ops.size();
  const size_t elt = dtypeSize(dtype);
  // Operands in the compute type are read where they are.
  const bool inPlaceReads = elt == sizeof(C);
  bool anyRowVector = false;
  std::vector<bool> used(numOps, false);
  for (const ExprNode &node : expr.nodes)
    if (node.op == ExprOp::Input) {
      used[node.input] = true;
      anyRowVector = anyRowVector || ops[node.input].rowVector;
    }
  if (!anyRowVector) {
    cols *= rows;
    rows = 1;
  }
  const int block = blockElements(numNodes + numOps, sizeof(C));
  const int64_t tileRows = cols >= block ? 1 : block / cols;
  const int64_t tileLength = tileRows * cols;

  std::vector<C> scratch(size_t(numNodes + numOps) * block);
  std::vector<const C *> val(numNodes, nullptr), full(numOps, nullptr);
  for (int i = 0; i < numNodes; ++i)
    if (expr.nodes[i].op == ExprOp::Const) {
      C *c = scratch.data() + size_t(i) * block;
      std::fill(c, c + block, static_cast<C>(expr.nodes[i].value));
      val[i] = c;
    }
  // Row vectors in the compute type, repeated tileRows times.
  std::vector<std::vector<C>> rowVectors(numOps);
  for (size_t k = 0; k < numOps; ++k) {
    if (!used[k] || !ops[k].rowVector)
      continue;
    std::vector<C> &rv = rowVectors[k];
    rv.resize(size_t(tileLength));
    widen(dtype, ops[k].data, rv.data(), size_t(cols));
    for (int64_t r = 1; r < tileRows; ++r)
      std::copy(rv.begin(), rv.begin() + cols, rv.begin() + r * cols);
  }

  const ExprNode *nodes = expr.nodes.data();
  char *out = static_cast<char *>(y);
  auto runBlock = [&](int64_t start, int n, int64_t column) {
    for (size_t k = 0; k < numOps; ++k) {
      if (!used[k] || ops[k].rowVector)
        continue;
      const char *src = static_cast<const char *>(ops[k].data) + start * elt;
      if (inPlaceReads) {
        full[k] = reinterpret_cast<const C *>(src);
      } else {
        C *dst = scratch.data() + size_t(numNodes + k) * block;
        widen(dtype, src, dst, size_t(n));
        full[k] = dst;
      }
    }
    for (int i = 0; i < numNodes; ++i)
      if (nodes[i].op == ExprOp::Input)
        val[i] = ops[nodes[i].input].rowVector
                     ? rowVectors[nodes[i].input].data() + column
                     : full[nodes[i].input];
    evalBlock(nodes, numNodes, val.data(), scratch.data(), block, n);
    const C *result = val[numNodes - 1];
    char *dst = out + start * elt;
    if (inPlaceReads) {
      // The result may be an operand read in place: the same elements.
      if (static_cast<const void *>(result) != dst)
        std::memmove(dst, result, size_t(n) * sizeof(C));
    } else {
      narrow(dtype, result, dst, size_t(n));
    }
  };

  if (tileRows > 1) {
    for (int64_t r = 0; r < rows; r += tileRows)
      runBlock(r * cols, static_cast<int>(std::min(tileRows, rows - r) * cols),
               0);
    return;
  }
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; c += block)
      runBlock(r * cols + c, static_cast<int>(std::min<int64_t>(block, cols - c)),
               c);
}

} // namespace

Status evaluateElementwiseOnHost(const ExprProgram &expr,
                                 const std::vector<ExprOperand> &operands,
                                 void *y, int64_t rows, int64_t cols,
                                 DType dtype) {
  if (rows == 0 || cols == 0)
    return Status::ok();
  if (dtype == DType::F64)
    evaluate<double>(expr, operands, y, rows, cols, dtype);
  else
    evaluate<float>(expr, operands, y, rows, cols, dtype);
  return Status::ok();
}

} // namespace shardlin::rt
