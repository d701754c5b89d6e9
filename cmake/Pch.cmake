# Precompiled headers for the compiler's libraries and tools. Most of the
# time of each of their sources goes to parsing the same upstream MLIR
# headers; one precompiled header (cmake/MlirPch.h), built once, serves every
# target compiled with the same flags. It only changes compile times:
# SHARDLIN_PRECOMPILED_HEADERS=OFF builds the same objects.
# (With ccache, set sloppiness=pch_defines,time_macros for cache hits.)
option(SHARDLIN_PRECOMPILED_HEADERS
       "Precompile the upstream MLIR headers of the compiler's libraries" ON)

# shardlin_use_precompiled_headers(TARGETS...): the targets (compiled with
# LLVM's flags) share one precompiled cmake/MlirPch.h, owned by an object
# library of its own (cmake/MlirPch.cpp) that depends on nothing. g++ takes
# a precompiled header only under the flags it was built with, so an
# executable among the targets is compiled as position-independent code
# (-fPIC, which links into the default PIE executable) rather than -fPIE.
function(shardlin_use_precompiled_headers)
  if(NOT SHARDLIN_PRECOMPILED_HEADERS)
    return()
  endif()
  if(NOT TARGET ShardlinMlirPch)
    add_library(ShardlinMlirPch OBJECT ${PROJECT_SOURCE_DIR}/cmake/MlirPch.cpp)
    llvm_update_compile_flags(ShardlinMlirPch)
    target_precompile_headers(ShardlinMlirPch PRIVATE
                              ${PROJECT_SOURCE_DIR}/cmake/MlirPch.h)
  endif()
  foreach(target IN LISTS ARGN)
    get_target_property(type ${target} TYPE)
    if(type STREQUAL "EXECUTABLE")
      set_target_properties(${target} PROPERTIES POSITION_INDEPENDENT_CODE OFF)
    endif()
    target_precompile_headers(${target} REUSE_FROM ShardlinMlirPch)
  endforeach()
endfunction()
