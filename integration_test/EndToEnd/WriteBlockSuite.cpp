//===- WriteBlockSuite.cpp - The blocks suite as files for a GPU machine --===//
//
// A GPU machine has no MLIR, so the blocks suite that runs on threads here
// (BlockTesting.h, blockSuite()) travels to it as files, next to the linear
// layers' suite of scripts/make-gpu-suite.sh, and runs there through
// shardlin-exec on cuda-local and nccl (scripts/gpu-check.sh). For each
// configuration, DIR/NAME/ gets:
//
//   program.prog         the compiled program (the program text form)
//   x.{rank}.npy         each rank's input
//   argN.npy             the global weights and biases, in argument order
//   args                 one --arg value per line, relative to DIR/NAME
//   ref.{rank}.npy       the float64 reference of each rank's output
//   scale.{rank}.npy     the magnitude each element's rounding errors scale
//                        with (BlockReference)
//   bound                blockErrorBound(): |y - ref| / scale must stay under it
//
// and DIR/cases.txt one line "NAME W DTYPE args" per configuration (appended,
// so the linear layers' lines stay). testing/tools/npytool.py check compares.
//
// With --bench=full|quick|tiny it writes instead the programs of
// shardlin-gpu-bench's blocks section (bench/gpu/GpuBlocks.h): no data (the
// bench makes its own), one fused block program per configuration and,
// per block shape, a W = 1 program of kBenchCheckRows rows that the bench
// runs on the host to check the GPU's output, listed in DIR/blocks.txt:
//
//   NAME KIND DTYPE W ROWS H F PROGRAM CHECK_PROGRAM CHECK_ROWS ROLES
//
// ROWS is the block's total rows (M; each rank holds M / W of them), ROLES
// the arguments' roles, comma-separated (x, colw, colb, roww, rowb). full:
// the shapes of docs/gpu-results.md (a GELU-tanh MLP with biases at M =
// 8192, H = 4096, F = 16384 and a bias-free SwiGLU at M = 2048, H = 4096,
// F = 14336, each also at the decode-like M = 16 and 128), bf16 and f16, W
// = 1, 2, 4, 8; quick: the two large shapes at W = 1 and 8, bf16; tiny:
// small shapes for the CPU self-test.
//
// usage: shardlin-write-block-suite DIR [--max-world-size=N]
//        shardlin-write-block-suite DIR --bench=full|quick|tiny
//
//===----------------------------------------------------------------------===//

#include "BlockTesting.h"
#include "SuiteWriter.h"

#include "shardlin/runtime/program/ProgramText.h"
#include "shardlin/runtime/base/DType.h"
#include "shardlin/runtime/tooling/Npy.h"
#include "shardlin/runtime/program/Program.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace {

namespace rt = ::shardlin::rt;
namespace tk = ::shardlin::testkit;

const char *const kTool = "shardlin-write-block-suite";

int fail(const std::string &what) { return shardlin::suite::fail(kTool, what); }

using shardlin::suite::writeText;

