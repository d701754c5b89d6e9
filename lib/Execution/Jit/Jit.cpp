//===- Jit.cpp - Entries compiled by the native path, run by the runtime --===//
//
// The compiled entry is called through its C interface
// (`_mlir_ciface_<name>`, llvm.emit_c_interface) with the packed-argument
// wrapper ExecutionEngine generates for it: one pointer per argument of the
// interface, each argument a pointer to a memref descriptor. A descriptor
// of rank R is {allocated, aligned, offset, sizes[R], strides[R]}: 3 + 2R
// words of 8 bytes, so a struct of them has no padding.
//
// The pipeline runs with LowerToLLVMOptions::resultsAsOutParams: an entry
// whose results all have static shapes takes the rank's result buffers as
// descriptors after its arguments and writes them directly (the op that
// computes a result writes the caller's buffer, as a plan does). An entry
// with a dynamic result returns its results instead: the interface then
// takes, first, a pointer to the results' descriptors (one, or a struct of
// them), filled with new allocations the executor frees or hands over.
//
//===----------------------------------------------------------------------===//

#include "shardlin/Execution/Jit.h"

#include "shardlin/Dialect/Shardlin/Pipelines/Pipelines.h"
#include "shardlin/Execution/ProgramBuilder.h"
#include "shardlin/runtime/capi/CApi.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/Object/ObjectFile.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include <dlfcn.h>

using namespace mlir;
using namespace mlir::shardlin;
namespace rt = ::shardlin::rt;

#ifndef SHARDLIN_MLIR_C_RUNNER_UTILS
#define SHARDLIN_MLIR_C_RUNNER_UTILS "libmlir_c_runner_utils.so"
#endif

/// What every rank's executor shares: the engine that owns the code, and
/// the entry's packed wrapper.
struct JitEntry::Code {
  std::unique_ptr<ExecutionEngine> engine;
  void (*entry)(void **) = nullptr;
  /// Whether the entry writes its results into out-params (all static).
  bool outParams = false;
};

void mlir::shardlin::registerJitDialects(DialectRegistry &registry) {
  registerLowerToLLVMDialects(registry);
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
}

std::string mlir::shardlin::runnerUtilsPath(const JitOptions &options) {
  if (!options.runnerUtils.empty())
    return options.runnerUtils;
  if (const char *env = std::getenv("SHARDLIN_MLIR_C_RUNNER_UTILS"))
    if (*env)
      return env;
  return SHARDLIN_MLIR_C_RUNNER_UTILS;
}

namespace {

/// LLVM's code generation for this machine's architecture, once per
/// process.
void initializeNativeTarget() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
}

} // namespace

std::string mlir::shardlin::checkTargetCpu(StringRef cpu) {
  if (cpu == "host")
    return "";
  initializeNativeTarget();
  const llvm::Triple triple(llvm::sys::getProcessTriple());
  std::string error;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return "LLVM cannot generate code for this machine (" + triple.str() +
           "): " + error;
  // Checked here: LLVM itself only warns on stderr about a CPU it does not
  // know, and compiles for a generic one.
  std::unique_ptr<llvm::MCSubtargetInfo> subtarget(
      target->createMCSubtargetInfo(triple, "", ""));
  if (subtarget && subtarget->isCPUStringValid(cpu))
    return "";
  std::string known;
  for (StringRef name : {"x86-64", "x86-64-v2", "x86-64-v3", "x86-64-v4",
                         "haswell", "skylake-avx512", "znver4", "generic",
                         "neoverse-n1", "neoverse-v2"})
    if (subtarget && subtarget->isCPUStringValid(name))
      known += (known.empty() ? "" : ", ") + name.str();
  return "the target CPU '" + cpu.str() + "' is not one LLVM knows for " +
         triple.str() + ": give 'host' (this machine's CPU and features)" +
         (known.empty() ? std::string() : " or a CPU name such as " + known) +
         " ('llc-22 -mcpu=help' lists them)";
}

