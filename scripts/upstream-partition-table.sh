#!/usr/bin/env bash
# Runs upstream MLIR's partitioner on the upstream-form cases that the
# importer's tests use (test/Dialect/Shardlin/Inputs/upstream/*.mlir) and
# prints one line per case: what it did, as docs/interop.md's table records
# it. Usage: scripts/upstream-partition-table.sh [MLIR_OPT] [PIPELINE]
#   MLIR_OPT  default /usr/lib/llvm-22/bin/mlir-opt
#   PIPELINE  default builtin.module(func.func(sharding-propagation,shard-partition))
# Outcomes: "partitioned" (exit 0 and output that verifies), "error: <the
# first diagnostic>", or "crash: <signal>" (with the first line of the stack
# dump's reason, if any).
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
mlir_opt=${1:-/usr/lib/llvm-22/bin/mlir-opt}
pipeline=${2:-'builtin.module(func.func(sharding-propagation,shard-partition))'}
printf '%s\n' "$("$mlir_opt" --version | grep -i 'llvm version' | head -1)" \
              "pipeline: --pass-pipeline='$pipeline'"
for f in "$here"/test/Dialect/Shardlin/Inputs/upstream/*.mlir; do
  name=$(basename "$f" .mlir)
  out=$(timeout 60 "$mlir_opt" --pass-pipeline="$pipeline" "$f" 2>&1 >/dev/null)
  rc=$?
  if [ $rc -eq 0 ]; then
    outcome="partitioned"
  elif [ $rc -gt 128 ] || [ $rc -eq 124 ]; then
    if [ $rc -eq 124 ]; then sig="timeout"; else sig="signal $((rc - 128))"; fi
    # The innermost frame of the shard dialect or its partitioner, else
    # the innermost MLIR frame.
    frames=$(printf '%s\n' "$out" | grep -E '^ *#[0-9]+ 0x' |
             grep -oE ' (mlir|llvm)::[A-Za-z0-9_:<>~]+\(' | tr -d ' (')
    where=$(printf '%s\n' "$frames" | grep -iE 'shard|partition' | head -1)
    [ -n "$where" ] || where=$(printf '%s\n' "$frames" | grep '^mlir::' | head -1)
    outcome="crash: $sig${where:+ in $where}"
  else
    outcome="error: $(printf '%s\n' "$out" | grep -m1 'error:' | sed 's/^.*error: //')"
  fi
  printf '%s\t%s\n' "$name" "$outcome"
done
