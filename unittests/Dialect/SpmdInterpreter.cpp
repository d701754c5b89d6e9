//===- SpmdInterpreter.cpp - Running shardlin IR on W simulated ranks -----===//

#include "SpmdInterpreter.h"

#include "shardlin/Dialect/Shardlin/IR/ShardlinOps.h"
#include "shardlin/runtime/base/ChunkLayout.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <limits>
#include <numeric>

using namespace mlir;
using namespace mlir::shardlin;

namespace shardlin::testing {

int64_t Tensor::numel() const {
  return std::accumulate(shape.begin(), shape.end(), int64_t{1},
                         std::multiplies<int64_t>());
}

Tensor Tensor::zeros(std::vector<int64_t> shape) {
  Tensor t;
  t.shape = std::move(shape);
  t.data.assign(t.numel(), 0.0);
  return t;
}

namespace {

/// One value on every rank: tensors, or index values (sizes).
struct Values {
  std::vector<Tensor> tensors;
  std::vector<int64_t> indices;
};

/// The first error of a run (the tests are built without exceptions: an op
/// that fails records why and gives placeholder values; the run stops after
/// it).
thread_local std::string *firstError = nullptr;
void fail(const std::string &message) {
  if (firstError && firstError->empty())
    *firstError = message;
}

std::vector<int64_t> stridesOf(const std::vector<int64_t> &shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (int i = static_cast<int>(shape.size()) - 2; i >= 0; --i)
    s[i] = s[i + 1] * shape[i + 1];
  return s;
}

/// The part [offset, offset + size) of dim `d`.
Tensor slice(const Tensor &t, int64_t d, int64_t offset, int64_t size) {
  std::vector<int64_t> shape = t.shape;
  shape[d] = size;
  Tensor out = Tensor::zeros(shape);
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < d; ++i)
    outer *= t.shape[i];
  for (size_t i = d + 1; i < t.shape.size(); ++i)
    inner *= t.shape[i];
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t k = 0; k < size; ++k)
      for (int64_t i = 0; i < inner; ++i)
        out.data[(o * size + k) * inner + i] =
            t.data[(o * t.shape[d] + offset + k) * inner + i];
  return out;
}

/// `parts` concatenated along dim `d`.
Tensor concat(const std::vector<Tensor> &parts, int64_t d) {
  std::vector<int64_t> shape = parts.front().shape;
  shape[d] = 0;
  for (const Tensor &p : parts)
    shape[d] += p.shape[d];
  Tensor out = Tensor::zeros(shape);
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < d; ++i)
    outer *= shape[i];
  for (size_t i = d + 1; i < shape.size(); ++i)
    inner *= shape[i];
  int64_t at = 0;
  for (const Tensor &p : parts) {
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t k = 0; k < p.shape[d]; ++k)
        for (int64_t i = 0; i < inner; ++i)
          out.data[(o * shape[d] + at + k) * inner + i] =
              p.data[(o * p.shape[d] + k) * inner + i];
    at += p.shape[d];
  }
  return out;
}

std::vector<int64_t> placementsOf(ChunkAttr c) {
  return std::vector<int64_t>(c.getPlacements().begin(),
                              c.getPlacements().end());
}