namespace {

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                       start)
      .count();
}

/// The name of the code: the module as parsed, the entry and every option
/// that changes what is compiled. Every process of a run compiles the same
/// name, which the ranks' agreement compares.
std::string codeName(ModuleOp module, StringRef entry,
                     const JitOptions &options) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os, OpPrintingFlags().enableDebugInfo(false));
  os << "\nentry " << entry << "\nopt " << options.optLevel << "\ncpu "
     << options.targetCpu << "\n";
  createLowerShardedLinear(options.lowering)->printAsTextualPipeline(os);
  const uint64_t h = llvm::xxh3_64bits(
      ArrayRef<uint8_t>(reinterpret_cast<const uint8_t *>(text.data()),
                        text.size()));
  char name[40];
  std::snprintf(name, sizeof name, "jit-%016llx",
                static_cast<unsigned long long>(h));
  return name;
}

std::string errorText(llvm::Error error) {
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::logAllUnhandledErrors(std::move(error), os);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
    text.pop_back();
  return text;
}

/// The memrefCopy of MLIR's C runner utilities, for code that calls it.
FailureOr<void *> loadMemrefCopy(ModuleOp module, const std::string &path) {
  // Loaded once per process and kept: the code may run until exit.
  static std::mutex mutex;
  static void *handle = nullptr;
  std::lock_guard<std::mutex> lock(mutex);
  if (!handle)
    handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *why = ::dlerror();
    return module.emitError()
           << "the compiled code copies a strided memref with memrefCopy, "
              "from MLIR's C runner utilities, which cannot be loaded: "
           << (why ? why : path.c_str())
           << " (install libmlir-22, or name the library with "
              "SHARDLIN_MLIR_C_RUNNER_UTILS)";
  }
  void *fn = ::dlsym(handle, "memrefCopy");
  if (!fn)
    return module.emitError() << "'" << path
                              << "' has no memrefCopy: it is not MLIR's C "
                                 "runner utilities";
  return fn;
}

/// The runtime's C ABI functions that the code calls (shardlin_*), taken
/// from the object file that holds this runtime, for an engine whose
/// process-wide lookup (RTLD_DEFAULT) does not see them: a library loaded
/// with RTLD_LOCAL, such as the Python package's extension, holds the
/// runtime without putting its symbols in the global scope, and making them
/// global would make its LLVM and MLIR symbols global too (docs/python.md,
/// "Limits"). (dlsym(RTLD_DEFAULT) called from here would find them, as it
/// searches the caller's own scope too, but the engine's lookup of the
/// process's symbols searches the global scope only.) Empty where the
/// runtime is in the executable (the tools, whose symbols the engine finds).
llvm::orc::SymbolMap runtimeSymbols(ModuleOp module,
                                    llvm::orc::MangleAndInterner &interner) {
  llvm::orc::SymbolMap symbols;
  Dl_info info{};
  if (!::dladdr(reinterpret_cast<void *>(&shardlin_set_thread_context),
                &info) ||
      !info.dli_fname)
    return symbols;
  void *self = ::dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
  if (!self)
    return symbols;
  for (LLVM::LLVMFuncOp fn : module.getOps<LLVM::LLVMFuncOp>()) {
    const std::string name = fn.getName().str();
    if (!fn.isExternal() || !StringRef(name).starts_with("shardlin_"))
      continue;
    if (void *address = ::dlsym(self, name.c_str()))
      symbols[interner(name)] = {llvm::orc::ExecutorAddr::fromPtr(address),
                                 llvm::JITSymbolFlags::Exported};
  }
  ::dlclose(self); // (RTLD_NOLOAD: only the reference just taken)
  return symbols;
}