/// Writes one configuration into dir; returns an error message or "".
std::string writeCase(const tk::BlockSpec &spec, const std::string &dir) {
  std::filesystem::create_directories(dir);
  rt::Program program;
  rt::Status compiled = tk::compileBlock(spec, program);
  if (!compiled.isOk())
    return "compiling " + spec.name() + ": " + compiled.message();
  if (!writeText(dir + "/program.prog", rt::serializeProgram(program)))
    return "cannot write " + dir + "/program.prog";

  const tk::BlockData data = tk::makeBlockData(spec, spec.name().size());
  const std::vector<tk::BlockArgument> args = tk::blockArguments(spec);
  std::string argLines;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].role == tk::BlockArgument::Role::Input) {
      for (int r = 0; r < spec.worldSize(); ++r) {
        const std::string path = dir + "/x." + std::to_string(r) + ".npy";
        rt::Status s = rt::writeNpy(path, spec.dtype, spec.inputShapeOf(r),
                                    data.inputs[r].bytes.data());
        if (!s.isOk())
          return s.message();
      }
      argLines += "x.{rank}.npy\n";
      continue;
    }
    const std::string name = "arg" + std::to_string(i) + ".npy";
    rt::Status s = rt::writeNpy(dir + "/" + name, spec.dtype, args[i].shape,
                                data.args[i].bytes.data());
    if (!s.isOk())
      return s.message();
    argLines += name + "\n";
  }
  if (!writeText(dir + "/args", argLines))
    return "cannot write " + dir + "/args";

  for (int r = 0; r < spec.worldSize(); ++r) {
    const tk::BlockReference ref = tk::blockReference(spec, data, r);
    std::vector<int64_t> shape = spec.inputShapeOf(r);
    shape.back() = spec.h;
    for (const auto &[file, values] :
         {std::pair{"ref", &ref.y}, std::pair{"scale", &ref.scale}}) {
      const std::string path =
          dir + "/" + file + "." + std::to_string(r) + ".npy";
      rt::Status s = rt::writeNpy(path, rt::DType::F64, shape, values->data());
      if (!s.isOk())
        return s.message();
    }
  }
  char bound[64];
  std::snprintf(bound, sizeof bound, "%.17g\n", tk::blockErrorBound(spec));
  if (!writeText(dir + "/bound", bound))
    return "cannot write " + dir + "/bound";
  return "";
}

/// The rows of each rank's output that the bench checks on the host.
constexpr int64_t kBenchCheckRows = 4;

/// One block shape of the bench.
struct BenchShape {
  tk::BlockKind kind;
  int64_t rows, h, f;
};

/// The bench's fused block of `shape` on W ranks (M / W rows each).
tk::BlockSpec benchSpec(const BenchShape &shape, rt::DType dtype, int w,
                        int64_t rowsPerRank) {
  tk::BlockSpec spec;
  spec.kind = shape.kind;
  spec.activation = shape.kind == tk::BlockKind::Mlp
                        ? tk::Activation::GeluTanh
                        : tk::Activation::Silu;
  spec.form = tk::OpForm::Arith;
  spec.h = shape.h;
  spec.f = shape.f;
  spec.placements.clear();
  for (int r = 0; r < w; ++r)
    spec.placements.push_back(r);
  spec.dtype = dtype;
  spec.batch = {rowsPerRank};
  spec.strategy = "activations";
  spec.fuse = true;
  // As the PyTorch baselines: an MLP with biases, a SwiGLU (Llama's) without.
  spec.colBias = spec.rowBias = shape.kind == tk::BlockKind::Mlp;
  return spec;
}

std::string rolesOf(const tk::BlockSpec &spec) {
  std::string roles;
  for (const tk::BlockArgument &a : tk::blockArguments(spec)) {
    using Role = tk::BlockArgument::Role;
    const char *name = a.role == Role::Input       ? "x"
                       : a.role == Role::ColWeight ? "colw"
                       : a.role == Role::ColBias   ? "colb"
                       : a.role == Role::RowWeight ? "roww"
                                                   : "rowb";
    roles += (roles.empty() ? "" : ",") + std::string(name);
  }
  return roles;
}

/// Compiles `spec` into DIR/FILE; returns an error message or "".
std::string writeProgram(const tk::BlockSpec &spec, const std::string &dir,
                         const std::string &file) {
  rt::Program program;
  rt::Status compiled = tk::compileBlock(spec, program);
  if (!compiled.isOk())
    return "compiling " + spec.name() + ": " + compiled.message();
  if (!writeText(dir + "/" + file, rt::serializeProgram(program)))
    return "cannot write " + dir + "/" + file;
  return "";
}

