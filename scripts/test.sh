#!/usr/bin/env bash
# The test command: installs what is missing, builds, runs every test (lit,
# unit, end-to-end on threads and MPI, the embedding example) and ends with
# ctest's summary line.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$ROOT/scripts/bootstrap.sh"
cd "$BUILD_DIR"
ctest --output-on-failure -j "$JOBS" "$@"