/// The machine the code is compiled for (JitOptions::targetCpu, which
/// checkTargetCpu took): the host's CPU and features, or a named CPU with
/// that CPU's features alone.
llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
createTargetMachine(StringRef cpu, llvm::CodeGenOptLevel level) {
  llvm::orc::JITTargetMachineBuilder builder{
      llvm::Triple(llvm::sys::getProcessTriple())};
  if (cpu == "host") {
    llvm::Expected<llvm::orc::JITTargetMachineBuilder> host =
        llvm::orc::JITTargetMachineBuilder::detectHost();
    if (!host)
      return host.takeError();
    builder = std::move(*host);
  } else {
    builder.setCPU(cpu.str());
  }
  builder.setCodeGenOptLevel(level);
  return builder.createTargetMachine();
}

/// The symbols the code of `module` (the LLVM dialect) calls that nothing
/// in this process defines and the engine was not given (`given`): the
/// undefined symbols of its object file, compiled as the engine compiles
/// it (`optimize`, then code generation for `cpu`), which include the
/// compiler runtime's helpers that code generation adds for the target
/// CPU. For the message of a failed link, whose error names none of them
/// (ORC reports them to stderr only).
std::vector<std::string>
unresolvedSymbols(ModuleOp module, StringRef cpu, llvm::CodeGenOptLevel level,
                  llvm::function_ref<llvm::Error(llvm::Module *)> optimize,
                  ArrayRef<StringRef> given) {
  std::vector<std::string> out;
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, context);
  llvm::Expected<std::unique_ptr<llvm::TargetMachine>> machine =
      createTargetMachine(cpu, level);
  if (!llvmModule || !machine) {
    if (!machine)
      llvm::consumeError(machine.takeError());
    return out;
  }
  llvmModule->setDataLayout((*machine)->createDataLayout());
  llvmModule->setTargetTriple((*machine)->getTargetTriple());
  if (llvm::Error error = optimize(llvmModule.get())) {
    llvm::consumeError(std::move(error));
    return out;
  }
  llvm::SmallVector<char, 0> object;
  llvm::raw_svector_ostream os(object);
  llvm::legacy::PassManager codegen;
  if ((*machine)->addPassesToEmitFile(codegen, os, nullptr,
                                      llvm::CodeGenFileType::ObjectFile))
    return out;
  codegen.run(*llvmModule);
  llvm::Expected<std::unique_ptr<llvm::object::ObjectFile>> file =
      llvm::object::ObjectFile::createObjectFile(llvm::MemoryBufferRef(
          StringRef(object.data(), object.size()), "jit"));
  if (!file) {
    llvm::consumeError(file.takeError());
    return out;
  }
  for (const llvm::object::SymbolRef &symbol : (*file)->symbols()) {
    llvm::Expected<uint32_t> flags = symbol.getFlags();
    llvm::Expected<StringRef> name = symbol.getName();
    if (!flags || !name) {
      if (!flags)
        llvm::consumeError(flags.takeError());
      if (!name)
        llvm::consumeError(name.takeError());
      continue;
    }
    if (!(*flags & llvm::object::SymbolRef::SF_Undefined) || name->empty() ||
        llvm::is_contained(given, *name) ||
        ::dlsym(RTLD_DEFAULT, name->str().c_str()) ||
        llvm::is_contained(out, *name))
      continue;
    out.push_back(name->str());
  }
  return out;
}

