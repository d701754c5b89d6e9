#!/usr/bin/env python3
"""Runs one module of the real-frontend corpus (export.py) and checks every
rank's output against the float64 reference. Python's standard library only.

  run_case.py --bin DIR --case NAME --backend threads|jit|mpi [--work DIR]
  run_case.py --bin DIR --case NAME --backend externalized [--work DIR]
  run_case.py --bin DIR --placements NAME1 NAME2 ...

threads, jit and mpi run `shardlin-run` on the module as exported (its
parameters are constants in it; its only argument is x). A replicated result
is written by every rank (`{rank}`) and each copy is checked; a split result
is assembled from every rank's chunk and checked whole.

externalized moves the module's parameters into a safetensors file
(`shardlin-opt --shardlin-externalize-parameters`), runs that module with
`--params`, and requires its output to equal the inline run's bit for bit.

--placements lowers each module (`--lower-sharded-linear`) and requires the
same collectives in each: the same plan stated at different places.

The bound: an f32 output's largest error, relative to the reference's largest
magnitude, stays under 1e-5. A bf16 or f16 output is held to its rounding:
the error of PyTorch's own run in that dtype (NAME.torch.npy) times 4, and at
least 4 units of the dtype's rounding (2^-8 for bf16, 2^-11 for f16).
"""
import argparse
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus")
sys.path.insert(0, os.path.join(HERE, "..", "..", "testing", "tools"))
import npytool  # noqa: E402

UNIT = {"bf16": 2.0 ** -8, "f16": 2.0 ** -11}
COLLECTIVES = ("all_gather", "reduce_scatter", "all_to_all", "all_reduce",
               "local_chunk")


def manifest():
    with open(os.path.join(CORPUS, "cases.json")) as f:
        return json.load(f)["cases"]


def run(cmd, **kw):
    print("+ " + " ".join(cmd), flush=True)
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, **kw)
    sys.stdout.write(p.stdout)
    if p.returncode != 0:
        raise SystemExit(f"FAIL: exit status {p.returncode}")
    return p.stdout


def max_rel_error(values, ref):
    scale = max(abs(r) for r in ref) or 1.0
    return max(abs(v - r) for v, r in zip(values, ref)) / scale


def bound(name, meta):
    if meta["dtype"] == "f32":
        return 1e-5
    _, _, ref = npytool.read_npy(os.path.join(CORPUS, name + ".ref.npy"))
    _, _, torch = npytool.read_npy(os.path.join(CORPUS, name + ".torch.npy"))
    return max(4 * max_rel_error(torch, ref), 4 * UNIT[meta["dtype"]])


def check_outputs(name, meta, paths):
    _, shape, ref = npytool.read_npy(os.path.join(CORPUS, name + ".ref.npy"))
    limit = bound(name, meta)
    for path in paths:
        descr, got_shape, got = npytool.read_npy(path)
        if tuple(got_shape) != tuple(shape):
            raise SystemExit(f"FAIL: {path} has shape {got_shape}, the "
                             f"reference {shape}")
        if not npytool.descr_matches(descr, meta["dtype"]):
            raise SystemExit(f"FAIL: {path} holds {descr}, not {meta['dtype']}")
        err = max_rel_error(got, ref)
        print(f"{os.path.basename(path)}: max error / max |ref| = {err:.3g} "
              f"(bound {limit:.3g})")
        if not err <= limit:
            raise SystemExit(f"FAIL: {path} is off the float64 reference")


def outputs(work, meta):
    """The --out flag and the files it writes."""
    w = meta["world_size"]
    if meta["act"] == "sequence":
        return "--out=" + os.path.join(work, "y.npy"), [os.path.join(work, "y.npy")]
    pattern = os.path.join(work, "y.{rank}.npy")
    return "--out=" + pattern, [pattern.replace("{rank}", str(r)) for r in range(w)]


def run_module(args, module, meta, work, extra=()):
    out_flag, paths = outputs(work, meta)
    for p in paths:
        if os.path.exists(p):
            os.remove(p)
    x = os.path.join(CORPUS, args.case + ".x.npy")
    cmd = [os.path.join(args.bin, "shardlin-run"), module, "--arg=" + x, out_flag]
    cmd += list(extra)
    if args.backend == "jit":
        cmd.append("--jit")
    if args.backend == "mpi":
        cmd = [args.mpirun, "--allow-run-as-root", "--oversubscribe", "-np",
               str(meta["world_size"])] + cmd + ["--backend=mpi"]
    run(cmd)
    return paths


def case(args):
    meta = manifest()[args.case]
    work = os.path.join(args.work, args.case + "." + args.backend)
    os.makedirs(work, exist_ok=True)
    module = os.path.join(CORPUS, args.case + ".mlir")
    if args.backend != "externalized":
        check_outputs(args.case, meta, run_module(args, module, meta, work))
        print(f"PASS {args.case} on {args.backend}")
        return
    inline = run_module(args, module, meta, os.path.join(work, "inline"))
    params = os.path.join(work, "params.safetensors")
    ext = os.path.join(work, "externalized.mlir")
    run([os.path.join(args.bin, "shardlin-opt"), module,
         f"--shardlin-externalize-parameters=file={params}", "-o", ext])
    outs = run_module(args, ext, meta, os.path.join(work, "ext"),
                      ["--params=" + params])
    check_outputs(args.case, meta, outs)
    for a, b in zip(inline, outs):
        with open(a, "rb") as fa, open(b, "rb") as fb:
            if fa.read() != fb.read():
                raise SystemExit(f"FAIL: {b} differs from the inline run {a}")
    print(f"PASS {args.case}: externalized == inline, bit for bit")


def placements(args):
    counts = {}
    for name in args.placements:
        text = run([os.path.join(args.bin, "shardlin-opt"),
                    os.path.join(CORPUS, name + ".mlir"),
                    "--lower-sharded-linear"])
        counts[name] = {c: len(re.findall(r"\bshardlin\." + c + r"\b", text))
                        for c in COLLECTIVES}
        print(f"{name}: {counts[name]}")
    first = counts[args.placements[0]]
    if any(c != first for c in counts.values()):
        raise SystemExit("FAIL: the plan stated at different places gives "
                         "different programs")
    print("PASS: one program for every placement")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", required=True)
    p.add_argument("--case")
    p.add_argument("--backend", default="threads",
                   choices=["threads", "jit", "mpi", "externalized"])
    p.add_argument("--work", default=os.getcwd())
    p.add_argument("--mpirun", default="mpirun")
    p.add_argument("--placements", nargs="*")
    args = p.parse_args()
    if args.placements:
        placements(args)
    else:
        case(args)


if __name__ == "__main__":
    main()
