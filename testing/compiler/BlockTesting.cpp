//===- BlockTesting.cpp - Transformer blocks for tests and the bench ------===//
//
// The elementwise part of a block is written once as a small list of steps
// (Steps below); the same steps print as arith/math ops, as a linalg.generic
// body or as linalg.elementwise ops, and evaluate the float64 reference with
// its error magnitudes.
//
//===----------------------------------------------------------------------===//

#include "BlockTesting.h"
#include "ErrorBound.h"

#include "LinearTesting.h"

#include "shardlin/Analysis/CostModel.h"
#include "shardlin/runtime/backends/Registry.h"
#include "shardlin/runtime/base/Buffer.h"
#include "shardlin/runtime/base/ChunkLayout.h"
#include "shardlin/runtime/tooling/Runner.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <random>
#include <utility>

namespace shardlin::testkit {

const char *blockKindName(BlockKind k) {
  return k == BlockKind::Mlp ? "mlp" : "swiglu";
}

namespace {
/// The name `names` gives `value`, "?" if none.
template <typename E, size_t N>
const char *nameIn(E value, const std::pair<E, const char *> (&names)[N]) {
  for (const auto &[e, name] : names)
    if (e == value)
      return name;
  return "?";
}
} // namespace

const char *activationName(Activation a) {
  static const std::pair<Activation, const char *> kNames[] = {
      {Activation::Relu, "relu"},
      {Activation::GeluTanh, "gelu_tanh"},
      {Activation::GeluErf, "gelu_erf"},
      {Activation::Silu, "silu"}};
  return nameIn(a, kNames);
}

const char *opFormName(OpForm f) {
  static const std::pair<OpForm, const char *> kNames[] = {
      {OpForm::Arith, "arith"},
      {OpForm::LinalgGeneric, "generic"},
      {OpForm::LinalgElementwise, "elementwise"}};
  return nameIn(f, kNames);
}

int findBlockArgument(const std::vector<BlockArgument> &args,
                      BlockArgument::Role role, int block, int which) {
  for (size_t i = 0; i < args.size(); ++i)
    if (args[i].role == role && args[i].block == block &&
        args[i].which == which)
      return static_cast<int>(i);
  return -1;
}

std::string BlockSpec::name() const {
  const char *sep = worldSize() > 10 ? "x" : "";
  std::string s = blockKindName(kind);
  if (kind == BlockKind::Mlp)
    s += std::string("_") + activationName(activation);
  if (kind == BlockKind::Mlp && repeat > 1)
    s += "x" + std::to_string(repeat);
  s += std::string("_") + opFormName(form);
  s += "_W" + std::to_string(worldSize()) + "_p" + joinDims(placements, sep);
  if (!rowPlacements.empty())
    s += "_rp" + joinDims(rowPlacements, sep);
  s += "_H" + std::to_string(h) + "F" + std::to_string(f);
  s += "_B" + (batch.empty() ? std::string("1d") : joinDims(batch, "x", "q"));
  for (const std::vector<int64_t> &b : rankBatch)
    s += "_" + joinDims(b, "x");
  s += colBias ? "_cb" : "";
  s += rowBias ? "_rb" : "";
  s += residual ? "_res" : "";
  if (blocks > 1)
    s += "_x" + std::to_string(blocks);
  s += std::string("_") + rt::dtypeName(dtype);
  if (strategy == "gather-weight")
    s += "_gw";
  else if (strategy != "activations")
    s += "_" + strategy;
  if (!fuse)
    s += "_unfused";
  return s;
}

std::vector<BlockArgument> blockArguments(const BlockSpec &spec) {
  using Role = BlockArgument::Role;
  std::vector<BlockArgument> args;
  BlockArgument x{Role::Input, 0, 0, spec.inputShape()};
  args.push_back(x);
  for (int b = 0; b < spec.blocks; ++b) {
    for (int c = 0; c < spec.colLinears(); ++c) {
      BlockArgument w{Role::ColWeight, b, c, {spec.f, spec.h}, true, 0,
                      spec.placements};
      args.push_back(w);
      if (spec.colBias)
        args.push_back({Role::ColBias, b, c, {spec.f}});
    }
    BlockArgument v{Role::RowWeight, b, 0, {spec.h, spec.f}, true, 1,
                    spec.rowWeightPlacements()};
    args.push_back(v);
    if (spec.rowBias)
      args.push_back({Role::RowBias, b, 0, {spec.h}});
  }
  return args;
}

namespace {

//===----------------------------------------------------------------------===//
// Elementwise steps
//===----------------------------------------------------------------------===//

/// One step of an elementwise computation: `op` over earlier steps (by
/// index). Steps "in" read input `input` (a tensor of the block's shape, or
/// with `vector`, a vector broadcast along the last dim).
struct Step {
  std::string op; // in, const, addf, subf, mulf, divf, negf, maximumf,
                  // tanh, erf, exp, cmpf, select, fpowi (exponent: value)
  int a = -1, b = -1, c = -1;
  int input = 0;
  bool vector = false;
  double value = 0;
  std::string predicate; // cmpf
};

class Steps {
public:
  int in(int input, bool vector = false) {
    Step s{"in"};
    s.input = input;
    s.vector = vector;
    return push(s);
  }
  int cst(double v) {
    Step s{"const"};
    s.value = v;
    return push(s);
  }
  int un(const char *op, int a) { return push({op, a}); }
  /// a^n, math.fpowi with a constant i64 exponent.
  int powi(int a, int n) {
    Step s{"fpowi", a};
    s.value = n;
    return push(s);
  }
  int bin(const char *op, int a, int b) { return push({op, a, b}); }
  int cmp(const char *pred, int a, int b) {
    Step s{"cmpf", a, b};
    s.predicate = pred;
    return push(s);
  }
  int select(int c, int a, int b) { return push({"select", c, a, b}); }
  const std::vector<Step> &list() const { return steps_; }
  int numInputs() const {
    int n = 0;
    for (const Step &s : steps_)
      if (s.op == "in")
        n = std::max(n, s.input + 1);
    return n;
  }

private:
  int push(const Step &s) {
    steps_.push_back(s);
    return static_cast<int>(steps_.size()) - 1;
  }
  std::vector<Step> steps_;
};

/// act(x) on step x. ReLU is maximumf in the arith form, cmpf + select in
/// the others (linalg.elementwise has no float maximum). GELU-tanh's x^3 is
/// math.fpowi, as torch-mlir writes it, with `powi` (the forms that have
/// it: linalg.elementwise has no such kind, and a constant exponent of a
/// dynamic shape is no splat), else x * x * x.
int activation(Steps &s, Activation act, int x, OpForm form, bool powi) {
  switch (act) {
  case Activation::Relu: {
    int zero = s.cst(0.0);
    if (form == OpForm::Arith)
      return s.bin("maximumf", x, zero);
    int positive = s.cmp("ogt", x, zero);
    return s.select(positive, x, zero);
  }
  case Activation::GeluTanh: {
    // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
    int x3 = powi ? s.powi(x, 3) : s.bin("mulf", s.bin("mulf", x, x), x);
    int inner = s.bin("addf", x, s.bin("mulf", s.cst(0.044715), x3));
    int t = s.un("tanh", s.bin("mulf", s.cst(0.7978845608028654), inner));
    int onePlus = s.bin("addf", s.cst(1.0), t);
    return s.bin("mulf", s.cst(0.5), s.bin("mulf", x, onePlus));
  }
  case Activation::GeluErf: {
    // 0.5 x (1 + erf(x / sqrt(2)))
    int e = s.un("erf", s.bin("mulf", x, s.cst(0.7071067811865476)));
    int onePlus = s.bin("addf", s.cst(1.0), e);
    return s.bin("mulf", s.cst(0.5), s.bin("mulf", x, onePlus));
  }
  case Activation::Silu: {
    // x / (1 + exp(-x))
    int e = s.un("exp", s.un("negf", x));
    return s.bin("divf", x, s.bin("addf", s.cst(1.0), e));
  }
  }
  return x;
}

/// The steps between the col-wise linear(s) and the row-wise one. Inputs:
/// the col-wise result(s) (MLP: h; SwiGLU: gate, up), then, when the generic
/// form adds the first bias itself, the bias vector(s).
Steps middleSteps(const BlockSpec &spec, bool biasInside) {
  Steps s;
  const int lin = spec.colLinears();
  std::vector<int> h;
  for (int c = 0; c < lin; ++c) {
    int v = s.in(c);
    if (biasInside)
      v = s.bin("addf", v, s.in(lin + c, /*vector=*/true));
    h.push_back(v);
  }
  const bool powi = spec.form == OpForm::LinalgGeneric ||
                    (spec.form == OpForm::Arith && !spec.dynamicBatch());
  if (spec.kind == BlockKind::Mlp) {
    int v = h[0];
    for (int i = 0; i < spec.repeat; ++i)
      v = activation(s, spec.activation, v, spec.form, powi);
  }
  else
    s.bin("mulf", activation(s, Activation::Silu, h[0], spec.form, powi),
          h[1]);
  return s;
}

Steps residualSteps() {
  Steps s;
  s.bin("addf", s.in(0), s.in(1));
  return s;
}

double roundTo(rt::DType t, double v) {
  uint8_t buf[8];
  rt::convertFromF64(t, &v, buf, 1);
  double r;
  rt::convertToF64(t, buf, &r, 1);
  return r;
}

/// Evaluates the steps on one element in float64, with each value's error
/// magnitude (the first-order sensitivity of the result to the inputs'
/// errors, plus the value itself for its own rounding).
void evaluate(const Steps &steps, rt::DType dtype,
              const std::vector<double> &in, const std::vector<double> &inMag,
              double &value, double &magnitude) {
  const std::vector<Step> &list = steps.list();
  std::vector<double> v(list.size()), m(list.size());
  for (size_t i = 0; i < list.size(); ++i) {
    const Step &s = list[i];
    double a = s.a >= 0 ? v[s.a] : 0, b = s.b >= 0 ? v[s.b] : 0;
    double ma = s.a >= 0 ? m[s.a] : 0, mb = s.b >= 0 ? m[s.b] : 0;
    double r = 0, mr = 0;
    if (s.op == "in") {
      r = in[s.input];
      mr = inMag[s.input];
    } else if (s.op == "const") {
      r = roundTo(dtype, s.value); // as the IR holds it
      mr = 0;
    } else if (s.op == "addf" || s.op == "subf") {
      r = s.op == "addf" ? a + b : a - b;
      mr = ma + mb + std::fabs(r);
    } else if (s.op == "mulf") {
      r = a * b;
      mr = std::fabs(b) * ma + std::fabs(a) * mb + std::fabs(r);
    } else if (s.op == "divf") {
      r = a / b;
      mr = ma / std::fabs(b) + std::fabs(a) * mb / (b * b) + std::fabs(r);
    } else if (s.op == "negf") {
      r = -a;
      mr = ma;
    } else if (s.op == "maximumf") {
      r = std::max(a, b);
      mr = std::max(ma, mb) + std::fabs(r);
    } else if (s.op == "fpowi") {
      // The executor's expansion rounds once per product (n > 0 here):
      // n's bit length - 1 squarings and its set bits - 1 products.
      const int n = static_cast<int>(s.value);
      int products = -2;
      for (int k = n; k > 0; k >>= 1)
        products += 1 + (k & 1);
      r = std::pow(a, n);
      mr = std::fabs(n * std::pow(a, n - 1)) * ma +
           std::max(products, 1) * std::fabs(r);
    } else if (s.op == "tanh") {
      r = std::tanh(a);
      mr = (1 - r * r) * ma + std::fabs(r);
    } else if (s.op == "erf") {
      r = std::erf(a);
      mr = 1.1283791670955126 * std::exp(-a * a) * ma + std::fabs(r);
    } else if (s.op == "exp") {
      r = std::exp(a);
      mr = r * ma + r;
    } else if (s.op == "cmpf") {
      // Only "ogt" is generated.
      r = a > b ? 1.0 : 0.0;
      mr = 0;
    } else if (s.op == "select") {
      r = a != 0 ? b : v[s.c];
      mr = std::max(mb, m[s.c]);
    }
    v[i] = r;
    m[i] = mr;
  }
  value = v.back();
  magnitude = m.back();
}

//===----------------------------------------------------------------------===//
// MLIR text
//===----------------------------------------------------------------------===//

std::string floatLiteral(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.17g", v);
  std::string s = buf;
  if (s.find_first_of(".en") == std::string::npos)
    s += ".0";
  return s;
}

std::string mapFor(size_t rank, bool vector) {
  std::string dims;
  for (size_t d = 0; d < rank; ++d)
    dims += (d ? ", d" : "d") + std::to_string(d);
  std::string results =
      vector ? "d" + std::to_string(rank - 1) : dims;
  return "affine_map<(" + dims + ") -> (" + results + ")>";
}

class Writer {
public:
  explicit Writer(const BlockSpec &spec) : spec_(spec) {}

