# Included by the root CMakeLists.txt: builds the Python package's extension
# in the project's own build (build/python/shardlin) and adds the ctest
# python.pytest, when an interpreter with nanobind is at hand:
# SHARDLIN_PYTHON if set, else the frontend venv's (scripts/frontend-venv.sh,
# which scripts/test.sh runs first; the venv is cached outside the clone,
# keyed by integration_test/frontends/requirements.txt's hash, which is
# recomputed here as the script does).
if(NOT SHARDLIN_PYTHON)
  file(SHA256 ${PROJECT_SOURCE_DIR}/integration_test/frontends/requirements.txt
       _shardlin_req_hash)
  string(SUBSTRING "${_shardlin_req_hash}" 0 16 _shardlin_req_key)
  if(DEFINED ENV{SHARDLIN_VENV_CACHE})
    set(_shardlin_cache "$ENV{SHARDLIN_VENV_CACHE}")
  else()
    set(_shardlin_cache "$ENV{HOME}/.cache/shardlin")
  endif()
  set(_shardlin_venv "${_shardlin_cache}/frontend-${_shardlin_req_key}")
  if(EXISTS "${_shardlin_venv}/.complete" AND EXISTS "${_shardlin_venv}/bin/python")
    set(SHARDLIN_PYTHON "${_shardlin_venv}/bin/python")
  endif()
endif()
if(NOT SHARDLIN_PYTHON)
  message(STATUS "shardlin: no Python with nanobind (run scripts/frontend-venv.sh "
                 "or set SHARDLIN_PYTHON); the Python package is not built")
  return()
endif()
execute_process(COMMAND "${SHARDLIN_PYTHON}" -c "import nanobind, numpy, ml_dtypes, pytest"
  RESULT_VARIABLE _shardlin_py_ok OUTPUT_QUIET ERROR_QUIET)
if(NOT _shardlin_py_ok EQUAL 0)
  message(STATUS "shardlin: ${SHARDLIN_PYTHON} lacks nanobind, numpy, ml_dtypes "
                 "or pytest; the Python package is not built")
  return()
endif()
set(Python_EXECUTABLE "${SHARDLIN_PYTHON}")
find_package(Python 3.9 COMPONENTS Interpreter Development.Module)
if(NOT Python_Development.Module_FOUND)
  message(STATUS "shardlin: no Python headers for ${SHARDLIN_PYTHON} (python3-dev); "
                 "the Python package is not built")
  return()
endif()
message(STATUS "shardlin: the Python package for ${SHARDLIN_PYTHON}")
add_subdirectory(${CMAKE_CURRENT_LIST_DIR}/.. ${PROJECT_BINARY_DIR}/python)
if(SHARDLIN_BUILD_TESTS)
  # The package's tests, against the extension of this build
  # (docs/python.md, "Tests"); mpirun is passed for the MPI test.
  add_test(NAME python.pytest
    COMMAND ${SHARDLIN_PYTHON} -m pytest -q -p no:cacheprovider
            ${PROJECT_SOURCE_DIR}/python/tests)
  set_tests_properties(python.pytest PROPERTIES TIMEOUT 600
    ENVIRONMENT "PYTHONPATH=${PROJECT_BINARY_DIR}/python;SHARDLIN_MPIEXEC=${MPIEXEC_EXECUTABLE}")
endif()
