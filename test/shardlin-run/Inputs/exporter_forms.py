"""Inputs and float64 references for the exporter-form tests (import-exporter-forms.mlir).

  exporter_forms.py gen --case linear|mlp --x-shape 2x5 --k K --n N [--hidden H]
      [--bias] [--dtype f32] [--seed S] --out-dir DIR
    writes DIR/x.npy, the weights as torch stores them (N x K: w.npy, or
    w1.npy (H x K), w2.npy (N x H) for the MLP), the biases (b.npy, b1.npy,
    b2.npy), and DIR/ref.npy, DIR/scale.npy: the float64 reference of
    nn.Linear (x A^T + b) or of fc2(gelu(fc1(x))) (erf GELU) from the values
    as stored, and the error scale of each element (linear: sum |x||A| + |b|;
    MLP: sum_h |A2_jh| (1.13 s_h + |gelu(h)|) + |b2_j|, s_h the first
    linear's scale, 1.13 bounding |gelu'|).
  exporter_forms.py split --dir DIR --world-size W [--dim D --bounds b0,...,bW]
      --out-dir OUT
    writes OUT/ref.{r}.npy and OUT/scale.{r}.npy: rank r's part of the
    reference (its chunk along D, or the whole for a replicated result), for
    `npytool.py check --dir OUT --out 'y.{rank}.npy' --world-size W`.

Standard library only, like npytool.py (which this reuses).
"""
import argparse
import math
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "testing", "tools"))
import npytool as n  # noqa: E402


def gelu(v):
    return 0.5 * v * (1.0 + math.erf(v / math.sqrt(2.0)))


def linear(x, rows, k, w, b, nout):
    """x A^T + b and its scale, row-major."""
    y, s = [], []
    for i in range(rows):
        xi = x[i * k:(i + 1) * k]
        for j in range(nout):
            wj = w[j * k:(j + 1) * k]
            y.append(math.fsum(p * q for p, q in zip(xi, wj)) + b[j])
            s.append(math.fsum(abs(p * q) for p, q in zip(xi, wj)) + abs(b[j]))
    return y, s


def gen(a):
    rng = random.Random(a.seed)
    os.makedirs(a.out_dir, exist_ok=True)
    descr = n.DESCR[a.dtype]
    lead = n.parse_batch(a.x_shape)
    rows = 1
    for d in lead:
        rows *= d

    def values(count):
        return [n.round_to(a.dtype, n.nonzero(rng)) for _ in range(count)]

    def save(name, shape, v):
        n.write_npy(os.path.join(a.out_dir, name), descr, shape, v)

    x = values(rows * a.k)
    save("x.npy", tuple(lead + [a.k]), x)
    if a.case == "linear":
        w = values(a.n * a.k)
        b = values(a.n) if a.bias else [0.0] * a.n
        save("w.npy", (a.n, a.k), w)
        if a.bias:
            save("b.npy", (a.n,), b)
        y, s = linear(x, rows, a.k, w, b, a.n)
    else:
        hid = a.hidden
        w1, b1, w2, b2 = values(hid * a.k), values(hid), values(a.n * hid), values(a.n)
        save("w1.npy", (hid, a.k), w1)
        save("b1.npy", (hid,), b1)
        save("w2.npy", (a.n, hid), w2)
        save("b2.npy", (a.n,), b2)
        h, hs = linear(x, rows, a.k, w1, b1, hid)
        act = [gelu(v) for v in h]
        y, s = [], []
        for i in range(rows):
            ai, si = act[i * hid:(i + 1) * hid], hs[i * hid:(i + 1) * hid]
            for j in range(a.n):
                wj = w2[j * hid:(j + 1) * hid]
                y.append(math.fsum(p * q for p, q in zip(ai, wj)) + b2[j])
                s.append(math.fsum(abs(q) * (1.13 * t + abs(p)) for p, q, t in zip(ai, wj, si)) + abs(b2[j]))
    n.write_npy(os.path.join(a.out_dir, "ref.npy"), "<f8", tuple(lead + [a.n]), y)
    n.write_npy(os.path.join(a.out_dir, "scale.npy"), "<f8", tuple(lead + [a.n]), s)
    return 0


def chunk(shape, values, dim, lo, hi):
    """The slice [lo, hi) of dim `dim` of a row-major array."""
    inner = 1
    for d in shape[dim + 1:]:
        inner *= d
    outer = len(values) // (shape[dim] * inner) if values else 0
    out = []
    for o in range(outer):
        base = o * shape[dim] * inner
        out += values[base + lo * inner:base + hi * inner]
    return tuple(shape[:dim]) + (hi - lo,) + tuple(shape[dim + 1:]), out


def split(a):
    os.makedirs(a.out_dir, exist_ok=True)
    for name in ("ref", "scale"):
        _, shape, v = n.read_npy(os.path.join(a.dir, name + ".npy"))
        for r in range(a.world_size):
            part_shape, part = tuple(shape), v
            if a.dim is not None:
                bounds = [int(t) for t in a.bounds.split(",")]
                if len(bounds) != a.world_size + 1:
                    raise SystemExit("--bounds: %d values for %d ranks" % (len(bounds), a.world_size))
                part_shape, part = chunk(list(shape), v, a.dim, bounds[r], bounds[r + 1])
            n.write_npy(os.path.join(a.out_dir, "%s.%d.npy" % (name, r)), "<f8", part_shape, part)
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("gen")
    g.add_argument("--case", choices=("linear", "mlp"), required=True)
    g.add_argument("--x-shape", required=True)
    g.add_argument("--k", type=int, required=True)
    g.add_argument("--n", type=int, required=True)
    g.add_argument("--hidden", type=int, default=0)
    g.add_argument("--bias", action="store_true")
    g.add_argument("--dtype", default="f32", choices=sorted(n.DESCR))
    g.add_argument("--seed", type=int, default=0)
    g.add_argument("--out-dir", required=True)
    s = sub.add_parser("split")
    s.add_argument("--dir", required=True)
    s.add_argument("--world-size", type=int, required=True)
    s.add_argument("--dim", type=int)
    s.add_argument("--bounds", default="")
    s.add_argument("--out-dir", required=True)
    a = p.parse_args()
    return gen(a) if a.cmd == "gen" else split(a)


if __name__ == "__main__":
    sys.exit(main())