/// Why the code of @entry cannot link: ORC's message `text`, or the
/// symbols nothing in the process defines (`missing`, unresolvedSymbols)
/// and, for each kind of them, what to do.
std::string linkFailure(StringRef entry, StringRef text,
                        const std::vector<std::string> &missing,
                        StringRef cpu) {
  if (missing.empty())
    return "cannot link the compiled code of @" + entry.str() + ": " +
           text.str();
  std::vector<std::string> runtime, helpers, others;
  for (const std::string &name : missing)
    (StringRef(name).starts_with("shardlin_") ? runtime
     : StringRef(name).starts_with("__")      ? helpers
                                              : others)
        .push_back(name);
  // "a is a function" / "a, b are functions"; "it" / "them".
  auto are = [](const std::vector<std::string> &list, StringRef one,
                StringRef many) {
    return llvm::join(list, ", ") + " " + (list.size() == 1 ? one : many).str();
  };
  auto it = [](const std::vector<std::string> &list) {
    return list.size() == 1 ? "it" : "them";
  };
  std::string message = "cannot link the compiled code of @" + entry.str() +
                        ": nothing in this process defines " +
                        llvm::join(missing, ", ");
  if (!helpers.empty())
    message += "; " + are(helpers, "is a function", "are functions") +
               " of the compiler runtime (libgcc, compiler-rt), which LLVM "
               "calls for operations the target CPU ('" + cpu.str() +
               "') has no instructions for, and this platform's libgcc does "
               "not define " + it(helpers) +
               ": compile for another CPU (JitOptions::targetCpu, "
               "shardlin-run --jit-cpu=NAME), or load a library that defines " +
               it(helpers) + " before compiling";
  if (!runtime.empty())
    message += "; " + are(runtime, "is", "are") +
               " named as the runtime's C ABI, which the program itself "
               "provides: it must link ShardlinRuntimeC (Shardlin::RuntimeC), "
               "which exports the shardlin_* functions (if it does, the "
               "module calls a function this runtime does not have)";
  if (!others.empty())
    message += "; " + are(others, "is", "are") +
               " declared by the module and defined nowhere: define " +
               it(others) + " in the module, or load a library that defines " +
               it(others) + " before compiling";
  return message;
}

//===----------------------------------------------------------------------===//
// One rank
//===----------------------------------------------------------------------===//

/// A row-major memref descriptor of a fixed shape, as 3 + 2R words; its
/// data pointer is set for each call.
class Descriptor {
public:
  explicit Descriptor(const std::vector<int64_t> &shape)
      : words_(3 + 2 * shape.size(), 0) {
    int64_t stride = 1;
    for (size_t d = shape.size(); d-- > 0;) {
      words_[3 + d] = shape[d];
      words_[3 + shape.size() + d] = stride;
      stride *= shape[d];
    }
  }
  void setData(const void *data) {
    void *p = const_cast<void *>(data);
    std::memcpy(&words_[0], &p, sizeof p);
    std::memcpy(&words_[1], &p, sizeof p);
  }
  int64_t *data() { return words_.data(); }

private:
  std::vector<int64_t> words_;
};

/// A result the code returned: a view into its own allocation.
struct ReturnedView {
  void *allocated = nullptr;
  char *base = nullptr; // aligned + offset
  std::vector<int64_t> sizes, strides;
};

/// Copies a strided view of `elt`-byte elements into a row-major `out`.
void copyToRowMajor(const ReturnedView &v, size_t elt, char *out) {
  const size_t rank = v.sizes.size();
  int64_t count = 1;
  for (int64_t s : v.sizes)
    count *= s;
  if (count == 0)
    return;
  bool rowMajor = true;
  int64_t expect = 1;
  for (size_t d = rank; d-- > 0;) {
    if (v.sizes[d] != 1 && v.strides[d] != expect)
      rowMajor = false;
    expect *= v.sizes[d];
  }
  if (rowMajor) {
    std::memcpy(out, v.base, static_cast<size_t>(count) * elt);
    return;
  }
  std::vector<int64_t> index(rank, 0);
  for (int64_t n = 0; n < count; ++n) {
    int64_t offset = 0;
    for (size_t d = 0; d < rank; ++d)
      offset += index[d] * v.strides[d];
    std::memcpy(out + static_cast<size_t>(n) * elt,
                v.base + static_cast<size_t>(offset) * elt, elt);
    for (size_t d = rank; d-- > 0;) {
      if (++index[d] < v.sizes[d])
        break;
      index[d] = 0;
    }
  }
}