  std::string fresh() { return "%v" + std::to_string(next_++); }
  void line(const std::string &l) { body_ += "  " + l + "\n"; }
  const std::string &body() const { return body_; }
  std::string elt() const { return rt::dtypeName(spec_.dtype); }
  std::string tensor(const std::vector<int64_t> &shape) const {
    return tensorType(shape, spec_.dtype);
  }
  std::string boolTensor(const std::vector<int64_t> &shape) const {
    return "tensor<" + joinDims(shape, "x") + "xi1>";
  }
  /// `tensor.empty` of `shape`, its dynamic dims (batch dims) sized by the
  /// values set with setBatchSizes.
  std::string empty(const std::vector<int64_t> &shape) const {
    std::string sizes;
    for (size_t i = 0; i < shape.size(); ++i)
      if (shape[i] == rt::kDynamic)
        sizes += (sizes.empty() ? "" : ", ") + batchSizes_[i];
    return "tensor.empty(" + sizes + ") : " + tensor(shape);
  }
  /// The SSA values of the batch dims' sizes, by dim (dynamic dims only).
  void setBatchSizes(std::vector<std::string> sizes) {
    batchSizes_ = std::move(sizes);
  }

  /// The steps on tensors of `shape`; `inputs[i]` is input i's SSA name
  /// (a vector input has the shape's last dim). Returns the result's name.
  std::string emit(const Steps &steps, const std::vector<int64_t> &shape,
                   const std::vector<std::string> &inputs) {
    switch (spec_.form) {
    case OpForm::Arith:
      return emitTensorOps(steps, shape, inputs, /*linalg=*/false);
    case OpForm::LinalgElementwise:
      return emitTensorOps(steps, shape, inputs, /*linalg=*/true);
    case OpForm::LinalgGeneric:
      return emitGeneric(steps, shape, inputs);
    }
    return {};
  }

private:
  std::string emitTensorOps(const Steps &steps,
                            const std::vector<int64_t> &shape,
                            const std::vector<std::string> &inputs,
                            bool linalg) {
    const std::string t = tensor(shape);
    std::vector<std::string> names;
    for (const Step &s : steps.list()) {
      std::string r = fresh();
      if (s.op == "in") {
        names.push_back(inputs[s.input]);
        continue;
      }
      if (s.op == "const" && spec_.dynamicBatch()) {
        // A splat of a dynamic shape: a scalar filled in.
        std::string scalar = fresh(), init = fresh();
        line(scalar + " = arith.constant " + floatLiteral(s.value) + " : " +
             elt());
        line(init + " = " + empty(shape));
        line(r + " = linalg.fill ins(" + scalar + " : " + elt() + ") outs(" +
             init + " : " + t + ") -> " + t);
      } else if (s.op == "const") {
        line(r + " = arith.constant dense<" + floatLiteral(s.value) +
             "> : " + t);
      } else if (s.op == "cmpf") {
        line(r + " = arith.cmpf " + s.predicate + ", " + names[s.a] + ", " +
             names[s.b] + " : " + t);
      } else if (s.op == "fpowi") {
        // A splat exponent (static shapes only: see activation()).
        std::string n = fresh();
        std::string ti = "tensor<" + joinDims(shape, "x") + "xi64>";
        line(n + " = arith.constant dense<" +
             std::to_string(static_cast<int64_t>(s.value)) + "> : " + ti);
        line(r + " = math.fpowi " + names[s.a] + ", " + n + " : " + t + ", " +
             ti);
      } else if (!linalg) {
        std::string dialect = s.op == "tanh" || s.op == "erf" || s.op == "exp"
                                  ? "math."
                                  : "arith.";
        std::string operands = names[s.a];
        if (s.op == "select")
          operands += ", " + names[s.b] + ", " + names[s.c];
        else if (s.b >= 0)
          operands += ", " + names[s.b];
        std::string type = s.op == "select" ? boolTensor(shape) + ", " + t : t;
        line(r + " = " + dialect + s.op + " " + operands + " : " + type);
      } else {
        static const std::pair<const char *, const char *> kinds[] = {
            {"addf", "add"}, {"subf", "sub"},   {"mulf", "mul"},
            {"divf", "div"}, {"negf", "negf"},  {"tanh", "tanh"},
            {"erf", "erf"},  {"exp", "exp"},    {"select", "select"}};
        std::string kind;
        for (auto &[op, k] : kinds)
          if (s.op == op)
            kind = k;
        std::string init = fresh();
        line(init + " = " + empty(shape));
        std::string ins = names[s.a], types = s.op == "select"
                                                  ? boolTensor(shape)
                                                  : t;
        for (int arg : {s.b, s.c})
          if (arg >= 0) {
            ins += ", " + names[arg];
            types += ", " + t;
          }
        line(r + " = linalg.elementwise kind=#linalg.elementwise_kind<" +
             kind + "> ins(" + ins + " : " + types + ") outs(" + init +
             " : " + t + ") -> " + t);
      }
      names.push_back(r);
    }
    return names.back();
  }

