//===- HostElementwise.cpp - Fused elementwise expressions on the host ----===//
//
// Evaluates an expression program (Expr.h) over blocks of elements, one of
// two ways:
//
//  - An activation form (recognizeActivation: GELU tanh/erf, SiLU, ReLU or
//    none, with a bias or residual before it and a residual or gate after
//    it), for f16, bf16 and f32: one loop over the block that computes the
//    whole expression per element, in registers. This is the common case of
//    a transformer block, and close to memory bandwidth.
//  - Anything else: node by node, each node one loop over the block into
//    an array of its own (only the last node's is stored). Constants, and
//    what is computed from constants only, are scalars (evaluated once, by
//    the same code), so `x * 0.5` reads one array, not two.
//
// Either way memory sees each operand read once and the result written
// once; intermediate values stay in registers or L1.
//
// Blocks are segments of one row (a row vector is then the same pointer
// offset by the segment's column), or, for short rows, several whole rows
// with the row vectors tiled once per call to the block's length. Without row
// vectors the tensor is one long row. Operands in the compute type are read
// in place; f16/bf16 ones are widened into a block array first.
//
// The loops are compiled for x86-64-v4 (AVX-512, 16 floats per op),
// x86-64-v3 (AVX2 + FMA, 8) and the baseline (target_clones), chosen once
// at load time by the CPU. The float exp/log/tanh/erf are VectorMath.h's;
// f64 uses libm.
//
//===----------------------------------------------------------------------===//

#include "shardlin/runtime/backends/Host.h"
#include "backends/host/HostElementwise.h"

#include "backends/host/TargetClones.h"
#include "backends/host/VectorMath.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>


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

//===----------------------------------------------------------------------===//
// Activation forms: the whole expression per element
//===----------------------------------------------------------------------===//

/// An ActivationForm's arrays over one block and its constants.
struct ActivationArgs {
  const float *x = nullptr, *bias = nullptr, *other = nullptr;
  float c[4] = {0, 0, 0, 0};
};

template <Activation A>
SHARDLIN_VMATH_INLINE float activate(float v, const float *c) {
  switch (A) {
  case Activation::Identity:
    return v;
  case Activation::Relu:
    return maximum(v, 0.0f);
  case Activation::GeluTanh:
    return (c[0] * v) * (c[1] + vmath::tanh(c[2] * (v + c[3] * (v * v * v))));
  case Activation::GeluErf:
    return (c[0] * v) * (c[1] + vmath::erf(c[2] * v));
  case Activation::Silu:
    return v / (1.0f + vmath::exp(-v));
  }
  return v;
}

// y may be one of the arrays it reads (in place over an f32 operand):
// element j is read before it is written, so no __restrict on it.
template <Activation A, bool Bias, ActivationForm::Post P>
SHARDLIN_VMATH_INLINE void activationLoop(const ActivationArgs &a, float *y,
                                          int n) {
  const float *x = a.x, *b = a.bias, *o = a.other;
  const float c[4] = {a.c[0], a.c[1], a.c[2], a.c[3]};
  for (int j = 0; j < n; ++j) {
    float v = x[j];
    if (Bias)
      v += b[j];
    float r = activate<A>(v, c);
    if (P == ActivationForm::Post::Add)
      r += o[j];
    if (P == ActivationForm::Post::Mul)
      r *= o[j];
    y[j] = r;
  }
}

template <Activation A, bool Bias>
SHARDLIN_VMATH_INLINE void activationPost(ActivationForm::Post post,
                                          const ActivationArgs &a, float *y,
                                          int n) {
  switch (post) {
  case ActivationForm::Post::None:
    return activationLoop<A, Bias, ActivationForm::Post::None>(a, y, n);
  case ActivationForm::Post::Add:
    return activationLoop<A, Bias, ActivationForm::Post::Add>(a, y, n);
  case ActivationForm::Post::Mul:
    return activationLoop<A, Bias, ActivationForm::Post::Mul>(a, y, n);
  }
}

template <Activation A>
SHARDLIN_VMATH_INLINE void activationBias(ActivationForm::Post post,
                                          const ActivationArgs &a, float *y,
                                          int n) {
  if (a.bias)
    activationPost<A, true>(post, a, y, n);
  else
    activationPost<A, false>(post, a, y, n);
}

