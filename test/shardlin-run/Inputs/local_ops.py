#!/usr/bin/env python3
"""The inputs and float64 references of local-ops.mlir's entries
(Inputs/local-ops.mlir), with the Python standard library only (npytool.py's
.npy reading and writing).

  local_ops.py gen --entry NAME --out-dir DIR --world-size W [--seed S]
      writes the entry's inputs: x.{rank}.npy (one per rank, distinct, no
      zeros) and the weights and biases every rank reads.
      torch_tanh (Inputs/local-ops-torch.mlir) is gelu_mlp with torch-mlir's
      sample's shapes (6 x 40, 38 features); gelu_bf16 and mlp_bf16 write bf16 ('<V2'), widen f16 x only (its
      check: exactly x * x, which f32 holds).
  local_ops.py check --entry NAME --dir DIR --world-size W --out PATTERN
      [--dy PATTERN]
      computes the entry's reference on every rank in float64 from the stored
      (rounded) inputs and compares every element of each rank's output
      ({rank} in PATTERN) with it: |out - ref| <= bound * scale, where scale
      is the sum of the magnitudes of the terms that make the element (1 +
      |ref| for the powers) and bound is 2^-24 times the number of rounded
      steps along the way (40 for f32: a K = 8 and an F = 10 sum, the GELU's
      dozen steps) or 1e-13 for f64 (powers up to x^5 of |x| in [0.5, 1]:
      a few roundings of 2^-53 relative to each term). With --dy (the
      backward's entries, NAME_backward), the output is dx and the reference
      dy * d(y)/dx, the derivative n x^(n-1) of each power. bf16 outputs
      (gelu_bf16, mlp_bf16) have the bound 8 * 2^-8: a rounding to bf16 of
      each stored tensor (the truncated product, the hidden activations,
      the output), each at most 2^-8 of the scale, and the f32 steps far
      below. expand_features compares the (2, 3, 5, 3) result with npytool
      gen-linear's (2, 3, 15) reference and scale in DIR.
"""
import argparse
import math
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "testing", "tools"))
import npytool  # noqa: E402

BOUND = {"<f4": 40 * 2.0 ** -24, "<f8": 1e-13, "<V2": 8 * 2.0 ** -8}
# The GELU constants as the IR holds them (f32).
C3 = npytool.round_to("f32", 4.471500e-02)
C2 = npytool.round_to("f32", 7.977240e-01)
POWERS = (-3, 5, 2, 0, -1)


def nonzero(rng, low=0.25):
    return rng.uniform(low, 1.0) * rng.choice((-1.0, 1.0))


def write(d, name, descr, shape, values):
    npytool.write_npy(os.path.join(d, name), descr, shape, values)


def load(d, name):
    return npytool.read_npy(os.path.join(d, name))


def gen(a):
    rng = random.Random(a.seed)
    os.makedirs(a.out_dir, exist_ok=True)
    if a.entry in ("gelu_mlp", "gelu_block", "torch_tanh"):
        f32 = lambda n: [npytool.round_to("f32", nonzero(rng)) for _ in range(n)]
        k, f, n, rows = (8, 10, 8, 5) if a.entry != "torch_tanh" else (40, 38, 40, 6)
        write(a.out_dir, "w1.npy", "<f4", (f, k), f32(f * k))
        write(a.out_dir, "b1.npy", "<f4", (f,), f32(f))
        write(a.out_dir, "w2.npy", "<f4", (n, f), f32(n * f))
        write(a.out_dir, "b2.npy", "<f4", (n,), f32(n))
        for r in range(a.world_size):
            write(a.out_dir, "x.%d.npy" % r, "<f4", (rows, k), f32(rows * k))
    elif a.entry in ("gelu_bf16", "mlp_bf16"):
        bf = lambda n: [npytool.round_to("bf16", nonzero(rng)) for _ in range(n)]
        k, f, n, rows = (8, 10, 8, 5) if a.entry == "gelu_bf16" else (40, 38, 40, 6)
        write(a.out_dir, "w1.npy", "<V2", (f, k), bf(f * k))
        write(a.out_dir, "b1.npy", "<V2", (f,), bf(f))
        write(a.out_dir, "w2.npy", "<V2", (n, f), bf(n * f))
        write(a.out_dir, "b2.npy", "<V2", (n,), bf(n))
        for r in range(a.world_size):
            write(a.out_dir, "x.%d.npy" % r, "<V2", (rows, k), bf(rows * k))
    elif a.entry == "widen":
        for r in range(a.world_size):
            write(a.out_dir, "x.%d.npy" % r, "<f2", (4, 6), [npytool.round_to("f16", nonzero(rng)) for _ in range(24)])
    elif a.entry == "powers":
        for r in range(a.world_size):
            write(a.out_dir, "x.%d.npy" % r, "<f8", (4, 6), [nonzero(rng, 0.5) for _ in range(24)])
            write(a.out_dir, "dy.%d.npy" % r, "<f8", (4, 6), [nonzero(rng) for _ in range(24)])
    else:
        sys.exit("unknown entry " + a.entry)
    return 0