  std::string emitGeneric(const Steps &steps, const std::vector<int64_t> &shape,
                          const std::vector<std::string> &inputs) {
    const std::string t = tensor(shape);
    const std::string e = elt();
    const size_t rank = shape.size();
    // Each input's map and type, in input order.
    std::vector<bool> vector(steps.numInputs(), false);
    for (const Step &s : steps.list())
      if (s.op == "in" && s.vector)
        vector[s.input] = true;
    std::string maps, ins, types, iterators;
    for (size_t i = 0; i < vector.size(); ++i) {
      maps += mapFor(rank, vector[i]) + ", ";
      ins += (i ? ", " : "") + inputs[i];
      types += (i ? ", " : "") +
               (vector[i] ? tensor({shape.back()}) : t);
    }
    maps += mapFor(rank, false);
    for (size_t d = 0; d < rank; ++d)
      iterators += std::string(d ? ", " : "") + "\"parallel\"";
    // fpowi's exponents, captured from outside the body as torch-mlir
    // does.
    std::map<size_t, std::string> exponents;
    for (size_t i = 0; i < steps.list().size(); ++i)
      if (steps.list()[i].op == "fpowi") {
        exponents[i] = fresh();
        line(exponents[i] + " = arith.constant " +
             std::to_string(static_cast<int64_t>(steps.list()[i].value)) +
             " : i64");
      }
    std::string init = fresh();
    line(init + " = " + empty(shape));
    std::string r = fresh();
    line(r + " = linalg.generic {indexing_maps = [" + maps +
         "], iterator_types = [" + iterators + "]} ins(" + ins + " : " +
         types + ") outs(" + init + " : " + t + ") {");
    std::string args;
    for (size_t i = 0; i < vector.size(); ++i)
      args += "%in" + std::to_string(i) + ": " + e + ", ";
    line("^bb0(" + args + "%out: " + e + "):");
    std::vector<std::string> names;
    for (const Step &s : steps.list()) {
      if (s.op == "in") {
        names.push_back("%in" + std::to_string(s.input));
        continue;
      }
      std::string n = "%s" + std::to_string(next_++);
      if (s.op == "const")
        line("  " + n + " = arith.constant " + floatLiteral(s.value) + " : " +
             e);
      else if (s.op == "cmpf")
        line("  " + n + " = arith.cmpf " + s.predicate + ", " + names[s.a] +
             ", " + names[s.b] + " : " + e);
      else if (s.op == "select")
        line("  " + n + " = arith.select " + names[s.a] + ", " + names[s.b] +
             ", " + names[s.c] + " : " + e);
      else if (s.op == "fpowi")
        line("  " + n + " = math.fpowi " + names[s.a] + ", " +
             exponents[&s - steps.list().data()] + " : " + e + ", i64");
      else {
        std::string dialect = s.op == "tanh" || s.op == "erf" || s.op == "exp"
                                  ? "math."
                                  : "arith.";
        std::string operands = names[s.a];
        if (s.b >= 0)
          operands += ", " + names[s.b];
        line("  " + n + " = " + dialect + s.op + " " + operands + " : " + e);
      }
      names.push_back(n);
    }
    line("  linalg.yield " + names.back() + " : " + e);
    line("} -> " + t);
    return r;
  }