// One clone per activation (templates cannot be cloned by every compiler
// that supports target_clones), each with its bias and post variants.
#define SHARDLIN_ACTIVATION_ENTRY(NAME, ACT)                                   \
  SHARDLIN_TARGET_CLONES void NAME(ActivationForm::Post post,                  \
                                   const ActivationArgs &a, float *y, int n) { \
    activationBias<ACT>(post, a, y, n);                                        \
  }
SHARDLIN_ACTIVATION_ENTRY(identityBlock, Activation::Identity)
SHARDLIN_ACTIVATION_ENTRY(reluBlock, Activation::Relu)
SHARDLIN_ACTIVATION_ENTRY(geluTanhBlock, Activation::GeluTanh)
SHARDLIN_ACTIVATION_ENTRY(geluErfBlock, Activation::GeluErf)
SHARDLIN_ACTIVATION_ENTRY(siluBlock, Activation::Silu)
#undef SHARDLIN_ACTIVATION_ENTRY

using ActivationBlockFn = void (*)(ActivationForm::Post, const ActivationArgs &,
                                   float *, int);

ActivationBlockFn activationBlock(Activation act) {
  switch (act) {
  case Activation::Identity:
    return identityBlock;
  case Activation::Relu:
    return reluBlock;
  case Activation::GeluTanh:
    return geluTanhBlock;
  case Activation::GeluErf:
    return geluErfBlock;
  case Activation::Silu:
    return siluBlock;
  }
  return identityBlock;
}

//===----------------------------------------------------------------------===//
// The generic evaluation: node by node over a block
//===----------------------------------------------------------------------===//

/// A node's value over a block: an array of the block's length, or, for
/// constants and nodes computed from constants only, one scalar.
template <typename C> struct Value {
  const C *array = nullptr;
  C scalar = 0;
};

template <typename C> struct ArrayOf {
  const C *p;
  SHARDLIN_VMATH_INLINE C operator[](int j) const { return p[j]; }
};
template <typename C> struct ScalarOf {
  C v;
  SHARDLIN_VMATH_INLINE C operator[](int) const { return v; }
};

/// Calls g with an accessor of v (array or scalar).
template <typename C, typename G>
SHARDLIN_VMATH_INLINE void access(const Value<C> &v, G g) {
  if (v.array)
    g(ArrayOf<C>{v.array});
  else
    g(ScalarOf<C>{v.scalar});
}

// `out` is a block array of its own; the inputs may alias each other (x * x)
// and, for the operands read in place, the result tensor, which is written
// only after the block is evaluated.
template <typename C, typename F>
SHARDLIN_VMATH_INLINE void unary(const Value<C> &a, C *__restrict out, int n,
                                 F f) {
  access(a, [&](auto x) {
    for (int j = 0; j < n; ++j)
      out[j] = f(x[j]);
  });
}

template <typename C, typename F>
SHARDLIN_VMATH_INLINE void binary(const Value<C> &a, const Value<C> &b,
                                  C *__restrict out, int n, F f) {
  access(a, [&](auto x) {
    access(b, [&](auto y) {
      for (int j = 0; j < n; ++j)
        out[j] = f(x[j], y[j]);
    });
  });
}

/// Booleans are the compute type's 1 and 0 (selects blend on them).
template <typename C>
SHARDLIN_VMATH_INLINE void compare(CmpPredicate p, const Value<C> &a,
                                   const Value<C> &b, C *__restrict out,
                                   int n) {
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

/// Evaluates node `node` over `n` elements into `out` from its args'
/// values `val`.
template <typename C>
SHARDLIN_VMATH_INLINE void evalNode(const ExprNode &node, const Value<C> *val,
                                    C *__restrict out, int n) {
  const Value<C> &a = val[node.args[0]];
  const Value<C> &b = val[node.args[1] >= 0 ? node.args[1] : node.args[0]];
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
  case ExprOp::Select:
    access(a, [&](auto cond) {
      access(b, [&](auto x) {
        access(val[node.args[2]], [&](auto y) {
          for (int j = 0; j < n; ++j)
            out[j] = cond[j] != C(0) ? x[j] : y[j];
        });
      });
    });
    break;
  }
}

/// Evaluates the nodes `steps` over one block of `n` elements: node i
/// writes scratch + i * stride, and val[i] points there. val holds the
/// inputs' and the scalars' values.
template <typename C>
SHARDLIN_VMATH_INLINE void evalNodes(const ExprNode *nodes, const int *steps,
                                     int numSteps, Value<C> *val, C *scratch,
                                     int stride, int n) {
  for (int s = 0; s < numSteps; ++s) {
    const int i = steps[s];
    C *out = scratch + size_t(i) * stride;
    evalNode(nodes[i], val, out, n);
    val[i].array = out;
  }
}