int writeBench(const std::string &dir, const std::string &size) {
  using K = tk::BlockKind;
  std::vector<BenchShape> shapes;
  std::vector<rt::DType> dtypes = {rt::DType::BF16, rt::DType::F16};
  std::vector<int> worlds = {1, 2, 4, 8};
  if (size == "full") {
    for (int64_t m : {int64_t(8192), int64_t(16), int64_t(128)})
      shapes.push_back({K::Mlp, m, 4096, 16384});
    for (int64_t m : {int64_t(2048), int64_t(16), int64_t(128)})
      shapes.push_back({K::SwiGlu, m, 4096, 14336});
  } else if (size == "quick") {
    shapes = {{K::Mlp, 8192, 4096, 16384}, {K::SwiGlu, 2048, 4096, 14336}};
    dtypes = {rt::DType::BF16};
    worlds = {1, 8};
  } else if (size == "tiny") {
    shapes = {{K::Mlp, 16, 32, 72}, {K::SwiGlu, 8, 24, 40}};
    worlds = {1, 2, 4};
  } else {
    return fail("--bench takes full, quick or tiny, not '" + size + "'");
  }
  std::ofstream list(dir + "/blocks.txt");
  if (!list)
    return fail("cannot write " + dir + "/blocks.txt");
  int written = 0;
  for (const BenchShape &shape : shapes)
    for (rt::DType dtype : dtypes) {
      const std::string kind = shape.kind == K::Mlp ? "mlp" : "swiglu";
      const std::string dims = std::to_string(shape.h) + "x" +
                               std::to_string(shape.f);
      const std::string check =
          "check_" + kind + "_" + rt::dtypeName(dtype) + "_" + dims + ".prog";
      std::string error = writeProgram(
          benchSpec(shape, dtype, 1, kBenchCheckRows), dir, check);
      if (!error.empty())
        return fail(error);
      for (int w : worlds) {
        if (shape.rows % w != 0)
          continue;
        const tk::BlockSpec spec = benchSpec(shape, dtype, w, shape.rows / w);
        const std::string name = kind + "_" + rt::dtypeName(dtype) + "_m" +
                                 std::to_string(shape.rows) + "_" + dims +
                                 "_w" + std::to_string(w);
        error = writeProgram(spec, dir, name + ".prog");
        if (!error.empty())
          return fail(error);
        list << name << ' ' << kind << ' ' << rt::dtypeName(dtype) << ' '
             << w << ' ' << shape.rows << ' ' << shape.h << ' ' << shape.f
             << ' ' << name << ".prog " << check << ' ' << kBenchCheckRows
             << ' ' << rolesOf(spec) << '\n';
        ++written;
      }
    }
  if (!list.flush())
    return fail("cannot write " + dir + "/blocks.txt");
  std::printf("shardlin-write-block-suite: %d bench block programs in %s\n",
              written, dir.c_str());
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  std::string bench;
  shardlin::suite::SuiteArgs args;
  const int parsed = shardlin::suite::parseSuiteArgs(
      argc, argv, kTool,
      "usage: shardlin-write-block-suite DIR [--max-world-size=N]\n"
      "       shardlin-write-block-suite DIR --bench=full|quick|tiny\n"
      "Writes the blocks suite (programs, inputs, float64 references) into "
      "DIR and appends its lines to DIR/cases.txt; with --bench, the "
      "programs of shardlin-gpu-bench's blocks section and "
      "DIR/blocks.txt.\n",
      args, [&](const std::string &a) {
        if (a.rfind("--bench=", 0) != 0)
          return false;
        bench = a.substr(8);
        return true;
      });
  if (parsed >= 0)
    return parsed;
  const std::string &dir = args.dir;
  const int maxWorld = args.maxWorld;
  if (!bench.empty())
    return writeBench(dir, bench);

  std::ofstream cases(dir + "/cases.txt", std::ios::app);
  if (!cases)
    return fail("cannot append to " + dir + "/cases.txt");
  int written = 0;
  for (const tk::BlockSpec &spec : tk::blockSuite()) {
    if (spec.worldSize() > maxWorld || spec.dynamicBatch())
      continue;
    const std::string name = "block_" + spec.name();
    std::string error = writeCase(spec, dir + "/" + name);
    if (!error.empty())
      return fail(error);
    cases << name << ' ' << spec.worldSize() << ' '
          << rt::dtypeName(spec.dtype) << " args\n";
    ++written;
  }
  if (!cases.flush())
    return fail("cannot write " + dir + "/cases.txt");
  std::printf("shardlin-write-block-suite: %d block configurations in %s\n",
              written, dir.c_str());
  return 0;
}
