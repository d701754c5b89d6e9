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
  DESTINATION ${SHARDLIN_CMAKE_DIR})
