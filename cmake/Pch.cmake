# Precompiled headers for the compiler's libraries. Most of the time of each
# of their sources goes to parsing the same upstream MLIR headers; one
# precompiled header (cmake/MlirPch.h), built once with the dialect library's
# flags, serves every library compiled with the same flags. It only changes
# compile times: SHARDLIN_PRECOMPILED_HEADERS=OFF builds the same objects.
# (With ccache, set sloppiness=pch_defines,time_macros for cache hits.)
option(SHARDLIN_PRECOMPILED_HEADERS
       "Precompile the upstream MLIR headers of the compiler's libraries" ON)

function(shardlin_use_precompiled_headers owner)
  if(NOT SHARDLIN_PRECOMPILED_HEADERS)
    return()
  endif()
  target_precompile_headers(${owner} PRIVATE
                            ${PROJECT_SOURCE_DIR}/cmake/MlirPch.h)
  foreach(target IN LISTS ARGN)
    if(TARGET ${target})
      target_precompile_headers(${target} REUSE_FROM ${owner})
    endif()
  endforeach()
endfunction()
