# The GPU backends of the runtime: device memory and streams, the cuBLAS
# GEMM, and the nccl and cuda-local communicators (runtime/lib/backends/cuda), plus
# their tests (shardlin-gpu-tests, ctest names "gpu.*").
#
# include()d by runtime/CMakeLists.txt once ShardlinRuntime exists. Without
# the CUDA toolkit (or with -DSHARDLIN_ENABLE_CUDA=OFF) it only says so and
# everything else builds as before. Sets SHARDLIN_HAVE_CUDA and
# SHARDLIN_HAVE_NCCL here and in the parent scope.
#
# The GPU backends are a shared library of their own, the GPU module
# libshardlin-runtime-cuda.so (target ShardlinRuntimeCuda, exported as
# Shardlin::RuntimeCuda), next to the runtime in the build and install trees
# (lib/). Only it links CUDA, cuBLAS(Lt) and NCCL: the static runtime loads it
# with dlopen the first time a GPU backend is run (lib/backends/GpuModule.cpp), so CPU
# runs never map those libraries. The module is not linked against the
# runtime: it calls the runtime of the program that loads it, whose
# shardlin::rt symbols that program exports (the link options below travel
# with ShardlinRuntime to every program that links it). Programs that use
# the CUDA API of Cuda.h directly (the GPU tests and benchmark) link the
# module, which brings the runtime along.
#
# The .cu files are compiled in an object library of their own because the
# runtime's compile options (-Wall -Wextra) are host-compiler flags that nvcc
# rejects; their objects go into the module.

option(SHARDLIN_ENABLE_CUDA
  "Build the GPU backends (cuBLAS GEMM, nccl and cuda-local communicators) if the CUDA toolkit is found"
  ON)

set(SHARDLIN_HAVE_CUDA OFF)
set(SHARDLIN_HAVE_NCCL OFF)

