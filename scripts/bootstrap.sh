#!/usr/bin/env bash
# Installs what is missing (Debian 12 packages) and builds shardlin into
# ${BUILD_DIR:-build}. Sourced by quickstart.sh and test.sh; safe to rerun.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$ROOT/build}"
JOBS="${JOBS:-$(nproc 2>/dev/null || echo 2)}"

PACKAGES=(cmake ninja-build g++ python3
          libmlir-22-dev mlir-22-tools llvm-22-dev llvm-22-tools
          libopenblas-dev libopenmpi-dev openmpi-bin libgtest-dev)

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
  cmake -S "$ROOT" -B "$BUILD_DIR" -G Ninja ${SHARDLIN_CMAKE_ARGS:-}
fi
cmake --build "$BUILD_DIR" -j "$JOBS"
