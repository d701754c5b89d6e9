"""The float64 reference of the modules of externalize-parameters-run.test,
from their parameters as a safetensors file holds them (standard library
only, with testing/tools/npytool.py).

  gen-x --out X.npy --rows R --k K --seed S   random non-zero f32 input
  check --params F.safetensors --x X.npy --out 'Y.{rank}.npy' --world-size W
        --model mlp|linear
      compares every rank's output (each rank holds the whole y) with
      y = gelu(x W1^T + b1) W2^T + b2 (mlp, GELU by erf, as torch's default)
      or y = x W^T + b (linear), elementwise, relative to the error scale
      of each element (the same sums over absolute values, the GELU's slope
      bounded by 1.2), within 1e-5.
"""
import argparse
import math
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..",
                                "testing", "tools"))
import npytool  # noqa: E402


def tensor(params, name):
    _, shape, values = npytool.read_npy(params + ":" + name)
    return shape, values


def linear(x, rows, k, w, n, b):
    """y = x w^T + b and the same over absolute values."""
    y, s = [], []
    for r in range(rows):
        for j in range(n):
            acc = sum(x[r * k + i] * w[j * k + i] for i in range(k)) + b[j]
            mag = sum(abs(x[r * k + i] * w[j * k + i]) for i in range(k)) + abs(b[j])
            y.append(acc)
            s.append(mag)
    return y, s


def gelu(v):
    return 0.5 * v * (1.0 + math.erf(v / math.sqrt(2.0)))


def reference(a, rows, k, x):
    if a.model == "linear":
        (n, _), w = tensor(a.params, "fc.weight")
        _, b = tensor(a.params, "fc.bias")
        return linear(x, rows, k, w, n, b)
    (hidden, _), w1 = tensor(a.params, "fc1.weight")
    _, b1 = tensor(a.params, "fc1.bias")
    (n, _), w2 = tensor(a.params, "fc2.weight")
    _, b2 = tensor(a.params, "fc2.bias")
    h, hs = linear(x, rows, k, w1, hidden, b1)
    g = [gelu(v) for v in h]
    y, ys = linear(g, rows, hidden, w2, n, b2)
    # The first layer's error reaches y through the GELU (slope <= 1.2)
    # and |W2|.
    carried, _ = linear([1.2 * v for v in hs], rows, hidden,
                        [abs(v) for v in w2], n, [0.0] * n)
    return y, [p + q for p, q in zip(ys, carried)]


def check(a):
    _, (rows, k), x = npytool.read_npy(a.x)
    y, scale = reference(a, rows, k, x)
    worst = 0.0
    for r in range(a.world_size):
        path = a.out.replace("{rank}", str(r))
        _, shape, out = npytool.read_npy(path)
        if len(out) != len(y):
            print("rank %d: %s has shape %s" % (r, path, shape))
            return 1
        for i, (o, e, s) in enumerate(zip(out, y, scale)):
            err = abs(o - e) / max(s, 1e-30)
            if not err <= 1e-5:
                print("rank %d: element %d is %r, reference %r (relative error %.3g)" % (r, i, o, e, err))
                return 1
            worst = max(worst, err)
    print("ok: %d ranks, max relative error %.3g (bound 1e-05)" % (a.world_size, worst))
    return 0


def gen_x(a):
    rng = random.Random(a.seed)
    values = [npytool.nonzero(rng) for _ in range(a.rows * a.k)]
    npytool.write_npy(a.out, "<f4", (a.rows, a.k), values)
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__)
    sub = p.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("gen-x")
    g.add_argument("--out", required=True)
    g.add_argument("--rows", type=int, required=True)
    g.add_argument("--k", type=int, required=True)
    g.add_argument("--seed", type=int, default=1)
    c = sub.add_parser("check")
    c.add_argument("--params", required=True)
    c.add_argument("--x", required=True)
    c.add_argument("--out", required=True)
    c.add_argument("--world-size", type=int, required=True)
    c.add_argument("--model", choices=("mlp", "linear"), required=True)
    a = p.parse_args()
    return gen_x(a) if a.cmd == "gen-x" else check(a)


sys.exit(main())
