#!/usr/bin/env bash
# signal-when-staged.sh SIGNAL DIR COMMAND...
#
# Runs COMMAND in the background, waits until it has staged an output in DIR
# (a file named *.tmp.*, which exists only between staging and renaming),
# sends it SIGNAL, and prints how it ended ("exit N" or "signal NAME") and
# what DIR then holds, one name a line. Fails if nothing was staged within
# 60 s. For the output policy's tests: a signal that comes while a run is
# blocked writing an in-place output (a FIFO nobody reads) must leave DIR as
# it was. A COMMAND that outlives the signal by 60 s is killed (and shows as
# "signal KILL").
set -u
sig=$1 dir=$2
shift 2
# The signals at their default: a background command of a shell without job
# control ignores SIGINT, and so may everything started from a runner that
# ignores it; the tools keep an ignored signal ignored (as under nohup).
env --default-signal=INT,TERM,HUP,PIPE "$@" &
pid=$!
for _ in $(seq 600); do
  if compgen -G "$dir/*.tmp.*" > /dev/null; then
    break
  fi
  sleep 0.1
done
if ! compgen -G "$dir/*.tmp.*" > /dev/null; then
  echo "nothing was staged in $dir within 60 s"
  kill -KILL "$pid" 2> /dev/null
  exit 1
fi
# Staged, and now blocked on the in-place output: the in-place outputs are
# written before any staged one is renamed.
sleep 0.5
kill "-$sig" "$pid"
# (A watchdog: its output goes nowhere, so that no reader of ours waits
# for its sleep.)
(sleep 60 && kill -KILL "$pid") > /dev/null 2>&1 &
watchdog=$!
wait "$pid"
status=$?
kill "$watchdog" 2> /dev/null
if [ "$status" -gt 128 ]; then
  echo "signal $(kill -l $((status - 128)))"
else
  echo "exit $status"
fi
ls -A "$dir"
