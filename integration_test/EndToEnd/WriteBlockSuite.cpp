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
// so the linear layers' lines stay). scripts/npytool.py check compares.
//
// usage: shardlin-write-block-suite DIR [--max-world-size N]
//
//===----------------------------------------------------------------------===//

#include "BlockTesting.h"

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

int fail(const std::string &what) {
  std::fprintf(stderr, "shardlin-write-block-suite: error: %s\n", what.c_str());
  return 1;
}

bool writeText(const std::string &path, const std::string &text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  return static_cast<bool>(out.flush());
}

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

} // namespace

int main(int argc, char **argv) {
  std::string dir;
  int maxWorld = 8;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--max-world-size=", 0) == 0) {
      char *end = nullptr;
      long v = std::strtol(a.c_str() + 17, &end, 10);
      if (*end || v < 1)
        return fail("--max-world-size needs a positive integer, got '" +
                    a.substr(17) + "'");
      maxWorld = static_cast<int>(v);
    } else if (a == "-h" || a == "--help") {
      std::printf("usage: shardlin-write-block-suite DIR [--max-world-size=N]\n"
                  "Writes the blocks suite (programs, inputs, float64 "
                  "references) into DIR and appends its lines to "
                  "DIR/cases.txt.\n");
      return 0;
    } else if (!a.empty() && a[0] == '-') {
      return fail("unknown option '" + a + "'");
    } else if (dir.empty()) {
      dir = a;
    } else {
      return fail("one directory only ('" + dir + "' and '" + a + "')");
    }
  }
  if (dir.empty())
    return fail("say where to write: shardlin-write-block-suite DIR");
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    return fail("cannot create " + dir + ": " + ec.message());

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
