#!/usr/bin/env python3
"""Runs one module of the real-frontend corpus (export.py) and checks every
rank's output against the float64 reference. Python's standard library only.

  run_case.py --bin DIR --case NAME --backend threads|jit|mpi [--work DIR]
  run_case.py --bin DIR --case NAME --backend externalized [--work DIR]
  run_case.py --bin DIR --case NAME --backend backward[-jit] [--work DIR]
  run_case.py --bin DIR --placements NAME1 NAME2 ...

threads, jit and mpi run `shardlin-run` on the module as exported (its
parameters are constants in it; its only argument is x; in the StableHLO
corpus, --corpus integration_test/frontends/stablehlo, the parameters are
arguments after x, listed in cases.json). A replicated result
is written by every rank (`{rank}`) and each copy is checked; a split result
is assembled from every rank's chunk and checked whole.

externalized moves the module's parameters into a safetensors file
(`shardlin-opt --shardlin-externalize-parameters`), runs that module with
`--params`, and requires its output to equal the inline run's bit for bit.

backward (a trainable module) externalizes the parameters, generates the
backward function (`--shardlin-generate-backward=recompute=always`: it takes
x, the parameters by name and dy), runs `main_backward` and checks the
gradient of x and of every parameter against PyTorch's float64 gradients of
sum(y * dy). Every rank writes each gradient: a replicated one is checked on
every rank, a split one is assembled from the ranks' chunks in rank order.

--check-outputs PATTERN only checks the rank files of a run made elsewhere
(scripts/make-gpu-suite.sh's corpus cases, run by gpu-check.sh).

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
# npytool.py: the repository's, or a copy beside this file (the GPU suite's).
sys.path.insert(0, HERE)
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
    # The framework's own run in the dtype (PyTorch's; JAX's for the
    # StableHLO corpus).
    own = meta.get("own", name + ".torch.npy")
    _, _, torch = npytool.read_npy(os.path.join(CORPUS, own))
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
    os.makedirs(work, exist_ok=True)
    out_flag, paths = outputs(work, meta)
    for p in paths:
        if os.path.exists(p):
            os.remove(p)
    x = os.path.join(CORPUS, args.case + ".x.npy")
    cmd = [os.path.join(args.bin, "shardlin-run"), module, "--arg=" + x]
    # Parameters passed as arguments (the StableHLO corpus), whole: each
    # rank takes its chunk of a split one.
    cmd += ["--arg=" + os.path.join(CORPUS, f) for f in meta.get("args", [])]
    cmd.append(out_flag)
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


def read_rank_files(pattern, world):
    return [npytool.read_npy(pattern.replace("{rank}", str(r)))
            for r in range(world)]


def assemble(parts, shape):
    """Rank r's chunks (rank order) of an array of `shape`, joined along the
    one dim where their shapes differ from it; None where every part is whole."""
    if all(tuple(p[1]) == tuple(shape) for p in parts):
        return None
    dims = [d for d in range(len(shape))
            if any(p[1][d] != shape[d] for p in parts)]
    if len(dims) != 1:
        raise SystemExit(f"FAIL: chunks of shapes {[p[1] for p in parts]} "
                         f"do not make {shape}")
    d = dims[0]
    outer = 1
    for n in shape[:d]:
        outer *= n
    inner = 1
    for n in shape[d + 1:]:
        inner *= n
    values = []
    for o in range(outer):
        for _, pshape, pvalues in parts:
            block = pshape[d] * inner
            values += pvalues[o * block:(o + 1) * block]
    if sum(p[1][d] for p in parts) != shape[d]:
        raise SystemExit(f"FAIL: chunks along dim {d} do not add up to {shape}")
    return values


def check_rank_files(name, meta, what, ref_path, pattern):
    """Every rank's file of `pattern` against the reference: each whole copy,
    or the chunks assembled in rank order."""
    _, shape, ref = npytool.read_npy(ref_path)
    parts = read_rank_files(pattern, meta["world_size"])
    whole = assemble(parts, shape)
    limit = bound(name, meta)
    checks = ([(f"assembled from {len(parts)} ranks", whole)] if whole is not None
              else [(f"rank {r}", p[2]) for r, p in enumerate(parts)])
    for where, values in checks:
        err = max_rel_error(values, ref)
        print(f"{what} ({where}): max error / max |ref| = {err:.3g} "
              f"(bound {limit:.3g})")
        if not err <= limit:
            raise SystemExit(f"FAIL: {what} is off the float64 reference")


def check_gradient(name, meta, what, pattern):
    check_rank_files(name, meta, "d" + what,
                     os.path.join(CORPUS, f"{name}.grad.{what}.npy"), pattern)


def backward(args):
    meta = manifest()[args.case]
    if not meta["trainable"]:
        raise SystemExit(f"{args.case} has no gradients in the corpus")
    work = os.path.join(args.work, args.case + "." + args.backend)
    os.makedirs(work, exist_ok=True)
    params = os.path.join(work, "params.safetensors")
    ext = os.path.join(work, "externalized.mlir")
    bw = os.path.join(work, "backward.mlir")
    opt = os.path.join(args.bin, "shardlin-opt")
    run([opt, os.path.join(CORPUS, args.case + ".mlir"),
         f"--shardlin-externalize-parameters=file={params}", "-o", ext])
    with open(ext) as f:
        signature = next(line for line in f if "func.func @main(" in line)
    # The parameters in the order of @main's arguments (after x), as the
    # pass named them: one gradient each, after x's.
    names = re.findall(r'shardlin\.parameter = "([^"]+)"', signature)
    run([opt, ext, "--shardlin-import-shard",
         "--shardlin-generate-backward=recompute=always", "-o", bw])
    outs = ["x"] + names
    patterns = {w: os.path.join(work, f"d{w}.{{rank}}.npy") for w in outs}
    cmd = [os.path.join(args.bin, "shardlin-run"), bw, "--entry=main_backward",
           "--params=" + params,
           "--arg=" + os.path.join(CORPUS, args.case + ".x.npy"),
           "--arg=" + os.path.join(CORPUS, args.case + ".dy.npy")]
    cmd += ["--out=" + patterns[w] for w in outs]
    if args.backend == "backward-jit":
        cmd.append("--jit")
    run(cmd)
    for w in outs:
        check_gradient(args.case, meta, w, patterns[w])
    print(f"PASS {args.case}: every gradient on every rank")


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
    p.add_argument("--bin", help="the directory of shardlin-run and shardlin-opt")
    p.add_argument("--case")
    p.add_argument("--backend", default="threads",
                   choices=["threads", "jit", "mpi", "externalized",
                            "backward", "backward-jit"])
    p.add_argument("--work", default=os.getcwd())
    p.add_argument("--mpirun", default="mpirun")
    p.add_argument("--placements", nargs="*")
    p.add_argument("--corpus", help="the corpus directory (default: beside "
                   "this script)")
    p.add_argument("--check-outputs", metavar="PATTERN",
                   help="only check the rank files PATTERN ({rank}) of "
                   "--case against its reference (the GPU suite's check)")
    args = p.parse_args()
    if args.corpus:
        global CORPUS
        CORPUS = args.corpus
    if args.check_outputs:
        check_rank_files(args.case, manifest()[args.case], "y",
                         os.path.join(CORPUS, args.case + ".ref.npy"),
                         args.check_outputs)
        print(f"PASS {args.case}")
    elif args.placements:
        placements(args)
    elif args.backend.startswith("backward"):
        backward(args)
    else:
        case(args)


if __name__ == "__main__":
    main()
