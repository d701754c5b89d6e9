#!/usr/bin/env bash
# Writes what a shardlin-opt makes of every .mlir file of the repository's
# test corpus (test/, examples/, integration_test/, fuzz/ seeds), under the
# pipelines that change programs: the lowering under each strategy, the
# backward generator followed by the lowering, and the native path to LLVM.
# One file per input and pipeline (stdout, then stderr and the exit status),
# so that two builds can be compared with `diff -r`: a refactoring that must
# not change behaviour shows no difference.
#
#   bash scripts/lowering-corpus.sh BUILD/bin/shardlin-opt OUT_DIR
#   diff -r OUT_BEFORE OUT_AFTER
#
# Spellings common to every version are used (--lower-sharded-linear, the
# documented alias of --shardlin-lower-sharded-linear).
set -uo pipefail
OPT="${1:?usage: lowering-corpus.sh SHARDLIN_OPT OUT_DIR}"
OUT="${2:?usage: lowering-corpus.sh SHARDLIN_OPT OUT_DIR}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mkdir -p "$OUT"
pipelines=(
  "auto|--lower-sharded-linear"
  "activations|--lower-sharded-linear=strategy=activations"
  "gather-weight|--lower-sharded-linear=strategy=gather-weight"
  "explain|--lower-sharded-linear=explain=true"
  "backward|--shardlin-generate-backward --lower-sharded-linear"
  "llvm|--shardlin-lower-to-llvm"
)
count=0
while IFS= read -r -d '' f; do
  rel="${f#"$ROOT"/}"
  for p in "${pipelines[@]}"; do
    name="${p%%|*}"
    # shellcheck disable=SC2086
    set -- ${p#*|}
    dest="$OUT/${rel//\//__}.$name"
    {
      # One thread: upstream passes that run on functions in parallel may
      # otherwise emit module-level globals in either order.
      timeout 60 "$OPT" --mlir-disable-threading --split-input-file "$f" "$@" \
        2>"$dest.stderr"
      echo "exit status: $?"
      cat "$dest.stderr"
    } >"$dest" 2>&1
    rm -f "$dest.stderr"
    count=$((count + 1))
  done
done < <(find "$ROOT/test" "$ROOT/examples" "$ROOT/integration_test" \
           "$ROOT/fuzz" -name '*.mlir' -print0 | sort -z)
echo "lowering-corpus: $count outputs in $OUT"
