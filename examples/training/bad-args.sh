#!/bin/sh
# training-example refuses a number of steps that is not a whole number in
# [1, 100000], an unknown backend and extra arguments: a message and exit
# status 2, before any training (ctest example.training.bad-args).
# Usage: bad-args.sh TRAINING-EXAMPLE
exe="$1"
check() {
  expect="$1"
  shift
  out=$("$exe" "$@" 2>&1)
  rc=$?
  if [ "$rc" -ne 2 ]; then
    echo "FAIL: training-example $* exited $rc, not 2: $out"
    exit 1
  fi
  case "$out" in
    *"$expect"*) ;;
    *) echo "FAIL: training-example $*: no '$expect' in: $out"; exit 1 ;;
  esac
}
for steps in abc -5 0 99999999999999999999 100001 12abc ''; do
  check "the number of steps must be a whole number from 1 to 100000, not '$steps'" threads "$steps"
done
check "unknown backend 'thread' (threads or mpi)" thread 4
check "too many arguments: 'extra'" threads 4 extra
echo "ok: every bad argument refused"
