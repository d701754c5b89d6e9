//===- Jit.h - Entries compiled by the native path, run by the runtime -*- C++ -*-===//
//
// `shardlin-run --jit`: the module goes through --shardlin-lower-to-llvm
// (buildLowerToLLVMPipeline) and MLIR's ExecutionEngine, once per process.
// The entry then runs on the runtime's ranks like any program: the runtime
// gets the entry's signature as a compiled rt::Program (translateSignature)
// and one executor per rank (RankCallbacks::executor), so binding the
// inputs, the agreement, the timeouts and writing the outputs are the file
// runner's (Runner.h), the same as for the plan executor.
//
// Each rank's executor makes a C ABI context over the rank's own
// communicator and device (rt::wrapContext), sets it as the thread's
// context, calls `_mlir_ciface_<entry>` with the rank's buffers as memref
// descriptors, checks the context's status (a failed status fails the
// rank with its message) and copies the returned memrefs into the rank's
// results, then frees them.
//
//   mlir::shardlin::JitOptions options;
//   auto jit = mlir::shardlin::JitEntry::compile(module, "main", options);
//   if (failed(jit)) return 1;                 // located diagnostics
//   rt::RunConfig config;                      // backend, paths, ...
//   config.executor = (*jit)->executors();
//   rt::Status s = rt::runProgramWithFiles((*jit)->program(), config);
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_EXECUTION_JIT_H
#define SHARDLIN_EXECUTION_JIT_H

#include "shardlin/Dialect/Shardlin/Transforms/Passes.h"
#include "shardlin/runtime/backends/Registry.h"
#include "shardlin/runtime/exec/Execute.h"
#include "shardlin/runtime/program/Program.h"

#include "mlir/IR/BuiltinOps.h"

#include <memory>
#include <string>

namespace mlir::shardlin {

struct JitOptions {
  /// The options of the pipeline's --lower-sharded-linear step.
  LowerShardedLinearOptions lowering;
  /// LLVM's optimization level (0 to 3) for the compiled code.
  unsigned optLevel = 2;
  /// The CPU the code is compiled for: "host" (this machine's CPU and its
  /// features), or an LLVM CPU name of the host's architecture, whose
  /// features alone the code then uses ("x86-64-v2": no AVX, F16C or
  /// AVX-512, so conversions those CPUs lack become calls of the compiler
  /// runtime, as on an older machine). checkTargetCpu says what is taken.
  std::string targetCpu = "host";
  /// MLIR's C runner utilities (libmlir_c_runner_utils: memrefCopy, which
  /// compiled code calls for a strided copy), loaded only when the code
  /// calls it: this path if set, else $SHARDLIN_MLIR_C_RUNNER_UTILS if set,
  /// else the library found when shardlin was configured.
  std::string runnerUtils;
};

/// Registers what JitEntry::compile needs in the registry of the context
/// the module is parsed in: the pipeline's dialects and interfaces
/// (registerLowerToLLVMDialects) and the translations to LLVM IR.
void registerJitDialects(DialectRegistry &registry);

/// The runner utilities JitOptions::runnerUtils resolves to.
std::string runnerUtilsPath(const JitOptions &options);

/// "" if JitOptions::targetCpu may be `cpu` ("host", or a CPU LLVM knows
/// for the host's architecture), else why not, with names that are taken.
std::string checkTargetCpu(StringRef cpu);

/// One entry of a module, compiled to native code.
class JitEntry {
public:
  /// Compiles entry `name` (chosen as selectEntry does; it must be public)
  /// of `module`, which the pipeline lowers in place. Every failure is a
  /// diagnostic in the module's context: the pipeline's, located at the op
  /// it cannot lower, and the JIT's (LLVM, a missing library) at the
  /// module.
  static FailureOr<std::unique_ptr<JitEntry>>
  compile(ModuleOp module, StringRef name, const JitOptions &options = {});
  ~JitEntry();

  /// The entry's signature as a compiled program (rt::Program::compiled),
  /// for runProgram or runProgramWithFiles.
  const ::shardlin::rt::Program &program() const { return program_; }

  /// The ranks' executors (RankCallbacks::executor, RunConfig::executor).
  /// They share the compiled code and keep it alive: a rank given up on
  /// (RunOptions::abandonLateRanks) may outlive this JitEntry.
  ::shardlin::rt::RankCallbacks::MakeExecutor executors() const;

  /// Seconds in the pipeline (to the LLVM dialect), and in LLVM
  /// (translation to LLVM IR, optimization, code generation, linking).
  double lowerSeconds() const { return lowerSeconds_; }
  double codegenSeconds() const { return codegenSeconds_; }

  struct Code;

private:
  JitEntry() = default;
  std::shared_ptr<const Code> code_;
  ::shardlin::rt::Program program_;
  double lowerSeconds_ = 0, codegenSeconds_ = 0;
};

} // namespace mlir::shardlin

#endif // SHARDLIN_EXECUTION_JIT_H
