#!/usr/bin/env bash
# The test command: installs what is missing, builds, runs every test (lit,
# unit, end-to-end on threads and MPI, the embedding example) and ends with
# ctest's summary line.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$ROOT/scripts/bootstrap.sh"
cd "$BUILD_DIR"
LOG="$BUILD_DIR/ctest-output.log"
status=0
ctest --output-on-failure -j "$JOBS" "$@" 2>&1 | tee "$LOG" || status=$?
# ctest lists skipped tests (the GPU tests, on a machine without a GPU) after
# its summary; repeat the summary so that it is the last line.
grep -E '^[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$LOG" | tail -n 1
exit "$status"
