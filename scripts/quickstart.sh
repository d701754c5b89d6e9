#!/usr/bin/env bash
# The main job on a built-in example: installs what is missing, builds, lowers
# examples/quickstart/linear.mlir (a row-wise sharded linear, K = 19 split
# unevenly over 4 ranks in the order [2, 3, 0, 1]), runs it on 4 in-process
# ranks, checks every rank's output against a dense float64 reference and
# prints rank 0's result.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# Only what the README's commands need: the three tools (scripts/test.sh
# builds everything, the tests included).
export SHARDLIN_BUILD_TARGETS="${SHARDLIN_BUILD_TARGETS:-shardlin-opt shardlin-run shardlin-exec}"
source "$ROOT/scripts/bootstrap.sh"

EX="$ROOT/examples/quickstart/linear.mlir"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
BIN="$BUILD_DIR/bin"

echo "== input: $EX"
grep -v '^//' "$EX"
echo "== lowered: shardlin-opt linear.mlir --lower-sharded-linear=explain=true"
echo "   (the cost model picks a strategy per linear; the remark says why)"
"$BIN/shardlin-opt" "$EX" --lower-sharded-linear=explain=true

echo "== running on 4 ranks (threads backend)"
python3 "$ROOT/testing/tools/npytool.py" gen-linear --n 11 --k 19 --batch-shape 5 \
  --world-size 4 --bias --seed 7 --out-dir "$WORK"
"$BIN/shardlin-run" "$EX" --world-size=4 \
  --arg="$WORK/x.{rank}.npy" --arg="$WORK/w.npy" --arg="$WORK/b.npy" \
  --out="$WORK/y.{rank}.npy"
echo "== checking every rank against the dense float64 reference"
python3 "$ROOT/testing/tools/npytool.py" check --dir "$WORK" --out "$WORK/y.{rank}.npy" \
  --world-size 4 --dtype f32
echo "== rank 0's result y_0 = x_0 A^T + b:"
python3 "$ROOT/testing/tools/npytool.py" show "$WORK/y.0.npy"
echo "== next: the README's commands, from $ROOT with the tools on PATH:"
echo "   export PATH=\"$BIN:\$PATH\""
