#!/usr/bin/env bash
# Runs one fault scenario and checks how it ended (ctest's fault.* tests):
#
#   run-fault.sh [--max-seconds S] [--expect-rc N|nonzero] [--expect REGEX]...
#                [--expect-absent PATH]... [--expect-present PATH]...
#                [--clean DIR]... -- COMMAND...
#
# Checks that COMMAND exits with a non-zero status (or exactly N), within S
# seconds (default 10; it is killed at 3*S + 10 s, and ctest's TIMEOUT guards
# this script too), that its output (stdout and stderr together) matches
# every --expect extended regex, and that no --expect-absent path exists
# afterwards (no output written as if it were a result) and every
# --expect-present path does (for the runs that must succeed). --clean removes a
# directory before the run. On failure it prints the output.
set -u
max=10
rc_want=nonzero
expects=()
absent=()
present=()
while [ $# -gt 0 ]; do
  case "$1" in
    --max-seconds) max="$2"; shift 2 ;;
    --expect-rc) rc_want="$2"; shift 2 ;;
    --expect) expects+=("$2"); shift 2 ;;
    --expect-absent) absent+=("$2"); shift 2 ;;
    --expect-present) present+=("$2"); shift 2 ;;
    --clean) rm -rf "$2"; shift 2 ;;
    --) shift; break ;;
    *) echo "run-fault.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
[ $# -gt 0 ] || { echo "run-fault.sh: no command" >&2; exit 2; }

out="$(mktemp)"
trap 'rm -f "$out"' EXIT
start=$(date +%s%N)
timeout -k 5 "$(awk -v m="$max" 'BEGIN { print 3 * m + 10 }')" "$@" >"$out" 2>&1
rc=$?
end=$(date +%s%N)
elapsed=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')

ok=1
why=()
if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
  ok=0; why+=("hung: killed after $(awk -v m="$max" 'BEGIN { print 3 * m + 10 }') s")
elif [ "$rc_want" = nonzero ]; then
  [ "$rc" -ne 0 ] || { ok=0; why+=("exit status 0, expected a failure"); }
else
  [ "$rc" -eq "$rc_want" ] || { ok=0; why+=("exit status $rc, expected $rc_want"); }
fi
if ! awk -v e="$elapsed" -v m="$max" 'BEGIN { exit !(e < m) }'; then
  ok=0; why+=("took ${elapsed} s, limit ${max} s")
fi
for re in "${expects[@]+"${expects[@]}"}"; do
  grep -Eq -- "$re" "$out" || { ok=0; why+=("output does not match: $re"); }
done
for p in "${absent[@]+"${absent[@]}"}"; do
  [ ! -e "$p" ] || { ok=0; why+=("exists but must not: $p"); }
done

for p in "${present[@]+"${present[@]}"}"; do
  [ -e "$p" ] || { ok=0; why+=("missing: $p"); }
done

echo "run-fault.sh: exit status $rc after ${elapsed} s (limit ${max} s)"
if [ "$ok" = 1 ]; then
  echo "run-fault.sh: ok"
  exit 0
fi
for w in "${why[@]}"; do echo "run-fault.sh: FAIL: $w"; done
echo "---- output of: $* ----"
cat "$out"
exit 1
