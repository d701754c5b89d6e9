#!/usr/bin/env python3
"""Runs a suite written for the GPU machine (scripts/make-gpu-suite.sh's
layout: DIR/cases.txt, one directory per case) on the threads backend, as
scripts/gpu-check.sh --cpu-selftest does, for the cases whose fourth field is
"args" (the blocks of shardlin-write-block-suite): shardlin-exec with the
case's --arg files, then npytool.py check with the case's bound.

  run_suite.py --suite DIR --npytool PATH [--exec shardlin-exec]

Prints "ok: N cases" or the first failure (exit 1).
"""
import argparse
import os
import subprocess
import sys
import tempfile


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--suite", required=True)
    p.add_argument("--npytool", required=True)
    p.add_argument("--exec", default="shardlin-exec")
    a = p.parse_args()
    cases = 0
    with open(os.path.join(a.suite, "cases.txt")) as f, tempfile.TemporaryDirectory() as out:
        for line in f:
            fields = line.split()
            if len(fields) != 4 or fields[3] != "args":
                continue
            name, w, dtype, _ = fields
            d = os.path.join(a.suite, name)
            with open(os.path.join(d, "args")) as af:
                args = ["--arg=" + os.path.join(d, x.strip()) for x in af if x.strip()]
            with open(os.path.join(d, "bound")) as bf:
                bound = bf.read().strip()
            y = os.path.join(out, name + ".y.{rank}.npy")
            run = subprocess.run([a.exec, os.path.join(d, "program.prog"), "--backend=threads",
                                  "--world-size=" + w, "--timeout=30", *args, "--out=" + y],
                                 capture_output=True, text=True)
            if run.returncode != 0:
                print("%s: shardlin-exec failed: %s" % (name, run.stderr.strip()))
                return 1
            check = subprocess.run([sys.executable, a.npytool, "check", "--dir", d, "--out", y,
                                    "--world-size", w, "--dtype", dtype, "--bound", bound],
                                   capture_output=True, text=True)
            if check.returncode != 0:
                print("%s: %s" % (name, check.stdout.strip() or check.stderr.strip()))
                return 1
            cases += 1
    print("ok: %d cases" % cases)
    return 0


if __name__ == "__main__":
    sys.exit(main())