  const BlockSpec &spec_;
  std::string body_;
  int next_ = 0;
  std::vector<std::string> batchSizes_;
};

std::string shardedType(const BlockArgument &a, rt::DType dtype) {
  return "!shardlin.sharded<" + tensorType(a.shape, dtype) +
         ", #shardlin.chunk<dim = " + std::to_string(a.dim) +
         ", placements = [" + joinDims(a.placements, ", ") + "]>>";
}

bool biasInsideGeneric(const BlockSpec &spec) {
  return spec.form == OpForm::LinalgGeneric && spec.colBias;
}

} // namespace

std::string blockMlir(const BlockSpec &spec) {
  const std::vector<BlockArgument> args = blockArguments(spec);
  std::vector<int64_t> hidden = spec.batch;
  hidden.push_back(spec.f);
  const std::string tx = tensorType(spec.inputShape(), spec.dtype);
  const std::string th = tensorType(hidden, spec.dtype);

  std::string signature;
  std::vector<std::string> argNames(args.size());
  std::vector<std::string> argTypes(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    const BlockArgument &a = args[i];
    argNames[i] = "%a" + std::to_string(i);
    argTypes[i] =
        a.sharded ? shardedType(a, spec.dtype) : tensorType(a.shape, spec.dtype);
    signature += (i ? ", " : "") + argNames[i] + ": " + argTypes[i];
  }
  auto find = [&](BlockArgument::Role role, int block, int which) {
    return findBlockArgument(args, role, block, which);
  };

  Writer w(spec);
  // Dynamic batch dims: every tensor.empty takes their sizes from the input.
  std::vector<std::string> sizes(spec.batch.size());
  for (size_t i = 0; i < spec.batch.size(); ++i) {
    if (spec.batch[i] != rt::kDynamic)
      continue;
    std::string c = w.fresh();
    sizes[i] = w.fresh();
    w.line(c + " = arith.constant " + std::to_string(i) + " : index");
    w.line(sizes[i] + " = tensor.dim " + argNames[0] + ", " + c + " : " + tx);
  }
  w.setBatchSizes(sizes);
  const bool inside = biasInsideGeneric(spec);
  std::string x = argNames[0];
  for (int b = 0; b < spec.blocks; ++b) {
    std::vector<std::string> middleInputs, biases;
    for (int c = 0; c < spec.colLinears(); ++c) {
      int wi = find(BlockArgument::Role::ColWeight, b, c);
      int bi = find(BlockArgument::Role::ColBias, b, c);
      std::string h = w.fresh();
      bool fusedBias = bi >= 0 && !inside;
      w.line(h + " = shardlin.linear " + x + ", " + argNames[wi] +
             (fusedBias ? ", " + argNames[bi] : std::string()) + " : (" + tx +
             ", " + argTypes[wi] +
             (fusedBias ? ", " + argTypes[bi] : std::string()) + ") -> " + th);
      middleInputs.push_back(h);
      if (bi >= 0 && inside)
        biases.push_back(argNames[bi]);
    }
    for (const std::string &bias : biases)
      middleInputs.push_back(bias);
    std::string a = w.emit(middleSteps(spec, inside), hidden, middleInputs);
    int vi = find(BlockArgument::Role::RowWeight, b, 0);
    int ri = find(BlockArgument::Role::RowBias, b, 0);
    std::string y = w.fresh();
    w.line(y + " = shardlin.linear " + a + ", " + argNames[vi] +
           (ri >= 0 ? ", " + argNames[ri] : std::string()) + " : (" + th +
           ", " + argTypes[vi] +
           (ri >= 0 ? ", " + argTypes[ri] : std::string()) + ") -> " + tx);
    if (spec.residual)
      y = w.emit(residualSteps(), spec.inputShape(), {x, y});
    x = y;
  }
  return "func.func @main(" + signature + ") -> " + tx + " {\n" + w.body() +
         "  return " + x + " : " + tx + "\n}\n";
}

rt::Status compileBlock(const BlockSpec &spec, rt::Program &out) {
  return compileMlir(blockMlir(spec), spec.strategy, out,
                     CompileMessage::DiagnosticsAndInput, spec.fuse);
}

BlockData makeBlockData(const BlockSpec &spec, uint64_t seed) {
  const std::vector<BlockArgument> args = blockArguments(spec);
  std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + 12345);
  auto fill = [&](BlockData::Tensor &t, int64_t n, double scale) {
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    t.values.resize(n);
    for (double &v : t.values)
      v = u(rng) * scale;
    t.bytes.resize(n * rt::dtypeSize(spec.dtype));
    rt::convertFromF64(spec.dtype, t.values.data(), t.bytes.data(), n);
    // The values the program sees.
    rt::convertToF64(spec.dtype, t.bytes.data(), t.values.data(), n);
  };
  auto count = [](const std::vector<int64_t> &shape) {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    return n;
  };
  BlockData data;
  data.args.resize(args.size());
  for (size_t i = 1; i < args.size(); ++i) {
    // Weights scaled by 1/sqrt(fan-in) keep activations O(1).
    const BlockArgument &a = args[i];
    double scale = a.sharded ? 1.0 / std::sqrt(double(a.shape[1])) : 0.5;
    fill(data.args[i], count(a.shape), scale);
  }
  data.inputs.resize(spec.worldSize());
  for (int r = 0; r < spec.worldSize(); ++r)
    fill(data.inputs[r], count(spec.inputShapeOf(r)), 1.0);
  return data;
}