if(SHARDLIN_ENABLE_CUDA)
  find_package(CUDAToolkit QUIET)
  if(CUDAToolkit_FOUND AND TARGET CUDA::cudart AND TARGET CUDA::cublas
     AND TARGET CUDA::cublasLt)
    # Use the toolkit's nvcc even when it is not on PATH, and check that it
    # works with this host compiler before committing to the language.
    if(NOT DEFINED CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX}
       AND EXISTS "${CUDAToolkit_NVCC_EXECUTABLE}")
      set(ENV{CUDACXX} "${CUDAToolkit_NVCC_EXECUTABLE}")
    endif()
    if(NOT DEFINED CMAKE_CUDA_HOST_COMPILER
       AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
      set(CMAKE_CUDA_HOST_COMPILER "${CMAKE_CXX_COMPILER}" CACHE FILEPATH
        "Host compiler for nvcc (defaults to the C++ compiler)")
    endif()
    # H100/H200 by default; e.g. -DCMAKE_CUDA_ARCHITECTURES="80;90" for more.
    set(CMAKE_CUDA_ARCHITECTURES 90 CACHE STRING
      "CUDA architectures of the runtime's device code")
    include(CheckLanguage)
    check_language(CUDA)
    if(CMAKE_CUDA_COMPILER)
      set(SHARDLIN_HAVE_CUDA ON)
    endif()
  endif()
endif()

if(NOT SHARDLIN_HAVE_CUDA)
  if(SHARDLIN_ENABLE_CUDA)
    message(STATUS "shardlin: CUDA toolkit not found; GPU backends (nccl, cuda-local, cublas) are not built")
  else()
    message(STATUS "shardlin: SHARDLIN_ENABLE_CUDA is OFF; GPU backends (nccl, cuda-local, cublas) are not built")
  endif()
  set(SHARDLIN_HAVE_CUDA OFF PARENT_SCOPE)
  set(SHARDLIN_HAVE_NCCL OFF PARENT_SCOPE)
  return()
endif()

enable_language(CUDA)
# Where CMake adds the CUDA language's implicit link libraries (targets with
# CUDA sources, programs that link such objects), make those the shared CUDA
# runtime (CMake's default is the static one, which would give a program a
# second CUDA runtime state next to the shared one cuBLAS and NCCL use). Set
# here and for the parent directory, whose targets are created later.
set(CMAKE_CUDA_RUNTIME_LIBRARY Shared)
set(CMAKE_CUDA_RUNTIME_LIBRARY Shared PARENT_SCOPE)

find_path(SHARDLIN_NCCL_INCLUDE_DIR nccl.h
  HINTS ${CUDAToolkit_INCLUDE_DIRS} /usr/local/cuda/include)
find_library(SHARDLIN_NCCL_LIBRARY nccl
  HINTS ${CUDAToolkit_LIBRARY_DIR} /usr/local/cuda/lib /usr/local/cuda/lib64)
if(SHARDLIN_NCCL_INCLUDE_DIR AND SHARDLIN_NCCL_LIBRARY)
  set(SHARDLIN_HAVE_NCCL ON)
  message(STATUS "shardlin: GPU backends enabled (CUDA ${CUDAToolkit_VERSION}, "
                 "architectures ${CMAKE_CUDA_ARCHITECTURES}, NCCL ${SHARDLIN_NCCL_LIBRARY})")
else()
  message(STATUS "shardlin: GPU backends enabled (CUDA ${CUDAToolkit_VERSION}, "
                 "architectures ${CMAKE_CUDA_ARCHITECTURES}); NCCL not found, "
                 "the nccl backend is not built")
endif()

add_library(ShardlinRuntimeCudaKernels OBJECT
  lib/backends/cuda/AttentionKernels.cu
  lib/backends/cuda/CudaLocalCommunicator.cu
  lib/backends/cuda/Kernels.cu
)
set_target_properties(ShardlinRuntimeCudaKernels PROPERTIES
  CUDA_RUNTIME_LIBRARY Shared
  CUDA_STANDARD 17
  CUDA_STANDARD_REQUIRED ON
  CUDA_ARCHITECTURES "${CMAKE_CUDA_ARCHITECTURES}"
  POSITION_INDEPENDENT_CODE ON)
target_include_directories(ShardlinRuntimeCudaKernels PRIVATE
  ${CMAKE_CURRENT_SOURCE_DIR}/include
  ${CMAKE_CURRENT_SOURCE_DIR}/lib)
target_compile_definitions(ShardlinRuntimeCudaKernels PRIVATE SHARDLIN_HAVE_CUDA=1)
target_compile_options(ShardlinRuntimeCudaKernels PRIVATE
  $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra>)
# Usage requirements only (include directories); objects do not link.
target_link_libraries(ShardlinRuntimeCudaKernels PRIVATE CUDA::cudart)

add_library(ShardlinRuntimeCuda SHARED
  $<TARGET_OBJECTS:ShardlinRuntimeCudaKernels>
  lib/backends/cuda/CublasGemm.cpp
  lib/backends/cuda/CudaBackends.cpp
  lib/backends/cuda/CudaLane.cpp
  lib/backends/cuda/CudaLocalOps.cpp
  lib/backends/cuda/CudaSupport.cpp)
add_library(Shardlin::RuntimeCuda ALIAS ShardlinRuntimeCuda)
set_target_properties(ShardlinRuntimeCuda PROPERTIES
  OUTPUT_NAME shardlin-runtime-cuda
  EXPORT_NAME RuntimeCuda
  # The shared CUDA runtime, not nvcc's default static one: the module,
  # cuBLAS, NCCL and a program using Cuda.h must share one CUDA runtime state.
  CUDA_RUNTIME_LIBRARY Shared
  # Installed, it still finds the CUDA libraries it was linked with.
  INSTALL_RPATH_USE_LINK_PATH ON)
target_include_directories(ShardlinRuntimeCuda PRIVATE
  ${CMAKE_CURRENT_SOURCE_DIR}/lib
  $<TARGET_PROPERTY:ShardlinRuntimeBase,INTERFACE_INCLUDE_DIRECTORIES>)
target_compile_options(ShardlinRuntimeCuda PRIVATE -Wall -Wextra)
target_compile_definitions(ShardlinRuntimeCuda PUBLIC SHARDLIN_HAVE_CUDA=1)
# The runtime's symbols come from the program that loads the module, so the
# runtime is an interface dependency only (linking the static archive into
# the module would give it a second copy, with its own state, of the MPI
# session and the rest).
target_link_libraries(ShardlinRuntimeCuda INTERFACE ShardlinRuntime)
# CUDA's imported targets in the build tree; the installed package names the
# libraries by path, so that find_package(Shardlin) works without a
# find_dependency(CUDAToolkit) in ShardlinConfig.cmake.
foreach(lib cudart cublas cublasLt)
  target_link_libraries(ShardlinRuntimeCuda PRIVATE
    $<BUILD_INTERFACE:CUDA::${lib}>
    $<INSTALL_INTERFACE:${CUDA_${lib}_LIBRARY}>)
endforeach()
if(SHARDLIN_HAVE_NCCL)
  target_sources(ShardlinRuntimeCuda PRIVATE lib/backends/cuda/NcclCommunicator.cpp
    lib/backends/cuda/NcclSetup.cpp
    lib/backends/cuda/NcclSupport.cpp)
  target_include_directories(ShardlinRuntimeCuda PRIVATE ${SHARDLIN_NCCL_INCLUDE_DIR})
  target_link_libraries(ShardlinRuntimeCuda PRIVATE ${SHARDLIN_NCCL_LIBRARY})
  target_compile_definitions(ShardlinRuntimeCuda PUBLIC SHARDLIN_HAVE_NCCL=1)
  target_compile_definitions(ShardlinRuntimeBackends PRIVATE
    SHARDLIN_GPU_MODULE_HAS_NCCL=1)
else()
  target_sources(ShardlinRuntimeCuda PRIVATE lib/backends/cuda/NoNccl.cpp)
endif()
install(TARGETS ShardlinRuntimeCuda EXPORT ShardlinRuntimeTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT Runtime)

# What the runtime's loader (lib/backends/GpuModule.cpp) needs to find the module:
# its file name, the library directory relative to the program directory
# (bin -> lib, the same in the build and the install tree) and the install
# prefix's library directory.
file(RELATIVE_PATH shardlin_bin_to_lib
  ${CMAKE_INSTALL_FULL_BINDIR} ${CMAKE_INSTALL_FULL_LIBDIR})
target_compile_definitions(ShardlinRuntimeBackends PRIVATE
  SHARDLIN_GPU_MODULE="$<TARGET_FILE_NAME:ShardlinRuntimeCuda>"
  SHARDLIN_GPU_MODULE_FROM_BINDIR="${shardlin_bin_to_lib}"
  SHARDLIN_GPU_MODULE_INSTALL_DIR="${CMAKE_INSTALL_FULL_LIBDIR}")
target_link_libraries(ShardlinRuntimeBackends PRIVATE ${CMAKE_DL_LIBS})
# Every program that links the runtime exports the runtime's symbols (C++
# names in shardlin::rt: functions, vtables, type info), for the module to
# bind to when it is loaded.
target_link_options(ShardlinRuntime INTERFACE
  "LINKER:--export-dynamic-symbol=_ZN8shardlin2rt*"
  "LINKER:--export-dynamic-symbol=_ZNK8shardlin2rt*"
  "LINKER:--export-dynamic-symbol=_ZT[VIS]N8shardlin2rt*")

set(SHARDLIN_HAVE_CUDA ON PARENT_SCOPE)
set(SHARDLIN_HAVE_NCCL ${SHARDLIN_HAVE_NCCL} PARENT_SCOPE)

# shardlin-gpu-bench, the GPU timings of the runtime, lives with the other
# benchmarks in bench/gpu/ but is built with the runtime (also without
# LLVM/MLIR); added from here, it sees the CUDA::* targets found above.
add_subdirectory(${PROJECT_SOURCE_DIR}/bench/gpu
                 ${PROJECT_BINARY_DIR}/bench/gpu)

if(SHARDLIN_BUILD_TESTS)
  # Every GPU test skips (GTEST_SKIP, reason in the output) without a usable
  # device; the tests of the polling logic run everywhere.
  add_executable(shardlin-gpu-tests
    ${PROJECT_SOURCE_DIR}/unittests/runtime/backends/GpuWaitLogicTest.cpp
    ${PROJECT_SOURCE_DIR}/unittests/runtime/backends/GpuAttentionTest.cpp
    ${PROJECT_SOURCE_DIR}/unittests/runtime/backends/GpuLocalOpsTest.cpp
    ${PROJECT_SOURCE_DIR}/unittests/runtime/backends/GpuElementwiseTest.cpp
    ${PROJECT_SOURCE_DIR}/unittests/runtime/backends/GpuGemmTest.cpp
    ${PROJECT_SOURCE_DIR}/unittests/runtime/backends/GpuCollectivesTest.cpp
    ${PROJECT_SOURCE_DIR}/unittests/runtime/backends/GpuCollectiveSuites.cpp
    # Pipelined blocks on threads and cuda-local (its lane's two streams).
    ${PROJECT_SOURCE_DIR}/unittests/runtime/exec/PipelineTest.cpp)
  target_include_directories(shardlin-gpu-tests PRIVATE
    ${CMAKE_CURRENT_SOURCE_DIR}/lib
    ${PROJECT_SOURCE_DIR}/unittests/runtime
    ${PROJECT_SOURCE_DIR}/unittests/runtime/comm
    ${PROJECT_SOURCE_DIR}/unittests/runtime/backends
    ${PROJECT_SOURCE_DIR}/unittests/runtime/exec
    ${PROJECT_SOURCE_DIR}/integration_test/Fault)
  if(SHARDLIN_HAVE_NCCL)
    # CudaCheck.h includes nccl.h when SHARDLIN_HAVE_NCCL is defined.
    target_include_directories(shardlin-gpu-tests PRIVATE
      ${SHARDLIN_NCCL_INCLUDE_DIR})
  endif()
  target_link_libraries(shardlin-gpu-tests PRIVATE ShardlinRuntimeCuda
                        ShardlinRuntimeTooling ShardlinTestSupport CUDA::cudart
                        GTest::gtest_main)
  target_compile_options(shardlin-gpu-tests PRIVATE -Wall -Wextra)
  gtest_discover_tests(shardlin-gpu-tests
    TEST_PREFIX "gpu."
    DISCOVERY_TIMEOUT 60
    PROPERTIES TIMEOUT 300)
endif()
