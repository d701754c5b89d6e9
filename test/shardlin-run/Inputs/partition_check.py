#!/usr/bin/env python3
"""Runs an upstream-form module two ways on shardlin's runtime and compares
every rank's output, for upstream-partition.test: imported and lowered by
shardlin (shardlin-run on the module), and partitioned by upstream's
--shard-partition (its per-device module, rewritten by shard_to_shardlin.py,
run with each rank's shard of every split argument). Random f32 inputs in
+-[0.25, 1]; an argument whose partitioned type differs from the global one
in one dim is split there evenly, device i holding the i-th piece. Standard
library only (npytool.py's .npy reading and writing).

  partition_check.py --original M.mlir --partitioned P.mlir --shardlin-run BIN
                     --dir DIR --world-size W [--seed S] [--jit-upstream]
"""
import argparse
import os
import random
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "testing", "tools"))
import npytool  # noqa: E402


def signature(path):
    text = open(path).read()
    m = re.search(r"func\.func @\w+\((.*?)\) -> tensor<([0-9x]+)xf32>", text)
    if not m:
        sys.exit("partition_check.py: no f32 function in " + path)
    args = re.findall(r"tensor<([0-9x]+)xf32>", m.group(1))
    return [tuple(int(d) for d in a.split("x")) for a in args]


def piece(values, shape, dim, w, r):
    """Rank r's even piece of a row-major tensor along dim."""
    n = shape[dim] // w
    outer = 1
    for d in shape[:dim]:
        outer *= d
    inner = 1
    for d in shape[dim + 1:]:
        inner *= d
    out = []
    for o in range(outer):
        base = o * shape[dim] * inner
        out.extend(values[base + r * n * inner:base + (r + 1) * n * inner])
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--original", required=True)
    p.add_argument("--partitioned", required=True)
    p.add_argument("--shardlin-run", required=True)
    p.add_argument("--dir", required=True)
    p.add_argument("--world-size", type=int, required=True)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--jit-upstream", action="store_true",
                   help="run upstream's module compiled (--jit): it holds scf.if")
    a = p.parse_args()
    w = a.world_size
    rng = random.Random(a.seed)
    os.makedirs(a.dir, exist_ok=True)
    glob, local = signature(a.original), signature(a.partitioned)
    if len(glob) != len(local):
        sys.exit("partition_check.py: the two functions take different arguments")
    whole, shards = [], []
    for i, (g, l) in enumerate(zip(glob, local)):
        count = 1
        for d in g:
            count *= d
        values = [npytool.round_to("f32", rng.uniform(0.25, 1.0) * rng.choice((-1.0, 1.0)))
                  for _ in range(count)]
        path = os.path.join(a.dir, "g%d.npy" % i)
        npytool.write_npy(path, "<f4", g, values)
        whole.append(path)
        split = [d for d in range(len(g)) if g[d] != l[d]]
        if not split:
            shards.append(path)
            continue
        if len(split) != 1 or g[split[0]] != l[split[0]] * w:
            sys.exit("partition_check.py: argument %d is %s globally and %s per device" % (i, g, l))
        for r in range(w):
            npytool.write_npy(os.path.join(a.dir, "s%d.%d.npy" % (i, r)), "<f4", l,
                              piece(values, g, split[0], w, r))
        shards.append(os.path.join(a.dir, "s%d.{rank}.npy" % i))
    runs = {
        "shardlin": [a.original, "--strategy=activations"] + ["--arg=" + x for x in whole],
        "upstream": [a.partitioned, "--world-size=%d" % w] + ["--jit"] * a.jit_upstream +
                    ["--arg=" + x for x in shards],
    }
    for name, args in runs.items():
        out = "--out=" + os.path.join(a.dir, name + ".{rank}.npy")
        subprocess.run([a.shardlin_run] + args + [out], check=True)
    worst, identical = 0.0, True
    for r in range(w):
        _, s1, y1 = npytool.read_npy(os.path.join(a.dir, "shardlin.%d.npy" % r))
        _, s2, y2 = npytool.read_npy(os.path.join(a.dir, "upstream.%d.npy" % r))
        if s1 != s2:
            print("rank %d: shapes %s and %s" % (r, s1, s2))
            return 1
        for u, v in zip(y1, y2):
            identical &= u == v
            worst = max(worst, abs(u - v) / (1 + abs(u)))
    if worst > 1e-5:
        print("the two differ by %.3g (relative to 1 + |y|)" % worst)
        return 1
    print("ok: %d ranks, %s" % (w, "bit-identical" if identical else "max difference %.3g" % worst))
    return 0


if __name__ == "__main__":
    sys.exit(main())
