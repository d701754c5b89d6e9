#!/usr/bin/env bash
# Long fuzz runs (docs/robustness.md):
#
#   bash scripts/fuzz.sh TARGET SECONDS [extra libFuzzer flags...]
#
# TARGET is mlir, npy or program. Builds build-asan/ (the sanitized suite's
# build, as scripts/test.sh --sanitized configures it: clang-22 with
# libFuzzer, ASan and UBSan; installs clang-22 and libclang-rt-22-dev if they
# are missing), then fuzzes for SECONDS, starting from the seed corpus
# fuzz/corpus/TARGET. Inputs that find new coverage collect in
# build-asan/fuzz-work/TARGET/corpus; a crash is written to
# build-asan/fuzz-work/TARGET/crash-* and stops the run with a non-zero exit.
# The last lines are libFuzzer's final stats (executions, peak RSS); the
# coverage is the "cov:" of the last "#N" status line, shown just above.
#
# Environment: ASAN_BUILD_DIR (default build-asan), JOBS (build parallelism).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [ $# -lt 2 ]; then
  echo "usage: $0 mlir|npy|program SECONDS [libFuzzer flags...]" >&2
  exit 2
fi
TARGET="$1"
SECONDS_TO_RUN="$2"
shift 2
case "$TARGET" in
  mlir|npy|program) ;;
  *) echo "fuzz.sh: unknown target '$TARGET' (mlir, npy or program)" >&2; exit 2 ;;
esac
# Install what is missing and build the target (scripts/bootstrap.sh).
SHARDLIN_SANITIZED=1
SHARDLIN_BUILD_TARGETS="shardlin-fuzz-$TARGET"
source "$ROOT/scripts/bootstrap.sh"

WORK="$BUILD_DIR/fuzz-work/$TARGET"
mkdir -p "$WORK/corpus"
DICT=()
[ -f "$ROOT/fuzz/$TARGET.dict" ] && DICT=("-dict=$ROOT/fuzz/$TARGET.dict")
cd "$WORK"
exec "$BUILD_DIR/bin/shardlin-fuzz-$TARGET" \
  -max_total_time="$SECONDS_TO_RUN" -rss_limit_mb=2048 -malloc_limit_mb=1024 \
  -timeout=60 -print_final_stats=1 \
  -artifact_prefix="$WORK/" "${DICT[@]}" "$@" \
  "$WORK/corpus" "$ROOT/fuzz/corpus/$TARGET"
