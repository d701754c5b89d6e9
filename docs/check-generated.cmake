# Fails when a committed reference in docs/generated/ differs from the one the
# ODS generates in the build tree (see docs/CMakeLists.txt).
set(stale)
foreach(doc ${DOCS})
  set(generated ${GENERATED_DIR}/${doc})
  set(committed ${COMMITTED_DIR}/${doc})
  if(NOT EXISTS ${generated})
    message(FATAL_ERROR "${generated} was not generated (build the shardlin-docs target)")
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${generated} ${committed}
                  RESULT_VARIABLE differ)
  if(differ)
    list(APPEND stale ${doc})
  endif()
endforeach()
if(stale)
  message(FATAL_ERROR "docs/generated is stale (${stale} differ from what the ODS "
          "generates): run `cmake --build build --target shardlin-update-docs` "
          "and commit docs/generated")
endif()
message(STATUS "docs/generated matches the ODS (${DOCS})")
