//===- WriteGradSuite.cpp - The gradient suite as files for a GPU machine -===//
//
// A GPU machine has no MLIR, so the gradient suite that runs on threads,
// MPI and the JIT here (GradTesting.h, gradSuite()) travels to it as files,
// next to the blocks suite (WriteBlockSuite.cpp), and runs there through
// shardlin-exec on cuda-local and nccl (scripts/gpu-check.sh). For each
// case, DIR/grad_NAME/ gets:
//
//   backward.prog        @main_backward, compiled (the program text form)
//   saving.prog, saved   @main_forward_saving and the number of values it
//                        saves, if the backward takes saved values: the
//                        saving forward runs first, and its results after
//                        @main's one are the backward's last arguments
//   aI.{rank}.npy, aI.npy  @main's argument I: each rank's input, or the
//                        global weight or bias (the runner reads a sharded
//                        weight's chunk from the global file)
//   dy.{rank}.npy        each rank's gradient of @main's result
//   args                 one --arg value per line, relative to the case's
//                        directory: @main's arguments, then dy
//   gI/ref.{rank}.npy, gI/scale.{rank}.npy
//                        the float64 reference of each rank's gradient of
//                        argument I (its own, its chunk of a weight's, the
//                        full sum of a bias's) and its error scale
//   bound                gradErrorBound(): |g - ref| / scale must stay under
//
// and DIR/cases.txt one line "grad_NAME W DTYPE grad" per case (appended).
//
// usage: shardlin-write-grad-suite DIR [--max-world-size=N]
//
//===----------------------------------------------------------------------===//

#include "GradTesting.h"
#include "SuiteWriter.h"

#include "shardlin/runtime/base/ChunkLayout.h"
#include "shardlin/runtime/base/DType.h"
#include "shardlin/runtime/program/ProgramText.h"
#include "shardlin/runtime/tooling/Npy.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace {

namespace rt = ::shardlin::rt;
namespace tk = ::shardlin::testkit;

const char *const kTool = "shardlin-write-grad-suite";

int fail(const std::string &what) { return shardlin::suite::fail(kTool, what); }

using shardlin::suite::writeText;

/// Argument i's gradient reference on `rank`, with its shape: the rank's
/// own (Local, Plain), the rank's chunk of the summed one (Sharded), the
/// sum (Replicated).
tk::GradTensor referenceOf(const tk::GradArgument &a,
                           const tk::GradReference &ref, size_t i, int rank,
                           const std::vector<int64_t> &localShape,
                           std::vector<int64_t> &shape) {
  using Kind = tk::GradArgument::Kind;
  if (a.kind == Kind::Local || a.kind == Kind::Plain) {
    shape = localShape;
    return ref[i][size_t(rank)];
  }
  shape = a.shape;
  if (a.kind == Kind::Replicated)
    return ref[i][0];
  const rt::Range range =
      rt::ChunkLayout(a.shape[size_t(a.dim)], a.placements).ofRank(rank);
  const int64_t rows = a.shape[0], cols = a.shape.back();
  tk::GradTensor chunk;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t k = 0; k < cols; ++k) {
      const int64_t at = a.dim == 0 ? r : k;
      if (at < range.offset || at >= range.offset + range.size)
        continue;
      chunk.value.push_back(ref[i][0].value[size_t(r * cols + k)]);
      chunk.scale.push_back(ref[i][0].scale[size_t(r * cols + k)]);
    }
  shape[size_t(a.dim)] = range.size;
  return chunk;
}

