//===- main.cpp - Running a compiled program with the runtime alone -------===//
//
// A deployment without LLVM or MLIR: a program compiled on another machine
// (`shardlin-run linear.mlir --emit-program=linear.prog`) is read and run
// on W ranks as threads of this process with the runtime's C++ API
// (Shardlin::Runtime), from buffers in memory. Each rank's result is checked
// against a float64 reference of the whole layer.
//
//   runtime-only-example [PROGRAM]     (default: linear.prog next to this
//                                       file's source)
//
// linear.prog is examples/quickstart/linear.mlir: y = x A^T + b with A
// (11 x 19) split along K over 4 ranks, placements [2, 3, 0, 1].
//
//===----------------------------------------------------------------------===//

#include "shardlin/runtime/backends/Registry.h"
#include "shardlin/runtime/base/ChunkLayout.h"
#include "shardlin/runtime/exec/Execute.h"
#include "shardlin/runtime/program/ProgramText.h"
#include "shardlin/runtime/tooling/Runner.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <vector>

namespace rt = shardlin::rt;

namespace {

/// Uniform values in [-1, 1), the same on every platform.
struct Random {
  uint64_t state;
  float next() {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<float>((state >> 40) * 0x1.0p-23) - 1.0f;
  }
};

int fail(const std::string &message) {
  std::fprintf(stderr, "runtime-only-example: %s\n", message.c_str());
  return 1;
}

} // namespace

int main(int argc, char **argv) {
  const std::string path =
      argc > 1 ? argv[1] : SHARDLIN_EXAMPLE_DIR "/linear.prog";
  std::ifstream in(path);
  if (!in)
    return fail("cannot open '" + path + "'");
  std::stringstream text;
  text << in.rdbuf();
  rt::Program program;
  if (rt::Status s = rt::parseProgram(text.str(), program); !s)
    return fail(path + ": " + s.message());

  // The layer's shapes, from its signature: x (B x K) per rank, the
  // sharded weight A (N x K, global shape) and the bias (N).
  if (program.args.size() != 3 || !program.args[1].sharded)
    return fail("expected a linear layer (x, sharded weight, bias)");
  const int w = static_cast<int>(program.worldSize);
  const std::vector<int64_t> &xShape = program.values[0].shape;
  const std::vector<int64_t> &aShape = program.args[1].globalShape;
  const int64_t rows = xShape[0], k = xShape[1], n = aShape[0];

  Random random{42};
  std::vector<std::vector<float>> x(w, std::vector<float>(rows * k));
  for (std::vector<float> &xr : x)
    for (float &v : xr)
      v = random.next();
  std::vector<float> a(n * k), b(n);
  for (float &v : a)
    v = random.next();
  for (float &v : b)
    v = random.next();
  // NaN-filled results: an element the run does not write shows.
  std::vector<std::vector<float>> y(w, std::vector<float>(rows * n, NAN));
  std::vector<std::vector<uint8_t>> chunks(w);

  rt::RunOptions options; // the threads backend, W from the program
  rt::RankCallbacks callbacks;
  callbacks.bind = [&](const rt::Plan &plan, rt::RankDevice &,
                       rt::RankBuffers &buffers) {
    const int r = plan.rank();
    // Each rank binds its own chunk of the sharded weight.
    rt::extractLocalChunk(a.data(), aShape, rt::DType::F32,
                          program.args[1].sharding, r, chunks[r]);
    buffers.args = {x[r].data(), chunks[r].data(), b.data()};
    buffers.results = {y[r].data()};
    return rt::Status::ok();
  };
  std::vector<rt::RankResult> ranks;
  if (rt::Status s = rt::runProgram(program, options, callbacks, &ranks); !s)
    return fail(s.message());

  // y_r = x_r A^T + b in float64; the bound covers the f32 GEMM's K
  // additions and the reduction's rounding at these sizes.
  double worst = 0;
  for (int r = 0; r < w; ++r)
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double ref = b[j];
        for (int64_t l = 0; l < k; ++l)
          ref += double(x[r][i * k + l]) * a[j * k + l];
        const double err =
            std::fabs(y[r][i * n + j] - ref) / std::max(1.0, std::fabs(ref));
        if (!(err <= 1e-5))
          return fail("rank " + std::to_string(r) + ": y[" +
                      std::to_string(i) + "][" + std::to_string(j) + "] = " +
                      std::to_string(y[r][i * n + j]) + ", expected " +
                      std::to_string(ref));
        worst = std::max(worst, err);
      }
  for (const rt::RankResult &rank : ranks)
    std::printf("%s\n", rt::describeRank(rank).c_str());
  std::printf("%d ranks match the float64 reference (max relative error "
              "%.2e, bound 1e-05)\n",
              w, worst);
  return 0;
}
