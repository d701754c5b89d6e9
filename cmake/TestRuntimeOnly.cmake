# ctest driver for example.runtime-only-install (cmake/Package.cmake): the
# runtime-only install, and the runtime's examples built against it with no
# MLIR to be found.
include(${CMAKE_CURRENT_LIST_DIR}/TestDriver.cmake)
file(REMOVE_RECURSE ${SCRATCH})

set(prefix ${SCRATCH}/prefix)
run(${CMAKE_COMMAND} --install ${SHARDLIN_BUILD_DIR} --prefix ${prefix}
    --component Runtime)

# Nothing of the compiler: no compiler targets, libraries, tools or headers.
file(GLOB_RECURSE compilerFiles ${prefix}/*ShardlinTargets.cmake
     ${prefix}/lib/*MLIR* ${prefix}/bin/shardlin-opt ${prefix}/bin/shardlin-run
     ${prefix}/include/shardlin/Dialect/*)
if(compilerFiles)
  message(FATAL_ERROR "the runtime-only install holds compiler files: "
                      "${compilerFiles}")
endif()
checkNoBuildDirs(${prefix})

# MLIR and LLVM cannot be found, whatever this machine has.
set(noMlir -DCMAKE_DISABLE_FIND_PACKAGE_MLIR=ON
           -DCMAKE_DISABLE_FIND_PACKAGE_LLVM=ON)
foreach(example c-api runtime-only)
  run(${CMAKE_COMMAND} -S ${SHARDLIN_SOURCE_DIR}/examples/${example}
      -B ${SCRATCH}/build-${example} -G Ninja
      -DCMAKE_PREFIX_PATH=${prefix} ${noMlir})
  run(${CMAKE_COMMAND} --build ${SCRATCH}/build-${example} -j 2)
endforeach()
run(${SCRATCH}/build-c-api/shardlin-c-linear threads 3)
message(STATUS "examples/c-api against the runtime-only install:\n"
               "${LAST_OUTPUT}")
run(${SCRATCH}/build-runtime-only/runtime-only-example)
message(STATUS "examples/runtime-only against the runtime-only install:\n"
               "${LAST_OUTPUT}")

# A full install (this build's, as example.embed installs it) serves a
# runtime consumer without MLIR too.
run(${CMAKE_COMMAND} --install ${SHARDLIN_BUILD_DIR} --prefix ${SCRATCH}/full)
run(${CMAKE_COMMAND} -S ${SHARDLIN_SOURCE_DIR}/examples/c-api
    -B ${SCRATCH}/build-c-api-full -G Ninja
    -DCMAKE_PREFIX_PATH=${SCRATCH}/full ${noMlir})
run(${CMAKE_COMMAND} --build ${SCRATCH}/build-c-api-full -j 2)
message(STATUS "examples/c-api against a full install, MLIR unfindable: "
               "configured and built")

# Asking for the compiler from a runtime-only install is a clear failure.
file(WRITE ${SCRATCH}/wants-compiler/CMakeLists.txt
  "cmake_minimum_required(VERSION 3.20)\n"
  "project(wants-compiler LANGUAGES CXX)\n"
  "find_package(Shardlin REQUIRED COMPONENTS Compiler)\n")
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SCRATCH}/wants-compiler
                        -B ${SCRATCH}/wants-compiler/build -G Ninja
                        -DCMAKE_PREFIX_PATH=${prefix} ${noMlir}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0)
  message(FATAL_ERROR "find_package(Shardlin COMPONENTS Compiler) succeeded "
                      "on a runtime-only install")
endif()
message(STATUS "find_package(Shardlin COMPONENTS Compiler) fails on it, "
               "as it should")