double scalarOp(Operation *op, const std::vector<double> &a) {
  StringRef name = op->getName().getStringRef();
  if (auto cmp = dyn_cast<arith::CmpFOp>(op)) {
    const double x = a[0], y = a[1];
    const bool unordered = std::isnan(x) || std::isnan(y);
    using P = arith::CmpFPredicate;
    switch (cmp.getPredicate()) {
    case P::AlwaysFalse:
      return 0;
    case P::OEQ:
      return !unordered && x == y;
    case P::OGT:
      return !unordered && x > y;
    case P::OGE:
      return !unordered && x >= y;
    case P::OLT:
      return !unordered && x < y;
    case P::OLE:
      return !unordered && x <= y;
    case P::ONE:
      return !unordered && x != y;
    case P::ORD:
      return !unordered;
    case P::UEQ:
      return unordered || x == y;
    case P::UGT:
      return unordered || x > y;
    case P::UGE:
      return unordered || x >= y;
    case P::ULT:
      return unordered || x < y;
    case P::ULE:
      return unordered || x <= y;
    case P::UNE:
      return unordered || x != y;
    case P::UNO:
      return unordered;
    case P::AlwaysTrue:
      return 1;
    }
  }
  auto nanOr = [&](double v) {
    return std::isnan(a[0]) || std::isnan(a[1])
               ? std::numeric_limits<double>::quiet_NaN()
               : v;
  };
  if (name == "arith.addf")
    return a[0] + a[1];
  if (name == "arith.subf")
    return a[0] - a[1];
  if (name == "arith.mulf")
    return a[0] * a[1];
  if (name == "arith.divf")
    return a[0] / a[1];
  if (name == "arith.negf")
    return -a[0];
  if (name == "arith.maximumf")
    return nanOr(std::max(a[0], a[1]));
  if (name == "arith.minimumf")
    return nanOr(std::min(a[0], a[1]));
  if (name == "arith.maxnumf")
    return std::fmax(a[0], a[1]);
  if (name == "arith.minnumf")
    return std::fmin(a[0], a[1]);
  if (name == "arith.select")
    return a[0] != 0 ? a[1] : a[2];
  if (name == "math.tanh")
    return std::tanh(a[0]);
  if (name == "math.erf")
    return std::erf(a[0]);
  if (name == "math.exp")
    return std::exp(a[0]);
  if (name == "math.log")
    return std::log(a[0]);
  if (name == "math.sqrt")
    return std::sqrt(a[0]);
  if (name == "math.rsqrt")
    return 1.0 / std::sqrt(a[0]);
  if (name == "math.absf")
    return std::fabs(a[0]);
  if (name == "math.fpowi") // The exponent: an integer constant's value.
    return std::pow(a[0], a[1]);
  fail("no scalar evaluation of '" + name.str() + "'");
  return 0;
}

std::optional<double> floatConstant(Value v) {
  auto cst = v.getDefiningOp<arith::ConstantOp>();
  if (!cst)
    return std::nullopt;
  if (auto f = dyn_cast<FloatAttr>(cst.getValue()))
    return f.getValueAsDouble();
  if (auto d = dyn_cast<DenseFPElementsAttr>(cst.getValue()))
    if (d.isSplat())
      return d.getSplatValue<APFloat>().convertToDouble();
  // An integer (math.fpowi's exponent), scalar or splat, as a double.
  if (auto i = dyn_cast<IntegerAttr>(cst.getValue());
      i && !i.getType().isIndex())
    return static_cast<double>(i.getValue().getSExtValue());
  if (auto d = dyn_cast<DenseIntElementsAttr>(cst.getValue()))
    if (d.isSplat())
      return static_cast<double>(d.getSplatValue<APInt>().getSExtValue());
  return std::nullopt;
}

class Interpreter {
public:
  Interpreter(int64_t w) : w(w), sent(w, 0) {}

  std::vector<std::vector<Tensor>>
  run(func::FuncOp f, const std::vector<std::vector<Tensor>> &args) {
    Block &body = f.getBody().front();
    for (auto [i, a] : llvm::enumerate(body.getArguments()))
      env[a].tensors = args[i];
    for (Operation &op : body) {
      if (auto ret = dyn_cast<func::ReturnOp>(op)) {
        std::vector<std::vector<Tensor>> results;
        for (Value v : ret.getOperands())
          results.push_back(env.at(v).tensors);
        return results;
      }
      step(&op);
      if (!firstError->empty())
        return {};
    }
    fail("no return");
    return {};
  }

private:
  const std::vector<Tensor> &in(Value v) {
    auto it = env.find(v);
    if (it == env.end()) {
      fail("a value is used before it is defined");
      static const std::vector<Tensor> none;
      return none;
    }
    return it->second.tensors;
  }
  std::vector<int64_t> dynamicSizes(Operation *op, RankedTensorType type,
                                    ValueRange sizes, int64_t r) {
    std::vector<int64_t> shape(type.getShape().begin(), type.getShape().end());
    unsigned k = 0;
    for (int64_t &d : shape)
      if (ShapedType::isDynamic(d))
        d = env.at(sizes[k++]).indices[r];
    return shape;
  }

