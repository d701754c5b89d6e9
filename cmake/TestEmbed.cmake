# ctest driver for the example.embed test: install, configure and build
# examples/embed against the installed package, run it, FileCheck the output;
# then the same for the C ABI's example (examples/c-api, a C program linking
# Shardlin::Runtime), run on 3 threads.
include(${CMAKE_CURRENT_LIST_DIR}/TestDriver.cmake)
file(REMOVE_RECURSE ${SCRATCH})
run(${CMAKE_COMMAND} --install ${SHARDLIN_BUILD_DIR} --prefix ${SCRATCH}/prefix)
# No build directories (empty CMakeFiles/) in the prefix.
checkNoBuildDirs(${SCRATCH}/prefix)
# The README's C++ snippet: the code block after the readme-snippet marker.
file(READ ${SHARDLIN_SOURCE_DIR}/README.md readme)
string(FIND "${readme}" "<!-- readme-snippet" at)
if(at EQUAL -1)
  message(FATAL_ERROR "README.md has no readme-snippet marker")
endif()
string(SUBSTRING "${readme}" ${at} -1 readme)
string(FIND "${readme}" "```cpp\n" begin)
string(FIND "${readme}" "\n```\n" end)
if(begin EQUAL -1 OR end EQUAL -1 OR end LESS begin)
  message(FATAL_ERROR "README.md's readme-snippet is not followed by a cpp block")
endif()
math(EXPR begin "${begin} + 7")
math(EXPR length "${end} - ${begin} + 1")
string(SUBSTRING "${readme}" ${begin} ${length} snippet)
file(WRITE ${SCRATCH}/readme_snippet.cpp "${snippet}")

run(${CMAKE_COMMAND} -S ${SHARDLIN_SOURCE_DIR}/examples/embed -B ${SCRATCH}/build
    -G Ninja -DCMAKE_PREFIX_PATH=${SCRATCH}/prefix
    -DSHARDLIN_README_SNIPPET=${SCRATCH}/readme_snippet.cpp)
run(${CMAKE_COMMAND} --build ${SCRATCH}/build -j 2)
run(${SCRATCH}/build/embed-shardlin)
file(WRITE ${SCRATCH}/output.mlir "${LAST_OUTPUT}")
run(${FILECHECK} ${SHARDLIN_SOURCE_DIR}/examples/embed/main.cpp
    --input-file=${SCRATCH}/output.mlir)
message(STATUS "examples/embed built against the installed package and passed")
run(${SCRATCH}/build/readme-snippet
    ${SHARDLIN_SOURCE_DIR}/examples/quickstart/linear.mlir)
file(WRITE ${SCRATCH}/readme-output.mlir "${LAST_OUTPUT}")
run(${FILECHECK} ${SHARDLIN_SOURCE_DIR}/examples/embed/readme_main.cpp
    --input-file=${SCRATCH}/readme-output.mlir)
message(STATUS "the README's embedding snippet compiled against the installed "
               "package and lowered the quickstart's layer")

run(${CMAKE_COMMAND} -S ${SHARDLIN_SOURCE_DIR}/examples/c-api
    -B ${SCRATCH}/build-c-api -G Ninja -DCMAKE_PREFIX_PATH=${SCRATCH}/prefix)
run(${CMAKE_COMMAND} --build ${SCRATCH}/build-c-api -j 2)
run(${SCRATCH}/build-c-api/shardlin-c-linear threads 3)
message(STATUS "examples/c-api built against the installed package and "
               "passed:\n${LAST_OUTPUT}")
