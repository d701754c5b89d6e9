//===- GpuModule.cpp - Loading the runtime's GPU module -------------------===//
//
// The GPU backends (cuda-local, nccl: device memory, the cuBLAS GEMM and the
// GPU communicators) are built into a shared library of their own,
// libshardlin-runtime-cuda.so, so that a process that runs on CPUs never
// maps CUDA, cuBLAS(Lt) and NCCL: together they cost about 190 MB of
// resident memory at start-up, before any work (docs/performance.md,
// "Memory per rank"). The registry knows the GPU backends by name without
// the module; this file loads it the first time one of them (or the device
// list) is needed, and the module registers its entry points from a static
// initializer. A program that links the module directly (the GPU tests)
// has them registered before main and never loads it here.
//
// Where the module is looked for, in order (the first file that exists is
// loaded; a loader failure is reported, not skipped):
//  1. $SHARDLIN_RUNTIME_CUDA_MODULE, if set (a path; nothing else is tried);
//  2. next to the runtime: the directory of the executable or shared library
//     the runtime is linked into, and its ../lib equivalent (bin -> lib in
//     the build tree and in an install tree);
//  3. the install prefix's library directory configured at build time;
//  4. the bare file name, for the dynamic loader's own search
//     (LD_LIBRARY_PATH, the executable's RUNPATH, ld.so.cache).
//
//===----------------------------------------------------------------------===//

#include "backends/Backends.h"

#include <mutex>

#if defined(SHARDLIN_GPU_MODULE)
#include <dlfcn.h>
#include <link.h>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <sys/stat.h>
#include <unistd.h>
#endif