BlockReference blockReference(const BlockSpec &spec, const BlockData &data,
                              int rank) {
  const std::vector<BlockArgument> args = blockArguments(spec);
  auto find = [&](BlockArgument::Role role, int block, int which) {
    return findBlockArgument(args, role, block, which);
  };
  const int64_t rows = spec.rowsOf(rank), h = spec.h, f = spec.f;
  // y = x W^T (+ b), with magnitudes: the absolute products and bias, plus
  // the input magnitudes carried through |W|.
  auto linear = [&](const std::vector<double> &x, const std::vector<double> &xm,
                    int64_t k, int64_t n, int wi, int bi,
                    std::vector<double> &y, std::vector<double> &ym) {
    const std::vector<double> &wv = data.args[wi].values;
    y.assign(rows * n, 0);
    ym.assign(rows * n, 0);
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = 0, m = 0;
        for (int64_t kk = 0; kk < k; ++kk) {
          double wjk = wv[j * k + kk];
          s += x[i * k + kk] * wjk;
          m += std::fabs(x[i * k + kk] * wjk) + std::fabs(wjk) * xm[i * k + kk];
        }
        if (bi >= 0) {
          s += data.args[bi].values[j];
          m += std::fabs(data.args[bi].values[j]);
        }
        y[i * n + j] = s;
        ym[i * n + j] = m;
      }
  };
  const bool inside = biasInsideGeneric(spec);
  std::vector<double> x = data.inputs[rank].values, xm(x.size(), 0.0);
  for (int b = 0; b < spec.blocks; ++b) {
    std::vector<std::vector<double>> hv(spec.colLinears()),
        hm(spec.colLinears());
    std::vector<int> biasArgs;
    for (int c = 0; c < spec.colLinears(); ++c) {
      int bi = find(BlockArgument::Role::ColBias, b, c);
      linear(x, xm, h, f, find(BlockArgument::Role::ColWeight, b, c),
             inside ? -1 : bi, hv[c], hm[c]);
      if (inside)
        biasArgs.push_back(bi);
    }
    Steps middle = middleSteps(spec, inside);
    std::vector<double> a(rows * f), am(rows * f);
    std::vector<double> in(middle.numInputs()), inMag(middle.numInputs());
    for (int64_t e = 0; e < rows * f; ++e) {
      size_t slot = 0;
      for (int c = 0; c < spec.colLinears(); ++c, ++slot) {
        in[slot] = hv[c][e];
        inMag[slot] = hm[c][e];
      }
      for (int bi : biasArgs) {
        in[slot] = data.args[bi].values[e % f];
        inMag[slot++] = 0;
      }
      evaluate(middle, spec.dtype, in, inMag, a[e], am[e]);
    }
    std::vector<double> y, ym;
    linear(a, am, f, h, find(BlockArgument::Role::RowWeight, b, 0),
           find(BlockArgument::Role::RowBias, b, 0), y, ym);
    if (spec.residual) {
      Steps res = residualSteps();
      for (size_t e = 0; e < y.size(); ++e)
        evaluate(res, spec.dtype, {x[e], y[e]}, {xm[e], ym[e]}, y[e], ym[e]);
    }
    x = std::move(y);
    xm = std::move(ym);
  }
  return {std::move(x), std::move(xm)};
}

