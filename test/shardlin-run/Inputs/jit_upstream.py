#!/usr/bin/env python3
"""The inputs and float64 references of jit-upstream.mlir's entries, with the
Python standard library only (npytool.py's .npy reading and writing).

  jit_upstream.py gen --out-dir DIR --world-size W [--seed S]
      writes DIR/m.npy (6 x 6 f32, every rank's), DIR/a.{rank}.npy (3 x 5
      f64, one per rank) and DIR/mm.npy (5 x 4 f64); the linear's x, w and b
      come from `npytool.py gen-linear --n 6 --k 9 --batch-shape 4 --bias`.
  jit_upstream.py check --dir DIR --entry NAME --world-size W --out PATTERN
      computes the entry's reference on every rank in float64 from the
      stored (rounded) inputs and compares it with each rank's output
      ({rank} in PATTERN): |out - ref| <= bound * (1 + |ref|), where bound is
      1e-4 for f32 (the linear's f32 error is about K * 2^-24 * sum |x a| <
      1e-5 here, and softmax, log1p and tanh do not amplify it by more than
      a few) and 1e-10 for f64.
"""
import argparse
import math
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "testing", "tools"))
import npytool  # noqa: E402

BOUND = {"<f4": 1e-4, "<f8": 1e-10}


def nonzero(rng):
    return rng.uniform(0.25, 1.0) * rng.choice((-1.0, 1.0))


def gen(a):
    rng = random.Random(a.seed)
    os.makedirs(a.out_dir, exist_ok=True)
    m = [npytool.round_to("f32", nonzero(rng)) for _ in range(36)]
    npytool.write_npy(os.path.join(a.out_dir, "m.npy"), "<f4", (6, 6), m)
    mm = [nonzero(rng) for _ in range(20)]
    npytool.write_npy(os.path.join(a.out_dir, "mm.npy"), "<f8", (5, 4), mm)
    for r in range(a.world_size):
        x = [nonzero(rng) for _ in range(15)]
        npytool.write_npy(os.path.join(a.out_dir, "a.%d.npy" % r), "<f8", (3, 5), x)
    return 0


def load(d, name):
    return npytool.read_npy(os.path.join(d, name))[2]


def matmul(a, b, n, k, m):
    return [math.fsum(a[i * k + t] * b[t * m + j] for t in range(k)) for i in range(n) for j in range(m)]


def linear(d, r):
    """y_r = x_r A^T + b, 4 x 6."""
    x, w, b = load(d, "x.%d.npy" % r), load(d, "w.npy"), load(d, "b.npy")
    return [math.fsum(x[i * 9 + t] * w[j * 9 + t] for t in range(9)) + b[j] for i in range(4) for j in range(6)]


def softmax_select(d, r):
    """Each element as (value, alternatives): where y is within the f32 error
    of 0, the compiled code may take either branch of the select."""
    y = linear(d, r)
    out = []
    for i in range(4):
        row = y[i * 6:(i + 1) * 6]
        top = max(row)
        e = [math.exp(v - top) for v in row]
        total = math.fsum(e)
        for j, v in enumerate(row):
            taken = math.log1p(e[j] / total)
            out.append([taken if v > 0 else v] + ([v if v > 0 else taken] if abs(v) < 1e-4 else []))
    return out


def matmul_loop(d, r):
    y = linear(d, r)
    acc = matmul(y, load(d, "m.npy"), 4, 6, 6)
    for _ in range(3):
        acc = [math.tanh(v) + yv for v, yv in zip(acc, y)]
    return [[v] for v in acc]


def local_f64(d, r):
    return [[math.log1p(abs(v))] for v in matmul(load(d, "a.%d.npy" % r), load(d, "mm.npy"), 3, 5, 4)]


def with_chunk(d, r):
    """The first result, y; the second (the rank's 2 columns) is checked
    with --result 1."""
    return [[v] for v in linear(d, r)]


def with_chunk_1(d, r):
    # Placements [2, 0, 1]: rank r holds chunk (1, 2, 0)[r] of N = 6, 2 wide.
    chunk = (1, 2, 0)[r]
    y = linear(d, r)
    return [[y[i * 6 + 2 * chunk + j]] for i in range(4) for j in range(2)]


ENTRIES = {"softmax_select": softmax_select, "matmul_loop": matmul_loop, "local_f64": local_f64,
           "with_chunk": with_chunk, "with_chunk_1": with_chunk_1}


def check(a):
    worst = 0.0
    for r in range(a.world_size):
        path = a.out.replace("{rank}", str(r))
        descr, shape, out = npytool.read_npy(path)
        ref = ENTRIES[a.entry](a.dir, r)
        bound = BOUND.get(descr)
        if bound is None:
            print("rank %d: %s has dtype %s" % (r, path, descr))
            return 1
        if len(out) != len(ref):
            print("rank %d: %s has %d elements %s, the reference %d" % (r, path, len(out), shape, len(ref)))
            return 1
        for i, (o, choices) in enumerate(zip(out, ref)):
            err = min(abs(o - c) / (1 + abs(c)) for c in choices)
            if not err <= bound:
                print("rank %d: element %d is %r, reference %r (error %.3g > %.3g)" % (r, i, o, choices[0], err, bound))
                return 1
            worst = max(worst, err)
    print("ok: %d ranks, max error %.3g" % (a.world_size, worst))
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("gen")
    g.add_argument("--out-dir", required=True)
    g.add_argument("--world-size", type=int, required=True)
    g.add_argument("--seed", type=int, default=1)
    c = sub.add_parser("check")
    c.add_argument("--dir", required=True)
    c.add_argument("--entry", required=True, choices=sorted(ENTRIES))
    c.add_argument("--world-size", type=int, required=True)
    c.add_argument("--out", required=True)
    a = p.parse_args()
    return gen(a) if a.cmd == "gen" else check(a)


if __name__ == "__main__":
    sys.exit(main())