  void step(Operation *op);
  void elementwise(Operation *op);
  void linear(LinearOp op);
  void gemm(GemmOp op);

  /// The ranges by rank of a split of dim `d` of `t`: its blocks if that dim
  /// was stacked, else the chunk rule.
  std::vector<rt::Range> splitRanges(const Tensor &t, int64_t d,
                                     const std::vector<int64_t> &placements) {
    std::vector<rt::Range> ranges(w);
    if (t.blockDim == d && static_cast<int64_t>(t.blockSizes.size()) == w) {
      int64_t offset = 0;
      for (int64_t c = 0; c < w; ++c) {
        ranges[placements[c]] = {offset, t.blockSizes[c]};
        offset += t.blockSizes[c];
      }
      return ranges;
    }
    rt::ChunkLayout layout(t.shape[d], placements);
    for (int64_t r = 0; r < w; ++r)
      ranges[r] = layout.ofRank(r);
    return ranges;
  }

  int64_t w;

public:
  /// Bytes each rank sends, by the runtime's CommStats rules.
  std::vector<uint64_t> sent;

private:
  llvm::DenseMap<Value, Values> env;
};

/// The element size of `v` in bytes.
uint64_t elementBytes(Value v) {
  return (cast<ShapedType>(v.getType()).getElementTypeBitWidth() + 7) / 8;
}