// The entry points the CPU dispatch picks a clone of.
SHARDLIN_TARGET_CLONES
void evalNodesF32(const ExprNode *nodes, const int *steps, int numSteps,
                  Value<float> *val, float *scratch, int stride, int n) {
  evalNodes<float>(nodes, steps, numSteps, val, scratch, stride, n);
}

SHARDLIN_TARGET_CLONES
void evalNodesF64(const ExprNode *nodes, const int *steps, int numSteps,
                  Value<double> *val, double *scratch, int stride, int n) {
  evalNodes<double>(nodes, steps, numSteps, val, scratch, stride, n);
}

void evalBlock(const ExprNode *nodes, const int *steps, int numSteps,
               Value<float> *val, float *scratch, int stride, int n) {
  evalNodesF32(nodes, steps, numSteps, val, scratch, stride, n);
}
void evalBlock(const ExprNode *nodes, const int *steps, int numSteps,
               Value<double> *val, double *scratch, int stride, int n) {
  evalNodesF64(nodes, steps, numSteps, val, scratch, stride, n);
}

/// The generic evaluation of one program: which nodes are scalars (with
/// their values) and which are computed per block, in order.
template <typename C> struct NodePlan {
  std::vector<Value<C>> val;
  std::vector<int> steps;
};

/// Constants are scalars, and so is every node whose args are all scalars:
/// it is evaluated once here, on one-element arrays by the same code as the
/// blocks, so a folded node has exactly the value it would have per element.
template <typename C> NodePlan<C> planNodes(const ExprProgram &expr) {
  const int numNodes = static_cast<int>(expr.nodes.size());
  NodePlan<C> plan;
  plan.val.assign(numNodes, Value<C>{});
  std::vector<bool> scalar(numNodes, false);
  for (int i = 0; i < numNodes; ++i) {
    const ExprNode &node = expr.nodes[i];
    if (node.op == ExprOp::Input)
      continue;
    if (node.op == ExprOp::Const) {
      scalar[i] = true;
      plan.val[i].scalar = static_cast<C>(node.value);
      continue;
    }
    bool allScalar = true;
    for (int k = 0; k < exprOpArity(node.op); ++k)
      allScalar = allScalar && scalar[node.args[k]];
    if (!allScalar) {
      plan.steps.push_back(i);
      continue;
    }
    std::vector<C> ones(size_t(numNodes), C(0));
    std::vector<Value<C>> args(static_cast<size_t>(numNodes));
    for (int k = 0; k < exprOpArity(node.op); ++k) {
      const int arg = node.args[k];
      ones[arg] = plan.val[arg].scalar;
      args[arg].array = &ones[arg];
    }
    C out = 0;
    evalNode(node, args.data(), &out, 1);
    scalar[i] = true;
    plan.val[i].scalar = out;
  }
  return plan;
}

//===----------------------------------------------------------------------===//
// Blocks
//===----------------------------------------------------------------------===//

/// Elements per block: the block arrays of all nodes and operands together
/// about 24 KiB (within L1 on current x86 cores, with room for the streams),
/// a multiple of 16, and between 64 and 1024.
int blockElements(size_t arrays, size_t eltBytes) {
  size_t n = (24 * 1024 / eltBytes) / std::max<size_t>(arrays, 1);
  n = std::clamp<size_t>(n, 64, 1024);
  return static_cast<int>(n & ~size_t(15));
}

/// The activation form to run `expr` with, for compute type C.
template <typename C>
std::optional<ActivationForm> formFor(const ExprProgram &expr,
                                      const HostLocalOpsOptions &options) {
  if (!options.activationKernels || !std::is_same<C, float>::value)
    return std::nullopt;
  return recognizeActivation(expr);
}