double blockErrorBound(const BlockSpec &spec) {
  // Each stored tensor is rounded once to the dtype, each error at most
  // u * (its magnitude), and the magnitudes carry earlier errors forward
  // (BlockReference). Per block: the col-wise GEMM (bias fused) rounds once;
  // the elementwise chain computes in f32 and rounds once; the row-wise
  // linear rounds each rank's partial product, up to W - 1 times in a
  // pairwise reduction and once for the bias (W + 1, see E2ESupport.cpp's
  // errorBound); the residual add once. (W + 4) u covers them. f32: the
  // GEMMs' K additions in f32 and the transcendental functions' few ulps
  // stay far below 1e-5 of the magnitude; f64 below 1e-12.
  return shardlin::testing::roundingErrorBound(spec.dtype,
                                               spec.worldSize() + 4);
}

int64_t checkBlockOutput(const BlockSpec &spec, const BlockData &data,
                         int rank, const std::vector<uint8_t> &output,
                         std::string &report) {
  const BlockReference ref = blockReference(spec, data, rank);
  return compareWithReference(spec.name() + " rank " + std::to_string(rank),
                              spec.dtype, output, spec.h, ref.y, ref.scale,
                              blockErrorBound(spec), report);
}

rt::Status runBlockAt(const rt::Program &program, const BlockSpec &base,
                      const std::vector<std::vector<int64_t>> &rankBatch,
                      uint64_t seed, const rt::RunOptions &options,
                      rt::PlanCache &plans, BlockBatchRun &out) {
  out.spec = base;
  out.spec.rankBatch = rankBatch;
  out.data = makeBlockData(out.spec, seed);
  return runBlock(program, out.spec, out.data, options, out.outputs, out.ranks,
                  {}, &plans);
}