class JitRank final : public rt::RankExecutor {
public:
  /// The descriptors and the entry's argument list are made once: a run
  /// only sets the data pointers (with out-params it allocates nothing).
  JitRank(std::shared_ptr<const JitEntry::Code> code, const rt::Plan &plan,
          rt::ContextPtr context)
      : code_(std::move(code)), context_(std::move(context)) {
    for (size_t i = 0; i < plan.numResults(); ++i) {
      resultShapes_.push_back(plan.resultShape(i));
      resultTypes_.push_back(plan.resultType(i));
    }
    descriptors_.reserve(plan.numArgs() + plan.numResults());
    for (size_t i = 0; i < plan.numArgs(); ++i)
      descriptors_.emplace_back(plan.argShape(i));
    // Out-params after the arguments; else the returned results' words
    // (one descriptor, or a struct of them) first.
    if (code_->outParams) {
      for (const std::vector<int64_t> &shape : resultShapes_)
        descriptors_.emplace_back(shape);
    } else if (!resultShapes_.empty()) {
      size_t words = 0;
      for (const std::vector<int64_t> &shape : resultShapes_)
        words += 3 + 2 * shape.size();
      returned_.assign(words, 0);
      pointers_.push_back(returned_.data());
    }
    for (Descriptor &d : descriptors_)
      pointers_.push_back(d.data());
    for (void *&p : pointers_)
      packed_.push_back(&p);
  }
  ~JitRank() override { releaseKept(); }

  rt::Status run(rt::RankBuffers &buffers) override {
    releaseKept();
    const size_t numArgs = descriptors_.size() -
                           (code_->outParams ? resultShapes_.size() : 0);
    for (size_t i = 0; i < numArgs; ++i)
      descriptors_[i].setData(buffers.args[i]);
    if (code_->outParams) {
      for (size_t i = 0; i < resultShapes_.size(); ++i)
        descriptors_[numArgs + i].setData(buffers.results[i]);
      return call();
    }
    std::fill(returned_.begin(), returned_.end(), 0);
    rt::Status status = call();

    // The returned views, and what to free: every allocation once (a value
    // returned twice is one allocation).
    const size_t numResults = resultShapes_.size();
    const std::vector<int64_t> &results = returned_;
    std::vector<ReturnedView> views(numResults);
    std::vector<void *> owned;
    size_t w = 0;
    for (size_t i = 0; i < numResults; ++i) {
      const size_t rank = resultShapes_[i].size();
      ReturnedView &v = views[i];
      void *aligned = nullptr;
      std::memcpy(&v.allocated, &results[w], sizeof(void *));
      std::memcpy(&aligned, &results[w + 1], sizeof(void *));
      v.base = static_cast<char *>(aligned) +
               results[w + 2] * static_cast<int64_t>(
                                    rt::dtypeSize(resultTypes_[i]));
      v.sizes.assign(results.begin() + w + 3, results.begin() + w + 3 + rank);
      v.strides.assign(results.begin() + w + 3 + rank,
                       results.begin() + w + 3 + 2 * rank);
      w += 3 + 2 * rank;
      if (v.allocated && !llvm::is_contained(owned, v.allocated))
        owned.push_back(v.allocated);
    }
    if (status)
      status = deliver(views, owned, buffers);
    for (void *p : owned)
      std::free(p);
    return status;
  }

private:
  /// Calls the entry on the rank's context, then reads the context's
  /// status.
  rt::Status call() {
    shardlin_context *previous = shardlin_thread_context();
    shardlin_set_thread_context(context_.get());
    code_->entry(packed_.data());
    shardlin_set_thread_context(previous);
    return rt::contextStatus(context_.get());
  }

