//===- CompileBench.cpp - Parse + lower time against the number of linears -===//

#include "BenchCommon.h"
#include "BenchRun.h"

#include "shardlin/Execution/ProgramBuilder.h"

#include "CompileContext.h"

#include "mlir/Parser/Parser.h"

#include <algorithm>
#include <cstdio>

namespace shardlin::bench {

std::string chainMlir(int ops) {
  // x: 8 x 64 rows; each linear maps 64 features to 64, alternating a
  // K-split weight (identity placements) and an N-split weight (permuted),
  // over 4 ranks. The chain keeps every op live.
  std::string s =
      "!x = tensor<8x64xf32>\n"
      "!b = tensor<64xf32>\n"
      "!w0 = !shardlin.sharded<tensor<64x64xf32>, #shardlin.chunk<dim = 1, "
      "placements = [0, 1, 2, 3]>>\n"
      "!w1 = !shardlin.sharded<tensor<64x64xf32>, #shardlin.chunk<dim = 0, "
      "placements = [3, 1, 0, 2]>>\n"
      "func.func @main(%x: !x, %w0: !w0, %w1: !w1, %b: !b) -> !x {\n";
  s.reserve(s.size() + size_t(ops) * 80);
  std::string prev = "%x";
  for (int i = 0; i < ops; ++i) {
    const char *w = (i % 2) ? "w1" : "w0";
    std::string y = "%y" + std::to_string(i);
    s += "  " + y + " = shardlin.linear " + prev + ", %" + w +
         ", %b : (!x, !" + w + ", !b) -> !x\n";
    prev = y;
  }
  s += "  return " + prev + " : !x\n}\n";
  return s;
}

CompileResult runCompileBench(int ops, int samples) {
  CompileResult r;
  r.ops = ops;
  r.samples = samples;
  const std::string text = chainMlir(ops);
  std::vector<double> parse, lower, translate;
  for (int i = 0; i < samples; ++i) {
    // As shardlin-run's ranks leave no core free anyway, single-threaded.
    shardlin::testkit::CompileContext context;
    double t0 = nowSeconds();
    mlir::OwningOpRef<mlir::ModuleOp> module =
        mlir::parseSourceString<mlir::ModuleOp>(text, context.get());
    double t1 = nowSeconds();
    if (!module) {
      r.error = "parsing failed: " + context.diagnostics();
      return r;
    }
    mlir::shardlin::LowerShardedLinearOptions options; // strategy = auto
    if (mlir::failed(mlir::shardlin::lowerForExecution(*module, options))) {
      r.error = "lowering failed: " + context.diagnostics();
      return r;
    }
    double t2 = nowSeconds();
    mlir::FailureOr<mlir::func::FuncOp> entry =
        mlir::shardlin::selectEntry(*module, "main");
    mlir::FailureOr<rt::Program> program =
        mlir::failed(entry)
            ? mlir::FailureOr<rt::Program>(mlir::failure())
            : mlir::shardlin::translateToProgram(*entry);
    double t3 = nowSeconds();
    if (mlir::failed(program)) {
      r.error = "translation failed: " + context.diagnostics();
      return r;
    }
    parse.push_back(t1 - t0);
    lower.push_back(t2 - t1);
    translate.push_back(t3 - t2);
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  };
  r.parseSeconds = median(parse);
  r.lowerSeconds = median(lower);
  r.translateSeconds = median(translate);
  return r;
}

//===----------------------------------------------------------------------===//
// The section
//===----------------------------------------------------------------------===//

void runCompileSection(BenchRun &run) {
  run.beginSection("compile");
  const Options &o = run.opts;
  if (!o.sections.count("compile"))
    return;
  std::printf("\n== compile time: parse + lower (strategy=auto, W=4; load "
              "%.2f) ==\n",
              run.sectionLoad["compile"]);
  std::printf("%7s %10s %10s %10s %12s %12s %12s\n", "linears", "parse ms",
              "lower ms", "translate", "parse+lower", "us/op", "all us/op");
  for (int ops : o.compileOps) {
    int samples = ops >= 10000 ? 3 : ops >= 1000 ? 3 : 5;
    CompileResult c = runCompileBench(ops, samples);
    run.compiles.push_back(c);
    if (!c.error.empty()) {
      std::printf("%7d FAILED: %s\n", ops, c.error.c_str());
      run.failed = true;
      continue;
    }
    std::printf("%7d %10.2f %10.2f %10.2f %12.2f %12.2f %12.2f\n", ops,
                1e3 * c.parseSeconds, 1e3 * c.lowerSeconds,
                1e3 * c.translateSeconds, 1e3 * c.parseLowerSeconds(),
                1e6 * c.parseLowerSeconds() / ops,
                1e6 * c.totalSeconds() / ops);
  }
}

} // namespace shardlin::bench
