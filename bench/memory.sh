#!/usr/bin/env bash
# Peak resident memory per process of one linear layer run with
# shardlin-exec, against the theoretical minimum, for docs/performance.md
# ("Memory per rank"). Prints a Markdown table.
#
# usage: bench/memory.sh [--build-dir DIR] [--batch B] [--n N] [--k K]
#                        [--worlds "2 4"] [--backends "threads mpi"]
#                        [--dims "0 1"]
#
# For each backend, world size W and split dim of the weight, it compiles
# y = x A^T + b (f32, x: B x K per rank, A: N x K split on that dim, b: N)
# with shardlin-run --emit-program (the strategy the cost model picks) and
# runs it with shardlin-exec under GNU time -v: one process for threads (all
# W ranks), one per rank under mpirun (each rank's own figure; the table
# shows the largest). Inputs are one global weight file that every rank
# reads its chunk of, and one x file per rank.
#
# The minimum is what the plan's buffers need: every value of the program
# (text form: "value ID TYPE RANK DIMS...", local shapes) once, except the
# results of view instructions (local_shard, reshape), i.e. the inputs, the
# weight shard, the collectives' buffers (gathered activations or weights,
# partial products) and the outputs. Per process: one rank's for mpi, W
# ranks' for threads. The target is peak <= 1.5 x minimum + 40 MB.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${BUILD_DIR:-$ROOT/build}"
B=512 N=2048 K=2048
WORLDS="2 4"
BACKENDS="threads mpi"
DIMS="0 1"
die() { echo "memory.sh: error: $*" >&2; exit 1; }
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) BUILD="${2:?}"; shift 2 ;;
    --batch) B="${2:?}"; shift 2 ;;
    --n) N="${2:?}"; shift 2 ;;
    --k) K="${2:?}"; shift 2 ;;
    --worlds) WORLDS="${2:?}"; shift 2 ;;
    --backends) BACKENDS="${2:?}"; shift 2 ;;
    --dims) DIMS="${2:?}"; shift 2 ;;
    -h|--help) sed -n '2,24p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done
RUN="$BUILD/bin/shardlin-run"
EXEC="$BUILD/bin/shardlin-exec"
[ -x "$RUN" ] && [ -x "$EXEC" ] || die "build shardlin-run and shardlin-exec in $BUILD first"
[ -x /usr/bin/time ] || die "needs GNU time (/usr/bin/time)"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

maxw=0
for w in $WORLDS; do [ "$w" -gt "$maxw" ] && maxw=$w; done
# Random non-zero inputs (the values do not change the memory).
python3 - "$ROOT/testing/tools" "$WORK" "$B" "$N" "$K" "$maxw" <<'PY'
import random, sys
sys.path.insert(0, sys.argv[1])
import npytool
work, b, n, k, w = sys.argv[2], *map(int, sys.argv[3:])
rng = random.Random(1)
vals = lambda count: [rng.uniform(0.5, 1.0) for _ in range(count)]
npytool.write_npy(work + "/w.npy", "<f4", (n, k), vals(n * k))
npytool.write_npy(work + "/b.npy", "<f4", (n,), vals(n))
for r in range(w):
    npytool.write_npy("%s/x.%d.npy" % (work, r), "<f4", (b, k), vals(b * k))
PY

# minimum PROGRAM: MiB of the program's non-view values.
minimum() {
  python3 - "$1" <<'PY'
import sys
views = set()
values = {}
for line in open(sys.argv[1]):
    f = line.split()
    if f and f[0] == "value":
        size = {"f16": 2, "bf16": 2, "f32": 4, "f64": 8}[f[2]]
        for d in f[4:4 + int(f[3])]:
            size *= int(d)
        values[f[1]] = size
    elif f and f[0] == "instr" and f[1] in ("local_shard", "reshape"):
        views.add(f[f.index("result") + 1])
print("%.1f" % (sum(v for i, v in values.items() if i not in views) / 2**20))
PY
}
strategy() { grep -o "strategy [a-z-]*" "$1" | sort -u | awk '{print $2}' | paste -sd, -; }
# kb FILE: the "Maximum resident set size" of a time -v report, in KiB.
kb() { sed -n 's/.*Maximum resident set size (kbytes): //p' "$1"; }

echo "| backend | W | weight split | strategy | peak RSS / process (MiB) | minimum / process (MiB) | ratio | target: 1.5 x min + 40 MB (MiB) | met |"
echo "|---|---|---|---|---|---|---|---|---|"
for dim in $DIMS; do
  for w in $WORLDS; do
    p=""
    for ((i = 0; i < w; ++i)); do p+="${p:+, }$i"; done
    sh="!shardlin.sharded<tensor<${N}x${K}xf32>, #shardlin.chunk<dim = $dim, placements = [$p]>>"
    cat >"$WORK/l.mlir" <<MLIR
func.func @main(%x: tensor<${B}x${K}xf32>, %w: $sh, %b: tensor<${N}xf32>) -> tensor<${B}x${N}xf32> {
  %y = shardlin.linear %x, %w, %b : (tensor<${B}x${K}xf32>, $sh, tensor<${N}xf32>) -> tensor<${B}x${N}xf32>
  return %y : tensor<${B}x${N}xf32>
}
MLIR
    prog="$WORK/l.$dim.$w.prog"
    "$RUN" "$WORK/l.mlir" --world-size="$w" --emit-program="$prog"
    rank_min=$(minimum "$prog")
    strat=$(strategy "$prog")
    args=(--arg="$WORK/x.{rank}.npy" --arg="$WORK/w.npy" --arg="$WORK/b.npy"
          --out="$WORK/y.{rank}.npy")
    for backend in $BACKENDS; do
      rm -f "$WORK"/time.* "$WORK"/y.*
      if [ "$backend" = threads ]; then
        /usr/bin/time -v -o "$WORK/time.0" "$EXEC" "$prog" --world-size="$w" \
          --backend=threads "${args[@]}"
        peak=$(kb "$WORK/time.0")
        min=$(echo "$rank_min * $w" | bc -l)
      else
        mpirun --allow-run-as-root --oversubscribe -np "$w" sh -c \
          '/usr/bin/time -v -o "$0/time.$OMPI_COMM_WORLD_RANK" "$@"' "$WORK" \
          "$EXEC" "$prog" --world-size="$w" --backend=mpi "${args[@]}"
        peak=$(for f in "$WORK"/time.*; do kb "$f"; done | sort -n | tail -1)
        min=$rank_min
      fi
      peak_mib=$(echo "$peak / 1024" | bc -l)
      target=$(echo "1.5 * $min + 40 * 1000000 / 1048576" | bc -l)
      met=$(echo "$peak_mib <= $target" | bc -l)
      printf "| %s | %d | dim %d | %s | %.1f | %.1f | %.2f | %.1f | %s |\n" \
        "$backend" "$w" "$dim" "$strat" "$peak_mib" "$min" \
        "$(echo "$peak_mib / $min" | bc -l)" "$target" \
        "$([ "$met" = 1 ] && echo yes || echo no)"
    done
  done
done