void Interpreter::step(Operation *op) {
  Values out;
  auto each = [&](auto &&fn) {
    for (int64_t r = 0; r < w; ++r)
      out.tensors.push_back(fn(r));
  };
  // Each rank's chunk of `source` along `spec`.
  auto eachChunk = [&](Value source, ChunkAttr spec) {
    each([&](int64_t r) {
      const Tensor &g = in(source)[r];
      rt::Range range =
          rt::ChunkLayout(g.shape[spec.getDim()], placementsOf(spec)).ofRank(r);
      return slice(g, spec.getDim(), range.offset, range.size);
    });
  };
  if (auto c = dyn_cast<arith::ConstantOp>(op)) {
    if (op->getResult(0).getType().isIndex()) {
      out.indices.assign(w, cast<IntegerAttr>(c.getValue()).getInt());
    } else if (auto type = dyn_cast<RankedTensorType>(c.getType())) {
      std::optional<double> v = floatConstant(c);
      if (!v) {
        fail("only splat constants");
        return;
      }
      Tensor t =
          Tensor::zeros({type.getShape().begin(), type.getShape().end()});
      std::fill(t.data.begin(), t.data.end(), *v);
      out.tensors.assign(w, t);
    }
    env[op->getResult(0)] = std::move(out);
    return;
  }
  if (auto d = dyn_cast<tensor::DimOp>(op)) {
    for (int64_t r = 0; r < w; ++r)
      out.indices.push_back(in(d.getSource())[r].shape[*d.getConstantIndex()]);
    env[d.getResult()] = std::move(out);
    return;
  }
  if (auto e = dyn_cast<tensor::EmptyOp>(op)) {
    each([&](int64_t r) {
      Tensor t =
          Tensor::zeros(dynamicSizes(op, e.getType(), e.getDynamicSizes(), r));
      std::fill(t.data.begin(), t.data.end(),
                std::numeric_limits<double>::quiet_NaN());
      return t;
    });
    env[e.getResult()] = std::move(out);
    return;
  }
  bool member = isa<linalg::LinalgOp>(op) ||
                op->getName().getDialectNamespace() == "arith" ||
                op->getName().getDialectNamespace() == "math";
  if (member)
    return elementwise(op);

  if (auto l = dyn_cast<LinearOp>(op))
    return linear(l);
  if (auto g = dyn_cast<GemmOp>(op))
    return gemm(g);
  TypeSwitch<Operation *>(op)
      .Case([&](tensor::CollapseShapeOp c) {
        each([&](int64_t r) {
          Tensor t = in(c.getSrc())[r];
          std::vector<int64_t> shape;
          for (const auto &group : c.getReassociationIndices()) {
            int64_t p = 1;
            for (int64_t g : group)
              p *= t.shape[g];
            shape.push_back(p);
          }
          t.shape = shape;
          t.blockDim = -1;
          return t;
        });
      })
      .Case([&](tensor::ExpandShapeOp e) {
        each([&](int64_t r) {
          Tensor t = in(e.getSrc())[r];
          std::vector<int64_t> shape;
          for (OpFoldResult s : e.getMixedOutputShape()) {
            if (auto a = dyn_cast<Attribute>(s))
              shape.push_back(cast<IntegerAttr>(a).getInt());
            else
              shape.push_back(env.at(cast<Value>(s)).indices[r]);
          }
          t.shape = shape;
          if (t.numel() != static_cast<int64_t>(t.data.size()))
            fail("expand_shape changes the element count");
          t.blockDim = -1;
          return t;
        });
      })
      .Case([&](LocalShardOp l) {
        eachChunk(l.getSource(), l.getSource().getType().getSharding());
      })
      .Case([&](LocalChunkOp l) { eachChunk(l.getSource(), l.getAlong()); })
      .Case([&](AllGatherOp a) {
        ChunkAttr spec = a.getAlong();
        const int64_t d = spec.getDim();
        std::vector<Tensor> parts;
        Tensor gathered;
        std::vector<int64_t> sizes;
        for (int64_t c = 0; c < w; ++c) {
          parts.push_back(in(a.getInput())[spec.getPlacements()[c]]);
          sizes.push_back(parts.back().shape[d]);
        }
        gathered = concat(parts, d);
        for (int64_t r = 0; r < w; ++r)
          sent[r] += in(a.getInput())[r].numel() * (w - 1) *
                     elementBytes(a.getInput());
        int64_t n = a.getResult().getType().getShape()[d];
        if (ShapedType::isDynamic(n)) {
          gathered.blockDim = d;
          gathered.blockSizes = sizes;
        } else {
          for (int64_t c = 0; c < w; ++c)
            if (rt::chunkRange(n, w, c).size != sizes[c])
              fail("all_gather: a rank's block is not its chunk");
        }
        out.tensors.assign(w, gathered);
      })
      .Case([&](ReduceScatterOp rs) {
        const std::vector<Tensor> &parts = in(rs.getInput());
        Tensor sum = parts[0];
        for (int64_t r = 1; r < w; ++r) {
          if (parts[r].shape != sum.shape) {
            fail("reduce_scatter: ranks' shapes differ");
            return;
          }
          for (size_t i = 0; i < sum.data.size(); ++i)
            sum.data[i] += parts[r].data[i];
        }
        const int64_t d = rs.getAlong().getDim();
        std::vector<rt::Range> ranges =
            splitRanges(parts[0], d, placementsOf(rs.getAlong()));
        const int64_t perRow =
            d < static_cast<int64_t>(sum.shape.size()) && sum.shape[d] > 0
                ? sum.numel() / sum.shape[d]
                : 0;
        for (int64_t r = 0; r < w; ++r)
          for (int64_t t = 0; t < w; ++t)
            if (t != r)
              sent[r] += ranges[t].size * perRow * elementBytes(rs.getInput());
        each([&](int64_t r) {
          return slice(sum, d, ranges[r].offset, ranges[r].size);
        });
      })
      .Case([&](AllReduceOp a) {
        const std::vector<Tensor> &parts = in(a.getInput());
        Tensor sum = parts[0];
        for (int64_t r = 1; r < w; ++r)
          for (size_t i = 0; i < sum.data.size(); ++i)
            sum.data[i] += parts[r].data[i];
        sum.blockDim = -1;
        for (int64_t r = 0; r < w; ++r)
          sent[r] += 2 * sum.numel() * (w - 1) / w * elementBytes(a.getInput());
        out.tensors.assign(w, sum);
      })
      .Case([&](AllToAllOp a) {
        const int64_t sd = a.getSplit().getDim(), cd = a.getConcat().getDim();
        std::vector<int64_t> concatPlacements = placementsOf(a.getConcat());
        const bool dynamicConcat =
            ShapedType::isDynamic(a.getResult().getType().getShape()[cd]);
        each([&](int64_t t) {
          std::vector<Tensor> pieces;
          std::vector<int64_t> sizes;
          for (int64_t c = 0; c < w; ++c) {
            const Tensor &src = in(a.getInput())[concatPlacements[c]];
            std::vector<rt::Range> ranges =
                splitRanges(src, sd, placementsOf(a.getSplit()));
            pieces.push_back(slice(src, sd, ranges[t].offset, ranges[t].size));
            sizes.push_back(pieces.back().shape[cd]);
            if (concatPlacements[c] != t)
              sent[concatPlacements[c]] +=
                  pieces.back().numel() * elementBytes(a.getInput());
          }
          Tensor res = concat(pieces, cd);
          if (dynamicConcat) {
            res.blockDim = cd;
            res.blockSizes = sizes;
          }
          return res;
        });
      })
      .Case([&](BiasAddOp b) {
        each([&](int64_t r) {
          Tensor t = in(b.getInput())[r];
          const Tensor &bias = in(b.getBias())[r];
          const int64_t n = t.shape.back();
          for (size_t i = 0; i < t.data.size(); ++i)
            t.data[i] += bias.data[i % n];
          return t;
        });
      })
      .Case([&](ConvertOp c) {
        each([&](int64_t r) { return in(c.getInput())[r]; });
      })
      .Case([&](SumRowsOp s) {
        each([&](int64_t r) {
          const Tensor &t = in(s.getInput())[r];
          Tensor res = Tensor::zeros({t.shape[1]});
          for (int64_t i = 0; i < t.shape[0]; ++i)
            for (int64_t j = 0; j < t.shape[1]; ++j)
              res.data[j] += t.data[i * t.shape[1] + j];
          return res;
        });
      })
      .Case([&](FromLocalOp f) {
        each([&](int64_t r) { return in(f.getSource())[r]; });
      })
      .Default([&](Operation *other) {
        fail("cannot interpret '" + other->getName().getStringRef().str() +
             "'");
      });
  env[op->getResult(0)] = std::move(out);
}

