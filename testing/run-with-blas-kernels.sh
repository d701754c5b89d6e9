#!/usr/bin/env bash
# Runs GoogleTest executables once per OpenBLAS kernel set this CPU can
# execute, with OPENBLAS_CORETYPE forced to it (issue 39): the numerical
# tests' bounds must hold whichever kernels OpenBLAS picks, and OpenBLAS
# picks them by the CPU model (an AMD EPYC gets Zen's, an unknown model
# Prescott's), so one machine's run does not show another's.
#
#   run-with-blas-kernels.sh EXE FILTER [EXE FILTER ...]
#
# FILTER is the executable's --gtest_filter. The kernel sets are SkylakeX
# (AVX-512 F, BW, DQ and VL), Haswell and Zen (AVX2 and FMA) and Prescott
# (SSE3), chosen by /proc/cpuinfo's flags: a set the CPU cannot execute is
# skipped with a message (forcing it would end in SIGILL). OPENBLAS_VERBOSE=2
# makes OpenBLAS name the set it loaded, which must be the one asked for.
# The environment's own OPENBLAS_CORETYPE, if any, is replaced.
#
# Exit status: 0 when every run passed, 1 when one failed or OpenBLAS ran
# other kernels than asked, 77 (ctest's SKIP_RETURN_CODE) when the CPU can
# execute none of the sets (not x86-64) or OpenBLAS does not choose its
# kernels at run time (built without DYNAMIC_ARCH).
set -uo pipefail

if [ $# -lt 2 ] || [ $(($# % 2)) -ne 0 ]; then
  echo "usage: $0 EXE FILTER [EXE FILTER ...]" >&2
  exit 2
fi

flags=" $(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null | cut -d: -f2) "
has() {
  local f
  for f in "$@"; do
    [[ "$flags" == *" $f "* ]] || return 1
  done
}

# Each kernel set and the CPU flags its kernels need.
runnable=()
for core in SkylakeX Haswell Zen Prescott; do
  case $core in
    SkylakeX) need="avx512f avx512bw avx512dq avx512vl avx2 fma" ;;
    Haswell | Zen) need="avx2 fma" ;;
    Prescott) need="pni" ;;
  esac
  # shellcheck disable=SC2086
  if has $need; then
    runnable+=("$core")
  else
    echo "skip $core: this CPU lacks some of: $need"
  fi
done
if [ ${#runnable[@]} -eq 0 ]; then
  echo "skip: this CPU can execute none of the x86-64 kernel sets"
  exit 77
fi

args=("$@")
failed=0
for core in "${runnable[@]}"; do
  for ((i = 0; i < ${#args[@]}; i += 2)); do
    exe=${args[i]}
    filter=${args[i + 1]}
    name=$(basename "$exe")
    log=$(mktemp)
    OPENBLAS_CORETYPE=$core OPENBLAS_VERBOSE=2 "$exe" \
      --gtest_filter="$filter" --gtest_brief=1 >"$log" 2>&1
    rc=$?
    loaded=$(grep -m1 -o '^Core: [A-Za-z0-9]*' "$log" | cut -d' ' -f2)
    passed=$(grep -o '^\[  PASSED  \] [0-9]* test' "$log" | grep -o '[0-9]*')
    if [ -z "$loaded" ]; then
      cat "$log"
      rm -f "$log"
      echo "skip: OpenBLAS did not say which kernels it loaded (not a" \
        "DYNAMIC_ARCH build?): OPENBLAS_CORETYPE cannot choose them"
      exit 77
    fi
    if [ "$loaded" != "$core" ]; then
      echo "FAIL $core: $name ran OpenBLAS's $loaded kernels instead"
      failed=1
    elif [ $rc -ne 0 ]; then
      cat "$log"
      echo "FAIL $core: $name --gtest_filter='$filter' (exit $rc)"
      failed=1
    else
      echo "ok $core: $name, ${passed:-0} tests passed"
    fi
    rm -f "$log"
  done
done
exit $failed