rt::Status runBlock(const rt::Program &program, const BlockSpec &spec,
                    const BlockData &data, const rt::RunOptions &options,
                    std::vector<std::vector<uint8_t>> &outputs,
                    std::vector<rt::RankResult> &ranks,
                    const std::function<rt::Status(rt::RankRun &)> &run,
                    rt::PlanCache *plans,
                    const rt::RankCallbacks::MakeExecutor &executor) {
  const int w = spec.worldSize();
  outputs.assign(w, {});
  // Device buffers of each rank (freed by release, on the rank's thread).
  std::vector<std::vector<rt::Buffer>> buffers(w);
  rt::RankCallbacks callbacks;
  callbacks.plans = plans;
  callbacks.executor = executor;
  callbacks.argShapes = [&](int rank, std::vector<std::vector<int64_t>> &shapes,
                            std::vector<std::string> &) {
    return dynamicArgShapes(program, 0, spec.inputShapeOf(rank), shapes);
  };
  callbacks.bind = [&](const rt::Plan &plan, rt::RankDevice &device,
                       rt::RankBuffers &bound) -> rt::Status {
    const int r = plan.rank();
    if (plan.numArgs() != program.args.size() || plan.numResults() != 1)
      return rt::Status::internal("the block's program has an unexpected "
                                  "signature");
    std::vector<rt::Buffer> &mine = buffers[r];
    mine.clear();
    mine.reserve(plan.numArgs() + 1);
    for (size_t i = 0; i < plan.numArgs(); ++i) {
      const rt::Argument &arg = program.args[i];
      std::vector<uint8_t> chunk;
      const std::vector<uint8_t> *host = &chunk;
      if (i == 0)
        host = &data.inputs[r].bytes;
      else if (arg.sharded)
        rt::extractLocalChunk(data.args[i].bytes.data(), arg.globalShape,
                              spec.dtype, arg.sharding, r, chunk);
      else
        host = &data.args[i].bytes;
      mine.emplace_back();
      SHARDLIN_RETURN_IF_ERROR(rt::Buffer::allocate(
          device.allocator(), std::max<size_t>(host->size(), 1), mine.back()));
      if (!host->empty())
        SHARDLIN_RETURN_IF_ERROR(device.copyFromHost(
            mine.back().data(), host->data(), host->size()));
      bound.args.push_back(mine.back().data());
    }
    if (rt::hasDynamicDim(plan.resultShape(0))) {
      // Compiled code with rows known only at run time allocates its result
      // (RankBuffers::resultShapes); finish copies it.
      bound.results = {nullptr};
      return rt::Status::ok();
    }
    int64_t count = 1;
    for (int64_t d : plan.resultShape(0))
      count *= d;
    std::vector<double> nan(static_cast<size_t>(count), NAN);
    outputs[r].resize(static_cast<size_t>(count) * rt::dtypeSize(spec.dtype));
    rt::convertFromF64(spec.dtype, nan.data(), outputs[r].data(), count);
    mine.emplace_back();
    SHARDLIN_RETURN_IF_ERROR(rt::Buffer::allocate(
        device.allocator(), std::max<size_t>(outputs[r].size(), 1),
        mine.back()));
    if (!outputs[r].empty())
      SHARDLIN_RETURN_IF_ERROR(device.copyFromHost(
          mine.back().data(), outputs[r].data(), outputs[r].size()));
    bound.results = {mine.back().data()};
    return rt::Status::ok();
  };
  callbacks.finish = [&](const rt::Plan &plan, rt::RankDevice &device,
                         const rt::RankBuffers &bound,
                         rt::Communicator &) -> rt::Status {
    std::vector<uint8_t> &out = outputs[plan.rank()];
    if (rt::hasDynamicDim(plan.resultShape(0))) {
      int64_t count = 1;
      for (int64_t d : bound.resultShapes.at(0))
        count *= d;
      out.resize(static_cast<size_t>(count) * rt::dtypeSize(spec.dtype));
    }
    return out.empty() ? rt::Status::ok()
                       : device.copyToHost(out.data(), bound.results[0],
                                           out.size());
  };
  callbacks.release = [&](int rank) { buffers[rank].clear(); };
  callbacks.run = run;
  rt::RunOptions opts = options;
  opts.worldSize = w;
  return rt::runProgram(program, opts, callbacks, &ranks);
}

} // namespace shardlin::testkit