template <typename C>
void evaluate(const ExprProgram &expr, const std::vector<ExprOperand> &ops,
              void *y, int64_t rows, int64_t cols, DType dtype,
              const HostLocalOpsOptions &options) {
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
      anyRowVector = anyRowVector || ops[node.input].rowVector ||
                     ops[node.input].column;
    }
  if (!anyRowVector) {
    cols *= rows;
    rows = 1;
  }
  const std::optional<ActivationForm> form = formFor<C>(expr, options);
  NodePlan<C> nodes;
  if (!form)
    nodes = planNodes<C>(expr);
  // Block arrays: one per node (generic) or one for the result (a form),
  // one per operand (widened f16/bf16 operands).
  const size_t resultArray = form ? 0 : size_t(numNodes);
  const int block = blockElements(resultArray + 1 + numOps, sizeof(C));
  const int64_t tileRows = cols >= block ? 1 : block / cols;
  const int64_t tileLength = tileRows * cols;

  std::vector<C> scratch((resultArray + 1 + numOps) * size_t(block));
  C *const resultScratch = scratch.data() + resultArray * size_t(block);
  C *const operandScratch = scratch.data() + (resultArray + 1) * size_t(block);
  std::vector<const C *> full(numOps, nullptr);
  // Row vectors in the compute type, repeated tileRows times.
  std::vector<std::vector<C>> rowVectors(numOps);
  for (size_t k = 0; k < numOps; ++k) {
    if (!used[k] || !ops[k].rowVector)
      continue;
    std::vector<C> &rv = rowVectors[k];
    rv.resize(size_t(tileLength));
    convertToWide(dtype, ops[k].data, rv.data(), size_t(cols));
    for (int64_t r = 1; r < tileRows; ++r)
      std::copy(rv.begin(), rv.begin() + cols, rv.begin() + r * cols);
  }

  const ExprNode *exprNodes = expr.nodes.data();
  char *out = static_cast<char *>(y);
  auto runBlock = [&](int64_t start, int n, int64_t column) {
    for (size_t k = 0; k < numOps; ++k) {
      if (!used[k])
        continue;
      if (ops[k].rowVector) {
        full[k] = rowVectors[k].data() + column;
        continue;
      }
      if (ops[k].column) {
        // One value per row, repeated along the block's part of each row.
        C *dst = operandScratch + k * size_t(block);
        const char *col = static_cast<const char *>(ops[k].data);
        for (int e = 0; e < n;) {
          const int64_t row = (start + e) / cols;
          const int run = static_cast<int>(
              std::min<int64_t>(n - e, (row + 1) * cols - (start + e)));
          C v;
          convertToWide(dtype, col + row * int64_t(elt), &v, 1);
          std::fill(dst + e, dst + e + run, v);
          e += run;
        }
        full[k] = dst;
        continue;
      }
      const char *src = static_cast<const char *>(ops[k].data) + start * elt;
      if (inPlaceReads) {
        full[k] = reinterpret_cast<const C *>(src);
      } else {
        C *dst = operandScratch + k * size_t(block);
        convertToWide(dtype, src, dst, size_t(n));
        full[k] = dst;
      }
    }
    char *dst = out + start * elt;
    if constexpr (std::is_same<C, float>::value) {
      if (form) {
        ActivationArgs args;
        args.x = full[form->x];
        args.bias = form->bias >= 0 ? full[form->bias] : nullptr;
        args.other = form->other >= 0 ? full[form->other] : nullptr;
        for (int k = 0; k < 4; ++k)
          args.c[k] = static_cast<float>(form->c[k]);
        // In the compute type the result is written in place.
        float *result =
            inPlaceReads ? reinterpret_cast<float *>(dst) : resultScratch;
        activationBlock(form->act)(form->post, args, result, n);
        if (!inPlaceReads)
          convertFromWide(dtype, result, dst, size_t(n));
        return;
      }
    }
    for (int i = 0; i < numNodes; ++i)
      if (exprNodes[i].op == ExprOp::Input)
        nodes.val[i].array = full[exprNodes[i].input];
    evalBlock(exprNodes, nodes.steps.data(), static_cast<int>(nodes.steps.size()),
              nodes.val.data(), scratch.data(), block, n);
    const Value<C> &last = nodes.val[numNodes - 1];
    const C *result = last.array;
    if (!result) {
      // A constant result: the same value everywhere.
      std::fill(resultScratch, resultScratch + n, last.scalar);
      result = resultScratch;
    }
    if (inPlaceReads) {
      // The result may be an operand read in place: the same elements.
      if (static_cast<const void *>(result) != dst)
        std::memmove(dst, result, size_t(n) * sizeof(C));
    } else {
      convertFromWide(dtype, result, dst, size_t(n));
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
                                 DType dtype,
                                 const HostLocalOpsOptions &options) {
  if (rows == 0 || cols == 0)
    return Status::ok();
  if (dtype == DType::F64)
    evaluate<double>(expr, operands, y, rows, cols, dtype, options);
  else
    evaluate<float>(expr, operands, y, rows, cols, dtype, options);
  return Status::ok();
}

} // namespace shardlin::rt
