#!/usr/bin/env python3
"""Runs a suite written for the GPU machine (scripts/make-gpu-suite.sh's
layout: DIR/cases.txt, one directory per case) on the threads backend, as
scripts/gpu-check.sh --cpu-selftest does, for the cases whose fourth field is
"args" (the blocks of shardlin-write-block-suite): shardlin-exec with the
case's --arg files, then npytool.py check with the case's bound; and "grad"
(the gradients of shardlin-write-grad-suite): the saving forward, if the
case has one, then the backward with the saved values, then npytool.py check
of every gradient (gI/) with the case's bound.

  run_suite.py --suite DIR --npytool PATH [--exec shardlin-exec]
               [--exec-flag=FLAG ...] [--count-pipelined]

--exec-flag passes FLAG to every shardlin-exec (e.g. --overlap-chunks=3);
--count-pipelined runs them with --verbose and counts the blocks they say
they pipelined.

Prints "ok: N cases" (and "pipelined: P blocks") or the first failure
(exit 1).
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile


def exec_program(a, program, w, args, outs):
    run = subprocess.run([a.exec, program, "--backend=threads", "--world-size=" + w,
                          "--timeout=30", *["--arg=" + x for x in args],
                          *["--out=" + x for x in outs], *a.exec_flag,
                          *(["--verbose"] if a.count_pipelined else [])],
                         capture_output=True, text=True)
    if run.returncode == 0:
        a.pipelined += len(re.findall(r"pipelined in \d+ row chunks", run.stderr))
        return ""
    return run.stderr.strip()


def run_grad(a, name, w, dtype, out):
    """One gradient case; "" or what failed."""
    d = os.path.join(a.suite, name)
    with open(os.path.join(d, "args")) as af:
        args = [os.path.join(d, x.strip()) for x in af if x.strip()]
    with open(os.path.join(d, "bound")) as bf:
        bound = bf.read().strip()
    if os.path.exists(os.path.join(d, "saving.prog")):
        with open(os.path.join(d, "saved")) as sf:
            saved = int(sf.read())
        forward_args = args[:-1]  # the saving forward takes @main's
        outs = [os.path.join(out, name + ".y.{rank}.npy")]
        outs += [os.path.join(out, "%s.s%d.{rank}.npy" % (name, i)) for i in range(saved)]
        error = exec_program(a, os.path.join(d, "saving.prog"), w, forward_args, outs)
        if error:
            return "%s: the saving forward failed: %s" % (name, error)
        args += outs[1:]
    gradients = len([g for g in os.listdir(d) if re.fullmatch(r"g\d+", g)])
    outs = [os.path.join(out, "%s.g%d.{rank}.npy" % (name, i)) for i in range(gradients)]
    error = exec_program(a, os.path.join(d, "backward.prog"), w, args, outs)
    if error:
        return "%s: the backward failed: %s" % (name, error)
    for i, g in enumerate(outs):
        check = subprocess.run([sys.executable, a.npytool, "check", "--dir",
                                os.path.join(d, "g%d" % i), "--out", g, "--world-size", w,
                                "--dtype", dtype, "--bound", bound],
                               capture_output=True, text=True)
        if check.returncode != 0:
            return "%s: gradient %d: %s" % (name, i, check.stdout.strip() or check.stderr.strip())
    return ""


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--suite", required=True)
    p.add_argument("--npytool", required=True)
    p.add_argument("--exec", default="shardlin-exec")
    p.add_argument("--exec-flag", action="append", default=[])
    p.add_argument("--count-pipelined", action="store_true")
    a = p.parse_args()
    a.pipelined = 0
    cases = 0
    with open(os.path.join(a.suite, "cases.txt")) as f, tempfile.TemporaryDirectory() as out:
        for line in f:
            fields = line.split()
            if len(fields) == 4 and fields[3] == "grad":
                error = run_grad(a, fields[0], fields[1], fields[2], out)
                if error:
                    print(error)
                    return 1
                cases += 1
                continue
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
                                  "--world-size=" + w, "--timeout=30", *args, "--out=" + y,
                                  *a.exec_flag, *(["--verbose"] if a.count_pipelined else [])],
                                 capture_output=True, text=True)
            if run.returncode != 0:
                print("%s: shardlin-exec failed: %s" % (name, run.stderr.strip()))
                return 1
            a.pipelined += len(re.findall(r"pipelined in \d+ row chunks", run.stderr))
            check = subprocess.run([sys.executable, a.npytool, "check", "--dir", d, "--out", y,
                                    "--world-size", w, "--dtype", dtype, "--bound", bound],
                                   capture_output=True, text=True)
            if check.returncode != 0:
                print("%s: %s" % (name, check.stdout.strip() or check.stderr.strip()))
                return 1
            cases += 1
    print("ok: %d cases" % cases)
    if a.count_pipelined:
        print("pipelined: %d blocks" % a.pipelined)
    return 0


if __name__ == "__main__":
    sys.exit(main())
