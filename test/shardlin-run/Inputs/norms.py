#!/usr/bin/env python3
"""Inputs and float64 references of Inputs/norm-mlp.mlir (an RMSNorm or a
LayerNorm in front of an MLP), with the Python standard library only
(npytool.py's .npy reading and writing).

  norms.py gen --out-dir DIR [--seed S]
      writes DIR/x.npy (6 x 40), nw.npy, nb.npy (40), w1.npy (38 x 40),
      b1.npy (38), w2.npy (40 x 38), b2.npy (40), f32, random and non-zero.
  norms.py gen3d --out-dir DIR [--seed S]
      writes DIR/x3.npy (5 x 2 x 8) and w3.npy (8), f32 (Inputs/norm-3d.mlir).
  norms.py check --dir DIR --norm rms|ln|max3d --out PATTERN --world-size W
      [--offsets 0,2,4,6,6]
      y = x + fc2(gelu(fc1(norm(x)))) in float64 from the stored inputs;
      rank r's output ({rank} in PATTERN) must be rows offsets[r] to
      offsets[r + 1] of it (all rows without --offsets: x replicated), each
      element within 1e-5 (1 + |y|) (f32: the norm's sums of 40 terms and the
      two linears of 40 and 38 terms are each within about 40 * 2^-24
      relative to their magnitudes, which are O(1) here). max3d: norm-3d.mlir's
      y = (x - max) * rsqrt(sum(x^2) / 8) * w over the last dim, rows of dim
      0 (5 x 2 x 8) at the offsets, the same bound. Prints the max error and
      `ok: W ranks`, or fails.
"""
import argparse
import math
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "testing", "tools"))
import npytool  # noqa: E402

SHAPES = {"x": (6, 40), "nw": (40,), "nb": (40,), "w1": (38, 40), "b1": (38,), "w2": (40, 38), "b2": (40,)}
BOUND = 1e-5


def gen(a):
    rng = random.Random(a.seed)
    os.makedirs(a.out_dir, exist_ok=True)
    for name, shape in SHAPES.items():
        n = 1
        for s in shape:
            n *= s
        scale = 1.0 if name in ("x", "nw", "nb") else 0.3
        vals = [npytool.round_to("f32", scale * rng.uniform(0.25, 1.0) * rng.choice((-1.0, 1.0))) for _ in range(n)]
        npytool.write_npy(os.path.join(a.out_dir, name + ".npy"), "<f4", shape, vals)
    return 0


def gen3d(a):
    rng = random.Random(a.seed)
    os.makedirs(a.out_dir, exist_ok=True)
    for name, shape, n in (("x3", (5, 2, 8), 80), ("w3", (8,), 8)):
        vals = [npytool.round_to("f32", rng.uniform(0.25, 1.0) * rng.choice((-1.0, 1.0))) for _ in range(n)]
        npytool.write_npy(os.path.join(a.out_dir, name + ".npy"), "<f4", shape, vals)
    return 0


def reference3d(d):
    x, w = load(d, "x3"), load(d, "w3")
    y = []
    for i in range(10):
        row = x[i * 8:(i + 1) * 8]
        most = max(row)
        inv = 1.0 / math.sqrt(math.fsum(v * v for v in row) / 8.0)
        y.extend((v - most) * inv * w[j] for j, v in enumerate(row))
    return y


def load(d, name):
    return npytool.read_npy(os.path.join(d, name + ".npy"))[2]


def reference(d, norm):
    x, nw, nb = load(d, "x"), load(d, "nw"), load(d, "nb")
    w1, b1, w2, b2 = load(d, "w1"), load(d, "b1"), load(d, "w2"), load(d, "b2")
    y = []
    for i in range(6):
        row = x[i * 40:(i + 1) * 40]
        if norm == "rms":
            r = 1.0 / math.sqrt(math.fsum(v * v for v in row) / 40.0)
            h = [row[j] * r * nw[j] for j in range(40)]
        else:
            mean = math.fsum(row) / 40.0
            var = math.fsum((v - mean) ** 2 for v in row) / 40.0
            r = 1.0 / math.sqrt(var + 1e-5)
            h = [(row[j] - mean) * r * nw[j] + nb[j] for j in range(40)]
        a = []
        for n in range(38):
            v = math.fsum(h[k] * w1[n * 40 + k] for k in range(40)) + b1[n]
            a.append(0.5 * v * (1.0 + math.erf(v / math.sqrt(2.0))))
        for n in range(40):
            y.append(row[n] + math.fsum(a[k] * w2[n * 38 + k] for k in range(38)) + b2[n])
    return y


def check(a):
    three = a.norm == "max3d"
    ref = reference3d(a.dir) if three else reference(a.dir, a.norm)
    rows, inner = (5, (2, 8)) if three else (6, (40,))
    per_row = 16 if three else 40
    offsets = [int(v) for v in a.offsets.split(",")] if a.offsets else None
    worst = 0.0
    for r in range(a.world_size):
        path = a.out.replace("{rank}", str(r))
        _, shape, out = npytool.read_npy(path)
        lo, hi = (offsets[r], offsets[r + 1]) if offsets else (0, rows)
        if tuple(shape) != (hi - lo,) + inner:
            print("rank %d: shape %s, expected %s" % (r, shape, (hi - lo,) + inner))
            return 1
        for e, v in enumerate(out):
            want = ref[lo * per_row + e]
            err = abs(v - want) / (1.0 + abs(want))
            worst = max(worst, err)
            if not err <= BOUND:
                print("rank %d element %d: %r, expected %r" % (r, e, v, want))
                return 1
    print("max error %.3g (bound %g)" % (worst, BOUND))
    print("ok: %d ranks" % a.world_size)
    return 0


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("gen")
    g.add_argument("--out-dir", required=True)
    g.add_argument("--seed", type=int, default=1)
    g3 = sub.add_parser("gen3d")
    g3.add_argument("--out-dir", required=True)
    g3.add_argument("--seed", type=int, default=1)
    c = sub.add_parser("check")
    c.add_argument("--dir", required=True)
    c.add_argument("--norm", choices=("rms", "ln", "max3d"), required=True)
    c.add_argument("--out", required=True)
    c.add_argument("--world-size", type=int, required=True)
    c.add_argument("--offsets")
    a = p.parse_args()
    return {"gen": gen, "gen3d": gen3d, "check": check}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
