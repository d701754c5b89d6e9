# Sanitizer and fuzzer builds (docs/robustness.md).
#
#   SHARDLIN_ENABLE_SANITIZERS=ON   every target is compiled and linked with
#       -fsanitize=address,undefined -fno-omit-frame-pointer
#       -fno-sanitize-recover=undefined
#     (LeakSanitizer comes with ASan). Works with g++ and clang.
#   SHARDLIN_ENABLE_FUZZERS=ON      needs clang with libFuzzer
#     (Debian: clang-22 libclang-rt-22-dev). Implies the sanitizers, adds
#     coverage instrumentation (-fsanitize=fuzzer-no-link) to every target and
#     builds the fuzz/ targets, which link -fsanitize=fuzzer.
#
# The flags go on every target of the build (add_compile_options here, before
# any target exists), so the libraries a test or fuzzer links are checked too.
#
# Executables of a sanitized build carry their default sanitizer options
# (cmake/SanitizerDefaults.cpp: halt and abort on the first report, leak
# checking on, the Open MPI leak suppressions of cmake/lsan.supp), so ctest,
# lit, mpirun, a shell and the fuzzers all run them the same way.
# ASAN_OPTIONS, UBSAN_OPTIONS and LSAN_OPTIONS in the environment still
# override them.

if(SHARDLIN_ENABLE_FUZZERS)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang" OR
     NOT CMAKE_C_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR
      "SHARDLIN_ENABLE_FUZZERS needs clang (libFuzzer), but the compilers are "
      "${CMAKE_C_COMPILER_ID} ${CMAKE_C_COMPILER_VERSION} and "
      "${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER_VERSION}. Configure a fresh "
      "build directory with clang, e.g. on Debian 12:\n"
      "  apt-get install -y clang-22 libclang-rt-22-dev\n"
      "  CC=clang-22 CXX=clang++-22 cmake -S . -B build-asan -G Ninja "
      "-DSHARDLIN_ENABLE_FUZZERS=ON")
  endif()
  include(CheckCXXSourceCompiles)
  set(CMAKE_REQUIRED_FLAGS "-fsanitize=fuzzer,address,undefined")
  set(CMAKE_REQUIRED_LINK_OPTIONS "-fsanitize=fuzzer,address,undefined")
  check_cxx_source_compiles([[
    #include <cstddef>
    #include <cstdint>
    extern "C" int LLVMFuzzerTestOneInput(const uint8_t *, size_t) { return 0; }
  ]] SHARDLIN_HAVE_LIBFUZZER)
  unset(CMAKE_REQUIRED_FLAGS)
  unset(CMAKE_REQUIRED_LINK_OPTIONS)
  if(NOT SHARDLIN_HAVE_LIBFUZZER)
    message(FATAL_ERROR
      "SHARDLIN_ENABLE_FUZZERS: ${CMAKE_CXX_COMPILER} cannot link a libFuzzer "
      "target with ASan and UBSan (-fsanitize=fuzzer,address,undefined). On "
      "Debian 12 install the runtimes: apt-get install -y libclang-rt-22-dev")
  endif()
  set(SHARDLIN_ENABLE_SANITIZERS ON)
endif()

if(NOT SHARDLIN_ENABLE_SANITIZERS)
  return()
endif()

set(SHARDLIN_SANITIZER_FLAGS
  -fsanitize=address,undefined
  -fno-omit-frame-pointer
  -fno-sanitize-recover=undefined)
if(SHARDLIN_ENABLE_FUZZERS)
  list(APPEND SHARDLIN_SANITIZER_FLAGS -fsanitize=fuzzer-no-link)
endif()
if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  # clang's -fsanitize=function (part of "undefined") needs a runtime
  # handler that GCC's libubsan lacks; without it, a consumer that links
  # the installed libraries with g++ (examples/embed) does not link.
  list(APPEND SHARDLIN_SANITIZER_FLAGS -fno-sanitize=function)
endif()
# C and C++ only: nvcc (the GPU backends' .cu files) takes none of these.
add_compile_options("$<$<COMPILE_LANGUAGE:C,CXX>:${SHARDLIN_SANITIZER_FLAGS}>")
add_link_options(-fsanitize=address,undefined)
message(STATUS "shardlin: sanitizers on (${SHARDLIN_SANITIZER_FLAGS})")

# Default sanitizer options (cmake/SanitizerDefaults.cpp) go into a static
# library of their own, ShardlinSanitizerDefaults, which the chunk table
# (Shardlin::ChunkLayout) links: the compiler's libraries and the runtime's
# all link that, so every executable of the build gets the options, and so
# do consumers of the installed package (the examples/embed test, compiler
# only), which also need the sanitizer runtimes at link time. -u names one of
# the hooks, so the linker takes their object out of the static library.
# (-u names a symbol of that object: the hooks themselves are defined weakly
# by the sanitizer runtimes, which already satisfies the linker.) Called by
# runtime/CMakeLists.txt, where the chunk table is defined.
function(shardlin_add_sanitizer_defaults name)
  set(defaults ${PROJECT_SOURCE_DIR}/cmake/SanitizerDefaults.cpp)
  add_library(${name} STATIC ${defaults})
  set_target_properties(${name} PROPERTIES EXPORT_NAME SanitizerDefaults)
  target_compile_definitions(${name} PRIVATE
    SHARDLIN_LSAN_SUPPRESSIONS="${PROJECT_SOURCE_DIR}/cmake/lsan.supp")
  # The hooks run inside ASan's initialization, before its shadow memory
  # exists: they must not be instrumented themselves.
  target_compile_options(${name} PRIVATE -fno-sanitize=all)
  target_link_options(${name} INTERFACE
    -fsanitize=address,undefined
    "LINKER:-u,shardlinSanitizerDefaults"
    # Its dlclose replaces the C library's for shared libraries too, and
    # its __register_frame libgcc's for LLVM's JIT.
    "LINKER:--export-dynamic-symbol=dlclose"
    "LINKER:--export-dynamic-symbol=__register_frame"
    "LINKER:--export-dynamic-symbol=__deregister_frame")
endfunction()