namespace shardlin::rt::detail {

namespace {

struct ModuleState {
  std::mutex mutex;
  bool registered = false;
  GpuModuleEntries entries;
  /// Set once a load was tried and failed: the reason, reported again on
  /// every later request without retrying.
  std::string failure;
};

ModuleState &state() {
  static ModuleState s;
  return s;
}

#if defined(SHARDLIN_GPU_MODULE)

bool isFile(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

/// The directory of the object (executable or shared library) this code is
/// linked into. dladdr names the main program by argv[0], which may be a
/// bare command name found on PATH, so /proc/self/exe is read for it.
std::string runtimeDirectory() {
  Dl_info info;
  struct link_map *map = nullptr;
  std::string file;
  if (dladdr1(reinterpret_cast<void *>(&runtimeDirectory), &info,
              reinterpret_cast<void **>(&map), RTLD_DL_LINKMAP) != 0 &&
      map && map->l_name && map->l_name[0] != '\0') {
    file = map->l_name;
  } else {
    char buf[PATH_MAX];
    const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
    if (n <= 0)
      return "";
    file.assign(buf, static_cast<size_t>(n));
  }
  char resolved[PATH_MAX];
  if (::realpath(file.c_str(), resolved))
    file = resolved;
  const size_t slash = file.rfind('/');
  return slash == std::string::npos ? "." : file.substr(0, slash);
}

std::vector<std::string> candidatePaths() {
  const std::string name = SHARDLIN_GPU_MODULE;
  std::vector<std::string> paths;
  const std::string dir = runtimeDirectory();
  if (!dir.empty()) {
    paths.push_back(dir + "/" + name);
    paths.push_back(dir + "/" SHARDLIN_GPU_MODULE_FROM_BINDIR "/" + name);
  }
  paths.push_back(SHARDLIN_GPU_MODULE_INSTALL_DIR "/" + name);
  return paths;
}

#endif // SHARDLIN_GPU_MODULE

} // namespace

void registerGpuModule(const GpuModuleEntries &entries) {
  ModuleState &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (entries.abi != kGpuModuleAbi) {
    s.failure = "the GPU module was built for another version of the "
                "runtime (interface " +
                std::to_string(entries.abi) + ", this runtime needs " +
                std::to_string(kGpuModuleAbi) + ")";
    return;
  }
  s.entries = entries;
  s.registered = true;
}

std::string findGpuModule(std::string &why) {
#if defined(SHARDLIN_GPU_MODULE)
  if (const char *env = std::getenv("SHARDLIN_RUNTIME_CUDA_MODULE")) {
    if (isFile(env))
      return env;
    why = std::string("SHARDLIN_RUNTIME_CUDA_MODULE names ") + env +
          ", which is not a file";
    return "";
  }
  std::string looked;
  for (const std::string &p : candidatePaths()) {
    if (isFile(p)) {
      char resolved[PATH_MAX];
      return ::realpath(p.c_str(), resolved) ? std::string(resolved) : p;
    }
    looked += (looked.empty() ? "" : ", ") + p;
  }
  why = std::string(SHARDLIN_GPU_MODULE) + " not found (looked for " + looked +
        "; set SHARDLIN_RUNTIME_CUDA_MODULE to its path)";
  return "";
#else
  why = "this runtime is built without CUDA";
  return "";
#endif
}

const GpuModuleEntries *gpuModule(std::string &why) {
  ModuleState &s = state();
  // What an earlier load left: the entries, or its failure. Checked again
  // once the load lock is held (a concurrent load may have finished).
  bool known = false;
  auto earlier = [&]() -> const GpuModuleEntries * {
    std::lock_guard<std::mutex> lock(s.mutex);
    known = s.registered || !s.failure.empty();
    if (!s.registered)
      why = s.failure;
    return s.registered ? &s.entries : nullptr;
  };
  if (const GpuModuleEntries *e = earlier(); e || known)
    return e;
#if defined(SHARDLIN_GPU_MODULE)
  // Serializes loads; the module's initializer takes s.mutex itself, so it
  // must not be held across dlopen.
  static std::mutex loading;
  std::lock_guard<std::mutex> once(loading);
  if (const GpuModuleEntries *e = earlier(); e || known)
    return e;
  std::string path = findGpuModule(why);
  std::string failure;
  if (path.empty() && std::getenv("SHARDLIN_RUNTIME_CUDA_MODULE")) {
    failure = why; // the path it names, and nothing else
  } else if (path.empty()) {
    // Last: the dynamic loader's search by file name.
    if (!::dlopen(SHARDLIN_GPU_MODULE, RTLD_NOW | RTLD_LOCAL)) {
      // "cannot open shared object file" only repeats that it is not
      // found; anything else (a library it needs is missing) is the reason.
      const char *err = ::dlerror();
      failure = why;
      if (err && !std::strstr(err, "cannot open shared object file"))
        failure += ": " + std::string(err);
    }
    path = SHARDLIN_GPU_MODULE;
  } else if (!::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) {
    const char *err = ::dlerror();
    failure = "loading " + path + " failed: " + (err ? err : "unknown error");
  }
  std::lock_guard<std::mutex> lock(s.mutex);
  if (failure.empty() && !s.registered && s.failure.empty())
    failure = path + " was loaded but registered no GPU backends";
  if (!failure.empty() && s.failure.empty())
    s.failure = failure;
  if (s.registered)
    return &s.entries;
  why = s.failure;
  return nullptr;
#else
  why = "this runtime is built without CUDA";
  return nullptr;
#endif
}

namespace {
Status moduleMissing(const char *backend, const std::string &why) {
  return Status::unavailable(std::string("the ") + backend +
                             " backend needs the runtime's GPU module: " +
                             why);
}
} // namespace

Status runCudaLocalFromModule(const SharedProgram &program,
                              const RunOptions &options,
                              const RankCallbacks &callbacks,
                              std::vector<RankResult> &ranks) {
  std::string why;
  const GpuModuleEntries *m = gpuModule(why);
  if (!m)
    return moduleMissing("cuda-local", why);
  return m->runCudaLocal(program, options, callbacks, ranks);
}

Status runNcclFromModule(const SharedProgram &program, const RunOptions &options,
                         const RankCallbacks &callbacks,
                         std::vector<RankResult> &ranks) {
  std::string why;
  const GpuModuleEntries *m = gpuModule(why);
  if (!m)
    return moduleMissing("nccl", why);
  return m->runNccl(program, options, callbacks, ranks);
}

} // namespace shardlin::rt::detail
