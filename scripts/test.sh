#!/usr/bin/env bash
# The test command: installs what is missing, builds, runs every test (lit,
# unit, end-to-end on threads and MPI, fault injection, the embedding example,
# the benchmark smoke run) and ends with ctest's summary line.
#
#   bash scripts/test.sh                  both suites (what CI runs):
#     1. the normal suite, g++, in build/;
#     2. the sanitized suite, clang-22 with AddressSanitizer, LeakSanitizer and
#        UBSan (any report fails the test) and the libFuzzer smoke runs, in
#        build-asan/ (docs/robustness.md).
#   bash scripts/test.sh --normal         the normal suite only
#   bash scripts/test.sh --sanitized      the sanitized suite only
#
# Other arguments go to ctest (for example -R lit). The last line is ctest's
# summary line: the first failing suite's, or else the last suite's. The exit
# status is non-zero if any suite fails.
# Environment: BUILD_DIR (normal suite), ASAN_BUILD_DIR (sanitized suite),
# JOBS; see scripts/bootstrap.sh.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

suites=(normal sanitized)
ctest_args=()
for a in "$@"; do
  case "$a" in
    --normal) suites=(normal) ;;
    --sanitized) suites=(sanitized) ;;
    *) ctest_args+=("$a") ;;
  esac
done

# Runs one suite in a subshell (bootstrap.sh sets and exports variables);
# prints ctest's summary line last.
run_suite() {
  (
    set -euo pipefail
    if [ "$1" = sanitized ]; then export SHARDLIN_SANITIZED=1; else unset SHARDLIN_SANITIZED; fi
    # The normal suite builds and tests the Python package (python.pytest)
    # with the frontend venv's interpreter: create it first (once per
    # machine, cached outside the clone; docs/python.md).
    if [ "$1" = normal ]; then
      bash "$ROOT/scripts/frontend-venv.sh" >/dev/null ||
        echo "shardlin: no frontend venv; the Python package is not tested" >&2
    fi
    source "$ROOT/scripts/bootstrap.sh"
    cd "$BUILD_DIR"
    LOG="$BUILD_DIR/ctest-output.log"
    status=0
    ctest --output-on-failure -j "$JOBS" "${ctest_args[@]}" 2>&1 | tee "$LOG" || status=$?
    # ctest lists skipped tests (the GPU tests, on a machine without a GPU)
    # after its summary; repeat the summary so that it is the last line.
    summary="$(grep -E '^[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$LOG" | tail -n 1 || true)"
    [ -n "$summary" ] || { summary="no ctest summary (see $LOG)"; status=1; }
    echo "$summary"
    exit "$status"
  )
}

status=0
summaries=()
final=""
for suite in "${suites[@]}"; do
  echo "== shardlin: the $suite suite"
  suite_status=0
  out="$(mktemp)"
  run_suite "$suite" 2>&1 | tee "$out" || suite_status=$?
  line="$(tail -n 1 "$out")"
  rm -f "$out"
  summaries+=("$suite suite: $line (exit status $suite_status)")
  if [ "$suite_status" -ne 0 ] && [ "$status" -eq 0 ]; then
    status=$suite_status
    final="$line"
  fi
  [ "$status" -eq 0 ] && final="$line"
done
if [ ${#suites[@]} -gt 1 ]; then
  echo "== shardlin: summary"
  printf '%s\n' "${summaries[@]}"
fi
echo "$final"
exit "$status"
