#!/usr/bin/env bash
# Installs what is missing (Debian 12 packages) and builds shardlin into
# ${BUILD_DIR:-build}. Sourced by quickstart.sh, test.sh, fuzz.sh and
# bench/run.sh; safe to rerun.
#
# Environment:
#   BUILD_DIR                  build directory (default build/)
#   SHARDLIN_SANITIZED=1       the sanitized build instead: clang-22 with
#                              ASan, LSan and UBSan, the libFuzzer targets and
#                              no CUDA, in ${ASAN_BUILD_DIR:-build-asan}
#                              (docs/robustness.md)
#   JOBS                       build parallelism (default: the number of cores)
#   SHARDLIN_EXTRA_PACKAGES    more Debian packages to install (space-separated)
#   SHARDLIN_CMAKE_ARGS        extra arguments for the first cmake configure
#   SHARDLIN_BUILD_TARGETS     build only these targets (default: everything)
# CC and CXX choose the compilers when BUILD_DIR is configured the first time.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [ "${SHARDLIN_SANITIZED:-0}" = 1 ]; then
  BUILD_DIR="${ASAN_BUILD_DIR:-$ROOT/build-asan}"
  export CC=clang-22 CXX=clang++-22
  SHARDLIN_EXTRA_PACKAGES="${SHARDLIN_EXTRA_PACKAGES:-} clang-22 libclang-rt-22-dev"
  SHARDLIN_CMAKE_ARGS="-DSHARDLIN_ENABLE_SANITIZERS=ON -DSHARDLIN_ENABLE_FUZZERS=ON -DSHARDLIN_ENABLE_CUDA=OFF ${SHARDLIN_CMAKE_ARGS:-}"
fi
BUILD_DIR="${BUILD_DIR:-$ROOT/build}"
JOBS="${JOBS:-$(nproc 2>/dev/null || echo 2)}"

PACKAGES=(cmake ninja-build g++ python3
          libmlir-22-dev mlir-22-tools llvm-22-dev llvm-22-tools
          libopenblas-dev libopenmpi-dev openmpi-bin libgtest-dev
          nlohmann-json3-dev)
# shellcheck disable=SC2206
PACKAGES+=(${SHARDLIN_EXTRA_PACKAGES:-})

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "shardlin: installing ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || {
      echo "shardlin: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
    SUDO="sudo"
  fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -q
  $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  # shellcheck disable=SC2086
  cmake -S "$ROOT" -B "$BUILD_DIR" -G Ninja ${SHARDLIN_CMAKE_ARGS:-}
fi
targets=()
for t in ${SHARDLIN_BUILD_TARGETS:-}; do targets+=(--target "$t"); done
cmake --build "$BUILD_DIR" -j "$JOBS" "${targets[@]}"
