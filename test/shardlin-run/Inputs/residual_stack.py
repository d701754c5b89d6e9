#!/usr/bin/env python3
"""Inputs and the float64 reference of the residual stack of
test/Dialect/Shardlin/Inputs/placement/residual-*.mlir (run by
test/shardlin-run/import-placement.mlir): two residual MLP blocks,

  z1 = x + relu(x W1^T) W2^T,   y = z1 + relu(z1 W3^T) W4^T,

x of R x D, W1 and W3 of H x D, W2 and W4 of D x H (the weights as the
module takes them, N x K), f32.

  residual_stack.py --rows R --dim D --hidden H --seed S --out-dir DIR
      writes DIR/x.npy, DIR/w1.npy .. DIR/w4.npy (random, non-zero), the
      reference DIR/ref.0.npy and its scale DIR/scale.0.npy, for
      `npytool.py check --world-size 1` on the assembled output.
  residual_stack.py --biased-mlp ...
      instead, the block of Inputs/placement/bias-*.mlir, without residual:
      y = relu(x W1^T + b1) W2^T; DIR/x.npy, DIR/w1.npy, DIR/b1.npy,
      DIR/w2.npy and the reference.

The scale bounds the error of every stored value propagated to y: for a
GEMM output, sum_k |W_jk| s_k with s the scale of its input (|x| for x, the
hidden's scale for a hidden value, which bounds |relu(h)| too); for a
residual add, the sum of its operands' scales. f32 rounding of each GEMM's
sum and of each add stays within npytool's f32 bound (1e-5) of that scale.
"""
import argparse
import math
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "testing", "tools"))
import npytool  # noqa: E402


def block(x, sx, w1, w2, rows, dim, hidden):
    """x + relu(x w1^T) w2^T and its scale, row-major lists."""
    z, sz = [], []
    for i in range(rows):
        xi, si = x[i * dim:(i + 1) * dim], sx[i * dim:(i + 1) * dim]
        h, sh = [], []
        for j in range(hidden):
            wj = w1[j * dim:(j + 1) * dim]
            h.append(max(0.0, math.fsum(p * q for p, q in zip(xi, wj))))
            sh.append(math.fsum(abs(q) * s for q, s in zip(wj, si)))
        for j in range(dim):
            wj = w2[j * hidden:(j + 1) * hidden]
            z.append(xi[j] + math.fsum(p * q for p, q in zip(h, wj)))
            sz.append(si[j] + math.fsum(abs(q) * s for q, s in zip(wj, sh)))
    return z, sz


def biased_mlp(x, w1, b1, w2, rows, dim, hidden):
    """relu(x w1^T + b1) w2^T and its scale, row-major lists."""
    y, sy = [], []
    for i in range(rows):
        xi = x[i * dim:(i + 1) * dim]
        h, sh = [], []
        for j in range(hidden):
            wj = w1[j * dim:(j + 1) * dim]
            h.append(max(0.0, math.fsum([p * q for p, q in zip(xi, wj)] + [b1[j]])))
            sh.append(math.fsum(abs(p * q) for p, q in zip(xi, wj)) + abs(b1[j]))
        for j in range(dim):
            wj = w2[j * hidden:(j + 1) * hidden]
            y.append(math.fsum(p * q for p, q in zip(h, wj)))
            sy.append(math.fsum(abs(q) * s for q, s in zip(wj, sh)))
    return y, sy


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rows", type=int, required=True)
    p.add_argument("--dim", type=int, required=True)
    p.add_argument("--hidden", type=int, required=True)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out-dir", required=True)
    p.add_argument("--biased-mlp", action="store_true")
    a = p.parse_args()
    rng = random.Random(a.seed)
    os.makedirs(a.out_dir, exist_ok=True)

    def rand(count):
        return [npytool.round_to("f32", npytool.nonzero(rng)) for _ in range(count)]

    x = rand(a.rows * a.dim)
    ws = [rand(a.hidden * a.dim) for _ in range(4)]
    if a.biased_mlp:
        b1 = rand(a.hidden)
        npytool.write_npy(os.path.join(a.out_dir, "x.npy"), "<f4", (a.rows, a.dim), x)
        npytool.write_npy(os.path.join(a.out_dir, "w1.npy"), "<f4", (a.hidden, a.dim), ws[0])
        npytool.write_npy(os.path.join(a.out_dir, "b1.npy"), "<f4", (a.hidden,), b1)
        npytool.write_npy(os.path.join(a.out_dir, "w2.npy"), "<f4", (a.dim, a.hidden), ws[1])
        y, sy = biased_mlp(x, ws[0], b1, ws[1], a.rows, a.dim, a.hidden)
        npytool.write_npy(os.path.join(a.out_dir, "ref.0.npy"), "<f8", (a.rows, a.dim), y)
        npytool.write_npy(os.path.join(a.out_dir, "scale.0.npy"), "<f8", (a.rows, a.dim), sy)
        return 0
    shapes = [(a.hidden, a.dim), (a.dim, a.hidden)] * 2
    npytool.write_npy(os.path.join(a.out_dir, "x.npy"), "<f4", (a.rows, a.dim), x)
    for i, (w, shape) in enumerate(zip(ws, shapes)):
        npytool.write_npy(os.path.join(a.out_dir, "w%d.npy" % (i + 1)), "<f4", shape, w)
    z1, s1 = block(x, [abs(v) for v in x], ws[0], ws[1], a.rows, a.dim, a.hidden)
    y, sy = block(z1, s1, ws[2], ws[3], a.rows, a.dim, a.hidden)
    npytool.write_npy(os.path.join(a.out_dir, "ref.0.npy"), "<f8", (a.rows, a.dim), y)
    npytool.write_npy(os.path.join(a.out_dir, "scale.0.npy"), "<f8", (a.rows, a.dim), sy)
    return 0


if __name__ == "__main__":
    sys.exit(main())
