//===- SanitizerDefaults.cpp - Default options of sanitized executables ---===//
//
// Part of the runtime library in a SHARDLIN_ENABLE_SANITIZERS build, and
// linked into every executable that links the runtime (cmake/Sanitizers.cmake),
// so that a test is checked the same way whether ctest, lit, mpirun or a
// shell starts it. The sanitizer runtimes call these hooks before reading
// ASAN_OPTIONS, UBSAN_OPTIONS and LSAN_OPTIONS, which therefore still
// override them. Compiled without instrumentation: ASan calls them before
// its shadow memory exists.
//
//   abort_on_error=1      a report ends the process with SIGABRT, never with
//                         an ordinary exit code: `not tool ...` in a lit test
//                         (which expects a clean failure) then fails too,
//                         instead of taking a sanitizer report for the error
//                         it expected.
//   detect_leaks=1        LeakSanitizer at exit (Open MPI's own allocations
//                         are suppressed, see cmake/lsan.supp).
//   fast_unwind_on_malloc=0
//                         only in processes that use MPI, see below.
//   allow_user_poisoning=0
//                         LLVM's BumpPtrAllocator (Allocator.h) poisons its
//                         slabs when compiled with ASan and unpoisons each
//                         allocation. The MLIR/LLVM libraries are not
//                         instrumented, so when an instrumented copy of the
//                         inline code poisons and an uninstrumented copy
//                         allocates, ASan reports a use-after-poison inside
//                         MLIR (seen at MLIRContext construction). This turns
//                         manual poisoning off; ASan's own redzones and
//                         use-after-free checks are unaffected.
//   allocator_may_return_null=1
//                         tests ask for 2^62 bytes on purpose and expect a
//                         clean failure (a null pointer or std::bad_alloc),
//                         not a sanitizer report.
//
//===----------------------------------------------------------------------===//

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SHARDLIN_LSAN_SUPPRESSIONS
#error "SHARDLIN_LSAN_SUPPRESSIONS (the path of cmake/lsan.supp) is not set"
#endif

namespace {

/// Reads /proc/self/<name> (NUL-separated strings) into `buf` with raw
/// system calls: ASan asks for its options before the C library has set up
/// `environ`, and before its own interceptors of open/read can run.
long readProcSelf(const char *path, char *buf, long size) {
  long fd = syscall(SYS_open, path, O_RDONLY);
  if (fd < 0)
    return 0;
  long len = 0;
  while (len < size) {
    long n = syscall(SYS_read, fd, buf + len, size - len);
    if (n <= 0)
      break;
    len += n;
  }
  syscall(SYS_close, fd);
  return len;
}

/// True if one of the NUL-separated strings in buf[0, len) starts with
/// `prefix` (of `prefixLen` bytes).
bool hasEntry(const char *buf, long len, const char *prefix, long prefixLen) {
  for (long i = 0; i < len;) {
    long j = i;
    while (j < len && buf[j] != '\0')
      ++j;
    if (j - i >= prefixLen && __builtin_memcmp(buf + i, prefix, prefixLen) == 0)
      return true;
    i = j + 1;
  }
  return false;
}

/// True if this process will initialize MPI: Open MPI's mpirun started it
/// (OMPI_COMM_WORLD_SIZE is set), or it is a shardlin tool run with
/// --backend=mpi (a singleton MPI process).
bool usesMpi() {
  static char buf[1 << 16];
  long len = readProcSelf("/proc/self/environ", buf, sizeof(buf));
  static const char env[] = "OMPI_COMM_WORLD_SIZE=";
  if (hasEntry(buf, len, env, sizeof(env) - 1))
    return true;
  len = readProcSelf("/proc/self/cmdline", buf, sizeof(buf));
  static const char arg[] = "--backend=mpi";
  return hasEntry(buf, len, arg, sizeof(arg) - 1);
}

} // namespace

extern "C" {

// Named by the runtime's link options (-u): it makes the linker take this
// object out of the static runtime library. The hooks below cannot serve:
// the sanitizer runtimes define them weakly, which already satisfies -u.
__attribute__((used, visibility("default"))) int shardlinSanitizerDefaults = 1;

__attribute__((used, visibility("default"))) const char *
__asan_default_options() {
  // In a process that uses MPI, allocation stacks are taken with the slow
  // (DWARF) unwinder: Open MPI is built without frame pointers, so the fast
  // one stops in its first frame and the leaks it leaves at exit could not
  // be traced to libmpi (cmake/lsan.supp). Elsewhere the fast one is enough
  // (the slow one makes the whole suite about 3 times slower).
  static const char *const common =
      "halt_on_error=1:abort_on_error=1:detect_leaks=1:"
      "allow_user_poisoning=0:allocator_may_return_null=1:"
      "check_initialization_order=1:strict_init_order=1";
  static const char *const underMpirun =
      "halt_on_error=1:abort_on_error=1:detect_leaks=1:"
      "allow_user_poisoning=0:allocator_may_return_null=1:"
      "check_initialization_order=1:strict_init_order=1:"
      "fast_unwind_on_malloc=0";
  return usesMpi() ? underMpirun : common;
}

__attribute__((used, visibility("default"))) const char *
__ubsan_default_options() {
  return "halt_on_error=1:abort_on_error=1:print_stacktrace=1";
}

__attribute__((used, visibility("default"))) const char *
__lsan_default_options() {
  return "suppressions=" SHARDLIN_LSAN_SUPPRESSIONS ":print_suppressions=0";
}

} // extern "C"

// Open MPI loads its components (mca_*.so) with dlopen and unloads them at
// MPI_Finalize. Their allocations that were never freed are then reported
// by LeakSanitizer at exit with "<unknown module>" frames, which no
// suppression can match. Keeping every library loaded lets the reports name
// the library, and cmake/lsan.supp suppress Open MPI's. Unloading a library
// early gains a test process nothing.
extern "C" __attribute__((used, visibility("default"))) int
dlclose(void *) {
  return 0;
}

// Frames that a JIT registers with __register_frame deadlock libgcc 12 in a
// process that unwinds with the slow (DWARF) unwinder on every allocation
// (the MPI processes, above): the unwinder's first lookup after a
// registration sorts the new frames and allocates under its object lock,
// and that allocation's unwind takes the same lock again. shardlin-run
// --jit (LLVM's RuntimeDyld, through MLIR's ExecutionEngine) registers the
// frames of the code it compiles, and hung there under mpirun. Nothing
// unwinds through that code (no exception crosses it; the sanitizers' own
// unwinder stops at it), so a sanitized build drops the registration.
extern "C" __attribute__((used, visibility("default"))) void
__register_frame(void *) {}
extern "C" __attribute__((used, visibility("default"))) void
__deregister_frame(void *) {}