def gelu(v):
    return 0.5 * v * (1.0 + math.tanh(C2 * (v + C3 * v ** 3)))


def gelu_erf(v):
    return 0.5 * v * (1.0 + math.erf(v / math.sqrt(2.0)))


def mlp(d, r, act):
    """(reference, scale) of y_r = act(x_r A1^T + b1) A2^T + b2."""
    x = load(d, "x.%d.npy" % r)
    w1, b1, w2, b2 = (load(d, n) for n in ("w1.npy", "b1.npy", "w2.npy", "b2.npy"))
    (rows, k), (f,), (n,) = x[1], b1[1], b2[1]
    x, w1, b1, w2, b2 = x[2], w1[2], b1[2], w2[2], b2[2]
    ref, scale = [], []
    for i in range(rows):
        g = [act(math.fsum(x[i * k + t] * w1[j * k + t] for t in range(k)) + b1[j]) for j in range(f)]
        hs = [math.fsum(abs(x[i * k + t] * w1[j * k + t]) for t in range(k)) + abs(b1[j]) for j in range(f)]
        for j in range(n):
            ref.append(math.fsum(g[h] * w2[j * f + h] for h in range(f)) + b2[j])
            scale.append(math.fsum((abs(g[h]) + hs[h]) * abs(w2[j * f + h]) for h in range(f)) + abs(b2[j]))
    return ref, scale


def expanded(d):
    _, shape, ref = load(d, "ref.0.npy")
    return ref, load(d, "scale.0.npy")[2], shape[:-1] + (shape[-1] // 3, 3)


def powers(d, r, dy=None):
    x = load(d, "x.%d.npy" % r)[2]
    if dy is None:
        ref = [math.fsum(v ** n for n in POWERS) for v in x]
    else:
        g = npytool.read_npy(dy.replace("{rank}", str(r)))[2]
        ref = [gv * math.fsum(n * v ** (n - 1) for n in POWERS if n) for v, gv in zip(x, g)]
    return ref, [1.0 + abs(v) for v in ref]


def check(a):
    worst = 0.0
    for r in range(a.world_size):
        path = a.out.replace("{rank}", str(r))
        descr, shape, out = npytool.read_npy(path)
        if descr == "|V2":
            descr = "<V2"
        want_shape = None
        if a.entry in ("gelu_mlp", "gelu_block", "gelu_bf16", "torch_tanh"):
            ref, scale = mlp(a.dir, r, gelu)
        elif a.entry == "mlp_bf16":
            ref, scale = mlp(a.dir, r, gelu_erf)
        elif a.entry == "widen":
            # An f16 value squared fits f32's 24 bits: exact.
            ref = [v * v for v in load(a.dir, "x.%d.npy" % r)[2]]
            if out != ref:
                print("rank %d: not exactly x * x" % r)
                return 1
            continue
        elif a.entry == "expand_features":
            ref, scale, want_shape = expanded(a.dir)
        else:
            ref, scale = powers(a.dir, r, a.dy)
        if len(out) != len(ref) or (want_shape and shape != want_shape):
            print("rank %d: %s of %d elements, expected %s of %d" % (r, shape, len(out), want_shape, len(ref)))
            return 1
        for e, (o, want, s) in enumerate(zip(out, ref, scale)):
            err = abs(o - want) / s
            worst = max(worst, err)
            if not err <= BOUND[descr]:
                print("rank %d element %d: %r, expected %r (error %.3g of the scale, bound %.3g)"
                      % (r, e, o, want, err, BOUND[descr]))
                return 1
    print("ok: %d ranks (worst %.3g of the bound)" % (a.world_size, worst / BOUND.get(descr, 1.0)))
    return 0


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("gen")
    g.add_argument("--entry", required=True)
    g.add_argument("--out-dir", required=True)
    g.add_argument("--world-size", type=int, required=True)
    g.add_argument("--seed", type=int, default=1)
    c = sub.add_parser("check")
    c.add_argument("--entry", required=True)
    c.add_argument("--dir", required=True)
    c.add_argument("--world-size", type=int, required=True)
    c.add_argument("--out", required=True)
    c.add_argument("--dy")
    a = p.parse_args()
    return gen(a) if a.cmd == "gen" else check(a)


if __name__ == "__main__":
    sys.exit(main())
