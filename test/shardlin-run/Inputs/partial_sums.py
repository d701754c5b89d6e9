#!/usr/bin/env python3
"""Inputs and checks for partial-sums.mlir and partial-sums-mpi.mlir: a
row-wise (K split) linear over W = 2 ranks whose per-rank partial products
do not fit the result's dtype, although the result does.

  partial_sums.py gen --dtype f16|bf16 --out-dir DIR
      writes DIR/x.{0,1}.npy (4 x 2), DIR/w.npy (3 x 2), DIR/b.npy (3) and
      the float64 reference DIR/ref.{rank}.npy and scale DIR/scale.{rank}.npy.
  partial_sums.py check --dtype f16|bf16 --dir DIR --out PATTERN
      compares every rank's output with the reference.

Row 0 of rank 0 (and row 1 of rank 1) is the crafted case, with weight row 0
and bias b[0] = 0.5 (f16) or 0.25 (bf16):
  - f16: x = [256, 256.25], A[0] = [256, -255.875]: the partial products
    are +65536 and -65567.96875, both beyond f16's largest finite 65504 (inf
    once rounded, and inf - inf is NaN); the result is -31.96875 + 0.5 =
    -31.46875, exact in f16. (The issue's A[0][1] = -255.9375 is not an f16
    value: it is stored as -256.)
  - bf16: x = [17, 1], A[0] = [17, -288]: the partial products are 289
    (288 once rounded to bf16's 8 bits) and -288; the result is 1 + 0.25,
    exact in bf16 (0.25 with bf16 partial sums).
The other elements are random, non-zero, of magnitude up to 128 (the results fit the dtype).

The bound: partial sums kept in f32 and the result rounded once give
|y - ref| <= u |ref| + 2^-22 scale, u the dtype's unit roundoff (2^-11 f16,
2^-8 bf16) and scale = sum_k |x_k A_jk| + |b_j| (two f32 roundings of sums:
the products of two f16 or bf16 values are exact in f32).
"""
import argparse
import math
import os
import random
import sys

# testing/tools in the repository; beside this file in the GPU suite
# (scripts/make-gpu-suite.sh copies npytool.py there).
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "testing", "tools"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import npytool  # noqa: E402  (write_npy, read_npy, round_to, DESCR)

N, K, ROWS, W = 3, 2, 4, 2
CRAFTED = {
    "f16": ([256.0, 256.25], [256.0, -255.875], 0.5),
    "bf16": ([17.0, 1.0], [17.0, -288.0], 0.25),
}
UNIT = {"f16": 2.0 ** -11, "bf16": 2.0 ** -8}


def value(rng, dtype):
    return npytool.round_to(dtype, rng.uniform(1.0, 128.0) * rng.choice((-1.0, 1.0)))


def gen(a):
    rng = random.Random(12)
    descr = npytool.DESCR[a.dtype]
    cx, cw, cb = CRAFTED[a.dtype]
    for v in cx + cw + [cb]:
        assert npytool.round_to(a.dtype, v) == v, "%r is not a %s value" % (v, a.dtype)
    w = [value(rng, a.dtype) for _ in range(N * K)]
    w[0:K] = cw
    b = [value(rng, a.dtype) for _ in range(N)]
    b[0] = cb
    os.makedirs(a.out_dir, exist_ok=True)
    npytool.write_npy(os.path.join(a.out_dir, "w.npy"), descr, (N, K), w)
    npytool.write_npy(os.path.join(a.out_dir, "b.npy"), descr, (N,), b)
    for r in range(W):
        x = [value(rng, a.dtype) for _ in range(ROWS * K)]
        x[r * K:(r + 1) * K] = cx
        ref, scale = [], []
        for i in range(ROWS):
            for j in range(N):
                terms = [x[i * K + t] * w[j * K + t] for t in range(K)]
                ref.append(math.fsum(terms) + b[j])
                scale.append(math.fsum(abs(t) for t in terms) + abs(b[j]))
        npytool.write_npy(os.path.join(a.out_dir, "x.%d.npy" % r), descr, (ROWS, K), x)
        npytool.write_npy(os.path.join(a.out_dir, "ref.%d.npy" % r), "<f8", (ROWS, N), ref)
        npytool.write_npy(os.path.join(a.out_dir, "scale.%d.npy" % r), "<f8", (ROWS, N), scale)
    return 0


def check(a):
    worst = 0.0
    for r in range(W):
        _, _, ref = npytool.read_npy(os.path.join(a.dir, "ref.%d.npy" % r))
        _, _, scale = npytool.read_npy(os.path.join(a.dir, "scale.%d.npy" % r))
        path = a.out.replace("{rank}", str(r))
        descr, shape, out = npytool.read_npy(path)
        if not npytool.descr_matches(descr, a.dtype) or shape != (ROWS, N):
            print("rank %d: %s is %s %s, expected %s %s" % (r, path, descr, shape, npytool.DESCR[a.dtype], (ROWS, N)))
            return 1
        for i, (o, e, s) in enumerate(zip(out, ref, scale)):
            limit = UNIT[a.dtype] * abs(e) + 2.0 ** -22 * s
            err = abs(o - e)
            if not err <= limit:
                print("rank %d: element %d is %r, reference %r (error %.3g > bound %.3g)" % (r, i, o, e, err, limit))
                return 1
            worst = max(worst, err / max(limit, 1e-30))
        crafted = out[r * N]
        print("rank %d: crafted element %r" % (r, crafted))
    print("ok: %d ranks, max error / bound %.3g" % (W, worst))
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("gen")
    g.add_argument("--dtype", choices=sorted(CRAFTED), required=True)
    g.add_argument("--out-dir", required=True)
    c = sub.add_parser("check")
    c.add_argument("--dtype", choices=sorted(CRAFTED), required=True)
    c.add_argument("--dir", required=True)
    c.add_argument("--out", required=True)
    a = p.parse_args()
    return gen(a) if a.cmd == "gen" else check(a)


if __name__ == "__main__":
    sys.exit(main())