/// Writes one case into dir; returns an error message or "".
std::string writeCase(const tk::GradCase &c, const std::string &dir) {
  std::filesystem::create_directories(dir);
  tk::BackwardPrograms programs;
  rt::Status compiled = tk::compileBackward(c, programs);
  if (!compiled.isOk())
    return "compiling " + c.name() + ": " + compiled.message();
  if (!writeText(dir + "/backward.prog",
                 rt::serializeProgram(programs.backward)))
    return "cannot write " + dir + "/backward.prog";
  if (programs.numSaved > 0 &&
      (!writeText(dir + "/saving.prog",
                  rt::serializeProgram(programs.saving)) ||
       !writeText(dir + "/saved", std::to_string(programs.numSaved) + "\n")))
    return "cannot write " + dir + "/saving.prog";

  const tk::GradData data = tk::makeGradData(c);
  const std::vector<tk::GradArgument> args = tk::gradArguments(c);
  const rt::DType dtype = c.dtype();
  std::string argLines;
  auto npy = [&](const std::string &path, rt::DType t,
                 const std::vector<int64_t> &shape, const void *bytes) {
    rt::Status s = rt::writeNpy(path, t, shape, bytes);
    return s.isOk() ? std::string() : s.message();
  };
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string stem = "a" + std::to_string(i);
    if (args[i].kind == tk::GradArgument::Kind::Local) {
      for (int r = 0; r < c.worldSize(); ++r) {
        const tk::RankTensor t = tk::argumentOf(c, data, i, r);
        std::string error = npy(dir + "/" + stem + "." + std::to_string(r) +
                                    ".npy",
                                dtype, t.shape, t.bytes.data());
        if (!error.empty())
          return error;
      }
      argLines += stem + ".{rank}.npy\n";
      continue;
    }
    std::string error = npy(dir + "/" + stem + ".npy", dtype, args[i].shape,
                            data.args[i].bytes.data());
    if (!error.empty())
      return error;
    argLines += stem + ".npy\n";
  }
  for (int r = 0; r < c.worldSize(); ++r) {
    std::string error =
        npy(dir + "/dy." + std::to_string(r) + ".npy", dtype,
            c.outputShapeOf(r), data.dy[size_t(r)].bytes.data());
    if (!error.empty())
      return error;
  }
  argLines += "dy.{rank}.npy\n";
  if (!writeText(dir + "/args", argLines))
    return "cannot write " + dir + "/args";

  const tk::GradReference ref = tk::gradReference(c, data);
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string g = dir + "/g" + std::to_string(i);
    std::filesystem::create_directories(g);
    for (int r = 0; r < c.worldSize(); ++r) {
      std::vector<int64_t> shape;
      const tk::GradTensor t = referenceOf(
          args[i], ref, i, r, tk::argumentOf(c, data, i, r).shape, shape);
      for (const auto &[file, values] :
           {std::pair{"ref", &t.value}, std::pair{"scale", &t.scale}}) {
        std::string error =
            npy(g + "/" + file + "." + std::to_string(r) + ".npy",
                rt::DType::F64, shape, values->data());
        if (!error.empty())
          return error;
      }
    }
  }
  char bound[64];
  std::snprintf(bound, sizeof bound, "%.17g\n", tk::gradErrorBound(c));
  if (!writeText(dir + "/bound", bound))
    return "cannot write " + dir + "/bound";
  return "";
}

} // namespace

int main(int argc, char **argv) {
  shardlin::suite::SuiteArgs args;
  const int parsed = shardlin::suite::parseSuiteArgs(
      argc, argv, kTool,
      "usage: shardlin-write-grad-suite DIR [--max-world-size=N]\n"
      "Writes the gradient suite (backward programs, inputs, float64 "
      "references) into DIR and appends its lines to DIR/cases.txt.\n",
      args);
  if (parsed >= 0)
    return parsed;
  const std::string &dir = args.dir;
  const int maxWorld = args.maxWorld;
  std::ofstream cases(dir + "/cases.txt", std::ios::app);
  if (!cases)
    return fail("cannot append to " + dir + "/cases.txt");
  int written = 0;
  for (const tk::GradCase &c : tk::gradSuite()) {
    if (c.worldSize() > maxWorld)
      continue;
    const std::string name = "grad_" + c.name();
    std::string error = writeCase(c, dir + "/" + name);
    if (!error.empty())
      return fail(error);
    cases << name << ' ' << c.worldSize() << ' ' << rt::dtypeName(c.dtype())
          << " grad\n";
    ++written;
  }
  if (!cases.flush())
    return fail("cannot write " + dir + "/cases.txt");
  std::printf("shardlin-write-grad-suite: %d gradient cases in %s\n", written,
              dir.c_str());
  return 0;
}