  /// Copies each result into its buffer, or, for a shape with a `?`, hands
  /// the code's own allocation over (moving it from `owned` to kept_).
  rt::Status deliver(const std::vector<ReturnedView> &views,
                     std::vector<void *> &owned, rt::RankBuffers &buffers) {
    for (size_t i = 0; i < views.size(); ++i) {
      const ReturnedView &v = views[i];
      const std::vector<int64_t> &want = resultShapes_[i];
      for (size_t d = 0; d < want.size(); ++d)
        if (v.sizes[d] < 0 || (want[d] != rt::kDynamic && v.sizes[d] != want[d]))
          return rt::Status::internal(
              "result " + std::to_string(i) + " of the compiled code has the "
              "shape " + rt::formatShape(v.sizes) + ", not the signature's " +
              rt::formatShape(want));
      const size_t elt = rt::dtypeSize(resultTypes_[i]);
      if (!rt::hasDynamicDim(want)) {
        copyToRowMajor(v, elt, static_cast<char *>(buffers.results[i]));
        continue;
      }
      // Row-major already (identity layouts at the boundary) or copied.
      ReturnedView dense = v;
      if (!isRowMajor(v)) {
        int64_t count = 1;
        for (int64_t s : v.sizes)
          count *= s;
        char *copy =
            static_cast<char *>(std::malloc(std::max<size_t>(1, count * elt)));
        if (!copy)
          return rt::Status::internal("out of host memory for result " +
                                      std::to_string(i));
        copyToRowMajor(v, elt, copy);
        kept_.push_back(copy);
        dense.base = copy;
      } else if (v.allocated) {
        owned.erase(std::remove(owned.begin(), owned.end(), v.allocated),
                    owned.end());
        if (!llvm::is_contained(kept_, v.allocated))
          kept_.push_back(v.allocated);
      }
      buffers.resultShapes.resize(views.size());
      buffers.results[i] = dense.base;
      buffers.resultShapes[i] = v.sizes;
    }
    return rt::Status::ok();
  }

  static bool isRowMajor(const ReturnedView &v) {
    int64_t expect = 1;
    for (size_t d = v.sizes.size(); d-- > 0;) {
      if (v.sizes[d] != 1 && v.strides[d] != expect)
        return false;
      expect *= v.sizes[d];
    }
    return true;
  }

  void releaseKept() {
    for (void *p : kept_)
      std::free(p);
    kept_.clear();
  }

  std::shared_ptr<const JitEntry::Code> code_;
  rt::ContextPtr context_;
  std::vector<std::vector<int64_t>> resultShapes_;
  std::vector<rt::DType> resultTypes_;
  /// The arguments' descriptors, then (out-params) the results'.
  std::vector<Descriptor> descriptors_;
  /// The returned results' descriptors, which the call fills.
  std::vector<int64_t> returned_;
  /// What each of the entry's parameters points at, and the list of their
  /// addresses that ExecutionEngine's packed wrapper takes.
  std::vector<void *> pointers_;
  std::vector<void *> packed_;
  /// Results handed over by the last run (RankBuffers::resultShapes).
  std::vector<void *> kept_;
};

} // namespace

//===----------------------------------------------------------------------===//
// Compiling
//===----------------------------------------------------------------------===//

JitEntry::~JitEntry() = default;