void Interpreter::linear(LinearOp op) {
  Values out;
  for (int64_t r = 0; r < w; ++r) {
    const Tensor &x = in(op.getInput())[r];
    const Tensor &a = in(op.getWeight())[r]; // global
    const int64_t n = a.shape[0], k = a.shape[1];
    const int64_t rows = x.numel() / k;
    std::vector<int64_t> shape = x.shape;
    shape.back() = n;
    Tensor y = Tensor::zeros(shape);
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = op.getBias() ? in(op.getBias())[r].data[j] : 0.0;
        for (int64_t l = 0; l < k; ++l)
          s += x.data[i * k + l] * a.data[j * k + l];
        y.data[i * n + j] = s;
      }
    out.tensors.push_back(y);
  }
  env[op.getResult()] = std::move(out);
}

void Interpreter::gemm(GemmOp op) {
  Values out;
  const bool tl = op.getTransposeLhs(), tr = op.getTransposeRhs();
  for (int64_t r = 0; r < w; ++r) {
    const Tensor &a = in(op.getLhs())[r];
    const Tensor &b = in(op.getRhs())[r];
    const int64_t m = tl ? a.shape[1] : a.shape[0];
    const int64_t k = tl ? a.shape[0] : a.shape[1];
    const int64_t kb = tr ? b.shape[1] : b.shape[0];
    const int64_t n = tr ? b.shape[0] : b.shape[1];
    if (k != kb) {
      fail("gemm: contraction dims differ");
      return;
    }
    Tensor c = Tensor::zeros({m, n});
    auto at = [](const Tensor &t, bool trans, int64_t i, int64_t j) {
      return trans ? t.data[j * t.shape[1] + i] : t.data[i * t.shape[1] + j];
    };
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = op.getBias() ? in(op.getBias())[r].data[j] : 0.0;
        for (int64_t l = 0; l < k; ++l)
          s += at(a, tl, i, l) * at(b, tr, l, j);
        c.data[i * n + j] = s;
      }
    if (!tl && a.blockDim == 0) {
      c.blockDim = 0;
      c.blockSizes = a.blockSizes;
    }
    out.tensors.push_back(c);
  }
  env[op.getResult()] = std::move(out);
}

