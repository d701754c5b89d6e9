#!/usr/bin/env bash
# Builds shardlin-bench and runs the default sweep (a few minutes on 2 cores):
#
#   bash bench/run.sh                 # default sweep
#   bash bench/run.sh --quick         # smoke run (seconds)
#   bash bench/run.sh --full          # the whole sweep (hours)
#
# Extra arguments go to shardlin-bench. Writes bench/results/$NAME.{txt,json,png}
# (NAME defaults to the mode: default, quick or full). Installs missing build
# packages through scripts/bootstrap.sh; PyTorch and matplotlib are optional
# (BENCH_INSTALL_OPTIONAL=1 installs python3-torch and python3-matplotlib).
# PyTorch 2.x for the DTensor comparison of the blocks section comes from PyPI
# into bench/.venv (bench/torch-venv.sh, up to TORCH_VENV_TIMEOUT s; several
# GB the first time), which shardlin-bench then uses by default; without it
# the PyTorch comparisons print "skipped: ..." and the rest runs.
# Environment: BUILD_DIR (default build/), JOBS (default 2), NAME,
# BENCH_TORCH_VENV=0 (do not create the venv),
# BENCH_WAIT_QUIET / BENCH_MAX_LOAD (wait for a quiet machine, see below).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$ROOT/build}"
JOBS="${JOBS:-2}"

mode=default
torch=1
for a in "$@"; do
  case "$a" in
    --quick) mode=quick; torch=0 ;;
    --full) mode=full ;;
    --no-torch) torch=0 ;;
    --torch) torch=1 ;;
  esac
done
NAME="${NAME:-$mode}"

# Install what is missing and build only shardlin-bench (scripts/bootstrap.sh).
if [ "${BENCH_INSTALL_OPTIONAL:-0}" = 1 ]; then
  SHARDLIN_EXTRA_PACKAGES="${SHARDLIN_EXTRA_PACKAGES:-} python3-matplotlib python3-torch"
fi
SHARDLIN_BUILD_TARGETS=shardlin-bench
source "$ROOT/scripts/bootstrap.sh"

if [ "$torch" = 1 ] && [ "${BENCH_TORCH_VENV:-1}" = 1 ]; then
  bash "$ROOT/bench/torch-venv.sh" >/dev/null ||
    echo "bench: no PyTorch venv (bench/torch-venv.sh failed); the PyTorch comparisons will be skipped"
fi

OUT="$ROOT/bench/results"
mkdir -p "$OUT"
# Timings on a shared 2-core machine are only meaningful when it is quiet:
# wait (up to BENCH_WAIT_QUIET seconds, default 600; 0 = do not wait) for the
# 1-minute load average to drop below BENCH_MAX_LOAD (default 1.5).
wait_s="${BENCH_WAIT_QUIET:-600}"
max_load="${BENCH_MAX_LOAD:-1.5}"
waited=0
while awk -v l="$(cut -d' ' -f1 /proc/loadavg)" -v m="$max_load" 'BEGIN{exit !(l >= m)}' &&
      [ "$waited" -lt "$wait_s" ]; do
  [ "$waited" -eq 0 ] && echo "bench: waiting for load < $max_load (now $(cut -d' ' -f1 /proc/loadavg); up to ${wait_s} s)"
  sleep 10
  waited=$((waited + 10))
done
echo "bench: load before the run: $(cut -d' ' -f1-3 /proc/loadavg)" \
     "(figures are noisy above ~1.5 on 2 cores)"
# pipefail keeps shardlin-bench's exit status (1 on a byte-count mismatch).
"$BUILD_DIR/bin/shardlin-bench" --json="$OUT/$NAME.json" --plot="$OUT/$NAME.png" \
  "$@" | tee "$OUT/$NAME.txt"