FailureOr<std::unique_ptr<JitEntry>>
JitEntry::compile(ModuleOp module, StringRef name, const JitOptions &options) {
  FailureOr<func::FuncOp> func = selectEntry(module, name);
  if (failed(func))
    return failure();
  if (!func->isPublic())
    return func->emitError()
           << "the native path compiles public functions only (each becomes "
              "an entry with a C interface); make @"
           << func->getSymName() << " public to run it with --jit";
  if (options.optLevel > 3)
    return module.emitError() << "the optimization level must be 0 to 3, got "
                              << options.optLevel;
  if (std::string why = checkTargetCpu(options.targetCpu); !why.empty())
    return module.emitError() << why;
  const std::string entryName = func->getSymName().str();
  std::unique_ptr<JitEntry> jit(new JitEntry());
  FailureOr<rt::Program> signature =
      translateSignature(*func, codeName(module, entryName, options));
  if (failed(signature))
    return failure();
  jit->program_ = std::move(*signature);

  // To the LLVM dialect, results as out-params where they are static.
  bool outParams = true;
  for (int v : jit->program_.results)
    outParams &= !rt::hasDynamicDim(jit->program_.values[v].shape);
  auto start = std::chrono::steady_clock::now();
  PassManager pm(module.getContext());
  LowerToLLVMOptions lowering;
  lowering.lowering = options.lowering;
  lowering.resultsAsOutParams = true;
  buildLowerToLLVMPipeline(pm, lowering);
  if (failed(pm.run(module)))
    return failure();
  jit->lowerSeconds_ = secondsSince(start);

  // To native code.
  start = std::chrono::steady_clock::now();
  initializeNativeTarget();
  void *memrefCopy = nullptr;
  if (module.lookupSymbol<LLVM::LLVMFuncOp>("memrefCopy")) {
    FailureOr<void *> fn = loadMemrefCopy(module, runnerUtilsPath(options));
    if (failed(fn))
      return failure();
    memrefCopy = *fn;
  }
  ExecutionEngineOptions engineOptions;
  auto transformer =
      makeOptimizingTransformer(options.optLevel, /*sizeLevel=*/0, nullptr);
  engineOptions.transformer = transformer;
  static const llvm::CodeGenOptLevel codegenLevels[] = {
      llvm::CodeGenOptLevel::None, llvm::CodeGenOptLevel::Less,
      llvm::CodeGenOptLevel::Default, llvm::CodeGenOptLevel::Aggressive};
  // The engine takes the code generation level from the target machine it
  // is given (its jitCodeGenOptLevel applies only to one it makes itself).
  llvm::Expected<std::unique_ptr<llvm::TargetMachine>> machine =
      createTargetMachine(options.targetCpu, codegenLevels[options.optLevel]);
  if (!machine)
    return module.emitError()
           << "cannot make LLVM's target machine for the CPU '"
           << options.targetCpu << "': " << errorText(machine.takeError());
  llvm::Expected<std::unique_ptr<ExecutionEngine>> engine =
      ExecutionEngine::create(module, engineOptions, std::move(*machine));
  if (!engine)
    return module.emitError() << "cannot compile the module to native code: "
                              << errorText(engine.takeError());
  std::vector<std::string> registered;
  (*engine)->registerSymbols([&](llvm::orc::MangleAndInterner interner) {
    llvm::orc::SymbolMap symbols = runtimeSymbols(module, interner);
    for (const auto &entry : symbols)
      registered.push_back((*entry.first).str());
    if (memrefCopy)
      symbols[interner("memrefCopy")] = {
          llvm::orc::ExecutorAddr::fromPtr(memrefCopy),
          llvm::JITSymbolFlags::Exported};
    return symbols;
  });
  // The lookup links the code (every symbol it calls resolved) before the
  // engine runs its initializers.
  llvm::Expected<void (*)(void **)> entry =
      (*engine)->lookupPacked("_mlir_ciface_" + entryName);
  if (!entry) {
    const std::string text = errorText(entry.takeError());
    SmallVector<StringRef> given(registered.begin(), registered.end());
    if (memrefCopy)
      given.push_back("memrefCopy");
    return module.emitError() << linkFailure(
               entryName, text,
               unresolvedSymbols(module, options.targetCpu,
                                 codegenLevels[options.optLevel], transformer,
                                 given),
               options.targetCpu);
  }
  (*engine)->initialize();
  auto code = std::make_shared<Code>();
  code->engine = std::move(*engine);
  code->entry = *entry;
  code->outParams = outParams;
  jit->code_ = std::move(code);
  jit->codegenSeconds_ = secondsSince(start);
  return jit;
}

rt::RankCallbacks::MakeExecutor JitEntry::executors() const {
  std::shared_ptr<const Code> code = code_;
  return [code](const rt::Plan &plan, rt::Communicator &comm,
                rt::RankDevice &device,
                std::unique_ptr<rt::RankExecutor> &out) -> rt::Status {
    rt::ContextPtr context;
    SHARDLIN_RETURN_IF_ERROR(rt::wrapContext(comm, device, context));
    out = std::make_unique<JitRank>(code, plan, std::move(context));
    return rt::Status::ok();
  };
}
