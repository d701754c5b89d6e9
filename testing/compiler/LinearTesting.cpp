//===- LinearTesting.cpp - One linear: description, MLIR, program ---------===//

#include "LinearTesting.h"

#include "CompileContext.h"

#include "shardlin/Dialect/Shardlin/Transforms/LowerShardedLinear.h"
#include "shardlin/Execution/ProgramBuilder.h"

#include "mlir/Parser/Parser.h"

#include <cmath>
#include <cstdio>
#include <optional>

namespace shardlin::testkit {

//===----------------------------------------------------------------------===//
// ShardedSpec, LinearSpec
//===----------------------------------------------------------------------===//

bool ShardedSpec::dynamicBatch() const {
  for (int64_t d : batch)
    if (d == rt::kDynamic)
      return true;
  return false;
}

const std::vector<int64_t> &ShardedSpec::batchOf(int rank) const {
  return rankBatch.empty() ? batch : rankBatch[rank];
}

int64_t ShardedSpec::rowsOf(int rank) const {
  int64_t b = 1;
  for (int64_t d : batchOf(rank))
    b *= d;
  return b;
}

std::vector<int64_t> ShardedSpec::shapeOf(int rank, int64_t last) const {
  std::vector<int64_t> s = rank < 0 ? batch : batchOf(rank);
  s.push_back(last);
  return s;
}

std::string LinearSpec::name() const {
  // Placements are single digits up to W = 10; beyond, separate them.
  const char *sep = worldSize() > 10 ? "x" : "";
  std::string s = dim == 1 ? "row" : "col";
  s += "_W" + std::to_string(worldSize());
  s += "_p" + joinDims(placements, sep);
  if (!bounds.empty())
    s += "_at" + joinDims(bounds, "x");
  s += "_N" + std::to_string(n) + "K" + std::to_string(k);
  s += "_B" + (batch.empty() ? std::string("1d") : joinDims(batch, "x", "q"));
  for (const std::vector<int64_t> &b : rankBatch)
    s += "_" + joinDims(b, "x");
  s += bias ? "_bias_" : "_nobias_";
  s += rt::dtypeName(dtype);
  if (strategy == "gather-weight")
    s += "_gw";
  else if (strategy != "activations")
    s += "_" + strategy;
  return s;
}

//===----------------------------------------------------------------------===//
// Compiling
//===----------------------------------------------------------------------===//

std::vector<int64_t> rotatedPlacements(int w, int by) {
  std::vector<int64_t> p(w);
  for (int i = 0; i < w; ++i)
    p[i] = (i + by) % w;
  return p;
}

std::string joinDims(const std::vector<int64_t> &dims, const char *sep,
                     const char *dynamic) {
  std::string s;
  for (size_t i = 0; i < dims.size(); ++i)
    s += (i ? sep : "") +
         (dims[i] == rt::kDynamic ? std::string(dynamic)
                                  : std::to_string(dims[i]));
  return s;
}

std::string tensorType(const std::vector<int64_t> &shape, rt::DType dtype) {
  std::string s = "tensor<";
  for (int64_t d : shape)
    s += (d == rt::kDynamic ? std::string("?") : std::to_string(d)) + "x";
  return s + rt::dtypeName(dtype) + ">";
}

rt::Status dynamicArgShapes(const rt::Program &program, size_t input,
                            const std::vector<int64_t> &shape,
                            std::vector<std::vector<int64_t>> &shapes) {
  shapes.assign(program.args.size(), {});
  for (size_t i = 0; i < program.args.size(); ++i) {
    if (program.args[i].sharded)
      continue;
    for (int64_t d : program.args[i].type.shape)
      if (d == rt::kDynamic) {
        if (i != input)
          return rt::Status::invalidArgument(
              "argument " + std::to_string(i) +
              " has dynamic dims but only the input's are known");
        shapes[i] = shape;
        break;
      }
  }
  return rt::Status::ok();
}

std::string linearMlir(const LinearSpec &c) {
  const std::string x = tensorType(c.inputShape(), c.dtype);
  const std::string y = tensorType(c.outputShape(), c.dtype);
  const std::string b = tensorType({c.n}, c.dtype);
  const std::string w = "!shardlin.sharded<" + tensorType({c.n, c.k}, c.dtype) +
                        ", #shardlin.chunk<dim = " + std::to_string(c.dim) +
                        ", placements = [" + joinDims(c.placements, ", ") +
                        "]" +
                        (c.bounds.empty()
                             ? std::string()
                             : ", bounds = [" + joinDims(c.bounds, ", ") + "]") +
                        ">>";
  std::string s = "func.func @main(%x: " + x + ", %w: " + w;
  if (c.bias)
    s += ", %b: " + b;
  s += ") -> " + y + " {\n";
  s += "  %y = shardlin.linear %x, %w";
  if (c.bias)
    s += ", %b";
  s += " : (" + x + ", " + w + (c.bias ? ", " + b : std::string()) + ") -> " +
       y + "\n";
  s += "  return %y : " + y + "\n}\n";
  return s;
}

int64_t compareWithReference(const std::string &who, rt::DType dtype,
                             const std::vector<uint8_t> &output, int64_t cols,
                             const std::vector<double> &ref,
                             const std::vector<double> &scale, double bound,
                             std::string &report) {
  const int64_t count = static_cast<int64_t>(ref.size());
  const size_t elt = rt::dtypeSize(dtype);
  if (output.size() != static_cast<size_t>(count) * elt) {
    report += who + ": output has " + std::to_string(output.size()) +
              " bytes, expected " + std::to_string(count * elt) + "\n";
    return count > 0 ? count : 1;
  }
  std::vector<double> y(count);
  rt::convertToF64(dtype, output.data(), y.data(), count);
  int64_t failures = 0;
  for (int64_t e = 0; e < count; ++e) {
    const double err = std::fabs(y[e] - ref[e]);
    const double rel = scale[e] > 0 ? err / scale[e] : err;
    if (rel <= bound) // false for NaN: unwritten (poisoned) elements fail
      continue;
    if (++failures <= 5) {
      char line[320];
      std::snprintf(line, sizeof(line),
                    ": element %lld (row %lld, feature %lld) = %.17g, "
                    "reference %.17g, |err|/scale = %.3g > bound %.3g%s\n",
                    static_cast<long long>(e), static_cast<long long>(e / cols),
                    static_cast<long long>(e % cols), y[e], ref[e], rel, bound,
                    std::isnan(y[e]) ? " (NaN: never written?)" : "");
      report += who + line;
    }
  }
  if (failures > 5)
    report += who + ": ... " + std::to_string(failures) + " of " +
              std::to_string(count) + " elements failed\n";
  return failures;
}

rt::Status compileMlir(const std::string &text, const std::string &strategy,
                       rt::Program &out, CompileMessage message,
                       bool fuseBlocks) {
  CompileContext context;
  return compileWith(context, text, strategy, message, fuseBlocks,
                     "buildProgram failed",
                     [&](mlir::ModuleOp module,
                         const mlir::shardlin::LowerShardedLinearOptions
                             &lowering) -> mlir::LogicalResult {
                       mlir::FailureOr<rt::Program> program =
                           mlir::shardlin::buildProgram(module, "main",
                                                        lowering);
                       if (mlir::failed(program))
                         return mlir::failure();
                       out = std::move(*program);
                       return mlir::success();
                     });
}

rt::Status compileLinear(const LinearSpec &spec, rt::Program &out,
                         CompileMessage message) {
  return compileMlir(linearMlir(spec), spec.strategy, out, message);
}

} // namespace shardlin::testkit