/// An arith/math op on tensors, or a linalg op with parallel iterators and
/// projection maps, element by element.
void Interpreter::elementwise(Operation *op) {
  Values out;
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  for (int64_t r = 0; r < w; ++r) {
    // The result's shape: the init's (linalg) or the first tensor operand's.
    Value shapeFrom = linalgOp ? linalgOp.getDpsInits()[0] : op->getOperand(0);
    for (Value v : op->getOperands())
      if (!linalgOp && isa<RankedTensorType>(v.getType()))
        shapeFrom = v;
    Tensor res = Tensor::zeros(in(shapeFrom)[r].shape);
    for (Value v : op->getOperands())
      if (isa<RankedTensorType>(v.getType()) && in(v)[r].blockDim >= 0 &&
          in(v)[r].shape == res.shape) {
        res.blockDim = in(v)[r].blockDim;
        res.blockSizes = in(v)[r].blockSizes;
      }
    std::vector<int64_t> strides = stridesOf(res.shape);
    std::vector<int64_t> index(res.shape.size());
    for (int64_t e = 0; e < res.numel(); ++e) {
      for (size_t d = 0; d < index.size(); ++d)
        index[d] = (e / strides[d]) % res.shape[d];
      auto read = [&](Value v, AffineMap map) -> double {
        if (!isa<RankedTensorType>(v.getType())) {
          if (std::optional<double> c = floatConstant(v))
            return *c;
          fail("a scalar operand that is not a constant");
          return 0.0;
        }
        const Tensor &t = in(v)[r];
        int64_t flat = 0;
        std::vector<int64_t> ts = stridesOf(t.shape);
        for (unsigned k = 0; k < map.getNumResults(); ++k)
          flat += ts[k] *
                  index[cast<AffineDimExpr>(map.getResult(k)).getPosition()];
        return t.data[flat];
      };
      if (!linalgOp) {
        std::vector<double> args;
        AffineMap id = AffineMap::getMultiDimIdentityMap(res.shape.size(),
                                                         op->getContext());
        for (Value v : op->getOperands())
          args.push_back(read(v, id));
        res.data[e] = scalarOp(op, args);
        continue;
      }
      llvm::DenseMap<Value, double> scalars;
      for (OpOperand &operand : op->getOpOperands())
        if (linalgOp.payloadUsesValueFromOperand(&operand))
          scalars[linalgOp.getMatchingBlockArgument(&operand)] =
              read(operand.get(), linalgOp.getMatchingIndexingMap(&operand));
      auto value = [&](Value v) {
        auto it = scalars.find(v);
        if (it != scalars.end())
          return it->second;
        if (std::optional<double> c = floatConstant(v))
          return *c;
        fail("a body value that is not a constant");
        return 0.0;
      };
      Block *body = linalgOp.getBlock();
      for (Operation &inner : body->without_terminator()) {
        if (std::optional<double> c = floatConstant(inner.getResult(0))) {
          scalars[inner.getResult(0)] = *c;
          continue;
        }
        std::vector<double> args;
        for (Value v : inner.getOperands())
          args.push_back(value(v));
        scalars[inner.getResult(0)] = scalarOp(&inner, args);
      }
      res.data[e] = value(body->getTerminator()->getOperand(0));
    }
    out.tensors.push_back(std::move(res));
  }
  env[op->getResult(0)] = std::move(out);
}

} // namespace

bool runSpmd(func::FuncOp f, int64_t worldSize,
             const std::vector<std::vector<Tensor>> &args,
             std::vector<std::vector<Tensor>> &results, std::string &error,
             std::vector<uint64_t> *bytesSent) {
  error.clear();
  firstError = &error;
  Interpreter interpreter(worldSize);
  results = interpreter.run(f, args);
  firstError = nullptr;
  if (bytesSent)
    *bytesSent = interpreter.sent;
  return error.empty();
}

} // namespace shardlin::testing
