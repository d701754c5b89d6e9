# What the ctest drivers of cmake/ (TestEmbed.cmake, TestRuntimeOnly.cmake)
# share: run(COMMAND...) runs a command and stops the test with its output
# if it fails (LAST_OUTPUT: its standard output), and checkNoBuildDirs(DIR)
# fails if an install under DIR holds a build directory (CMakeFiles/).
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(LAST_OUTPUT "${out}" PARENT_SCOPE)
endfunction()

function(checkNoBuildDirs dir)
  file(GLOB_RECURSE entries LIST_DIRECTORIES true ${dir}/*)
  list(FILTER entries INCLUDE REGEX "/CMakeFiles$")
  if(entries)
    message(FATAL_ERROR "the install holds build directories: ${entries}")
  endif()
endfunction()
