# The installed CMake package, find_package(Shardlin). It has the runtime's
# targets in every build (runtime/CMakeLists.txt: Shardlin::Runtime,
# Shardlin::RuntimeC, Shardlin::RuntimeTooling, Shardlin::ChunkLayout, the
# per-folder libraries and, with CUDA, Shardlin::RuntimeCuda) and needs no
# MLIR for them; the compiler's targets (cmake/CMakeLists.txt, component
# Compiler) only when the compiler was built, and only they bring MLIR in.
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/ShardlinConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cmake/ShardlinConfig.cmake
  INSTALL_DESTINATION ${SHARDLIN_CMAKE_DIR})
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/cmake/ShardlinConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/cmake/ShardlinConfig.cmake
              ${PROJECT_BINARY_DIR}/cmake/ShardlinConfigVersion.cmake
  DESTINATION ${SHARDLIN_CMAKE_DIR} COMPONENT Runtime)

if(SHARDLIN_BUILD_TESTS)
  # Installs the Runtime component alone into a scratch prefix (what a
  # runtime-only build installs) and builds examples/c-api and
  # examples/runtime-only against it with MLIR and LLVM made unfindable,
  # as on a GPU node that has neither; checks that the prefix holds nothing
  # of the compiler and that find_package(Shardlin COMPONENTS Compiler)
  # fails there.
  add_test(NAME example.runtime-only-install
    COMMAND ${CMAKE_COMMAND}
      -DSHARDLIN_BUILD_DIR=${PROJECT_BINARY_DIR}
      -DSHARDLIN_SOURCE_DIR=${PROJECT_SOURCE_DIR}
      -DSCRATCH=${PROJECT_BINARY_DIR}/example-runtime-only
      -P ${PROJECT_SOURCE_DIR}/cmake/TestRuntimeOnly.cmake)
  set_tests_properties(example.runtime-only-install PROPERTIES TIMEOUT 600)
endif()
