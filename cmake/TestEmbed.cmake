# ctest driver for the example.embed test: install, configure and build
# examples/embed against the installed package, run it, FileCheck the output;
# then the same for the C ABI's example (examples/c-api, a C program linking
# Shardlin::Runtime), run on 3 threads.
file(REMOVE_RECURSE ${SCRATCH})
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(LAST_OUTPUT "${out}" PARENT_SCOPE)
endfunction()
run(${CMAKE_COMMAND} --install ${SHARDLIN_BUILD_DIR} --prefix ${SCRATCH}/prefix)
# No build directories (empty CMakeFiles/) in the prefix.
file(GLOB_RECURSE entries LIST_DIRECTORIES true ${SCRATCH}/prefix/*)
list(FILTER entries INCLUDE REGEX "/CMakeFiles$")
if(entries)
  message(FATAL_ERROR "the install holds build directories: ${entries}")
endif()
run(${CMAKE_COMMAND} -S ${SHARDLIN_SOURCE_DIR}/examples/embed -B ${SCRATCH}/build
    -G Ninja -DCMAKE_PREFIX_PATH=${SCRATCH}/prefix)
run(${CMAKE_COMMAND} --build ${SCRATCH}/build -j 2)
run(${SCRATCH}/build/embed-shardlin)
file(WRITE ${SCRATCH}/output.mlir "${LAST_OUTPUT}")
run(${FILECHECK} ${SHARDLIN_SOURCE_DIR}/examples/embed/main.cpp
    --input-file=${SCRATCH}/output.mlir)
message(STATUS "examples/embed built against the installed package and passed")

run(${CMAKE_COMMAND} -S ${SHARDLIN_SOURCE_DIR}/examples/c-api
    -B ${SCRATCH}/build-c-api -G Ninja -DCMAKE_PREFIX_PATH=${SCRATCH}/prefix)
run(${CMAKE_COMMAND} --build ${SCRATCH}/build-c-api -j 2)
run(${SCRATCH}/build-c-api/shardlin-c-linear threads 3)
message(STATUS "examples/c-api built against the installed package and "
               "passed:\n${LAST_OUTPUT}")
