#!/usr/bin/env python3
"""An exporter-style module with random weights, and its float64 reference.

The tests' modules are torch-mlir FX importer output (weights and biases as
`dense_resource` blobs of the module's `dialect_resources`), annotated with
shard ops. This tool gives their blobs random values, so that a test knows
them, and checks what shardlin computes with them against float64, with only
the Python standard library (testing/tools/npytool.py's npy IO).

  exported_module.py fill TEMPLATE --out-dir DIR [--dtype f32] [--seed S]
      --x-shape 6,40
      writes DIR/module.mlir: TEMPLATE with every blob rewritten with random
      values (of --dtype, the template's f32 replaced by it), DIR/NAME.npy for
      each blob NAME, and DIR/x.npy, a random input of that shape.
  exported_module.py check --model lin|mlp --dir DIR --out PATTERN
      --world-size W [--bound B]
      computes the float64 reference of the model from DIR's files as stored
      (lin: y = x fc.weight^T + fc.bias; mlp: y = fc2(gelu(fc1(x))), GELU by
      erf; affine: y = x * norm.weight + norm.bias + pos.table, the vectors
      along the features) and compares every rank's output (PATTERN with {rank}) with it:
      |y - ref| must stay under B times the element's scale (the sum of the
      absolute values of its products and bias, through both layers for the
      mlp) for every element. Prints "ok: W ranks, max error E (bound B)".
"""
import argparse
import math
import os
import random
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "testing", "tools"))
import npytool  # noqa: E402

SIZE = {"f16": 2, "bf16": 2, "f32": 4, "f64": 8}
PACK = {"f16": "e", "f32": "f", "f64": "d"}
BOUND = {"f64": 1e-12, "f32": 1e-5, "f16": 2e-3, "bf16": 1.6e-2}


def to_bytes(dtype, values):
    import struct
    if dtype == "bf16":
        return struct.pack("<%dH" % len(values), *[npytool.bf16_bits(v) for v in values])
    return struct.pack("<%d%s" % (len(values), PACK[dtype]), *values)


def random_values(rng, dtype, count):
    return [npytool.round_to(dtype, npytool.nonzero(rng)) for _ in range(count)]


def fill(a):
    text = open(a.template).read()
    if a.dtype != "f32":
        text = re.sub(r"\bf32\b", a.dtype, text)
        text = re.sub(r"x" + "f32" + ">", "x%s>" % a.dtype, text)
    rng = random.Random(a.seed)
    os.makedirs(a.out_dir, exist_ok=True)
    types = dict(re.findall(r"dense_resource<([\w.]+)> : tensor<([0-9x]+)x\w+>", text))

    def blob(m):
        name = m.group(1)
        shape = [int(d) for d in types[name].split("x")]
        count = 1
        for d in shape:
            count *= d
        values = random_values(rng, a.dtype, count)
        npytool.write_npy(os.path.join(a.out_dir, name + ".npy"),
                          npytool.DESCR[a.dtype], shape, values)
        align = SIZE[a.dtype].to_bytes(4, "little")
        return '%s: "0x%s"' % (name, (align + to_bytes(a.dtype, values)).hex().upper())

    text = re.sub(r'([\w.]+): "0x[0-9A-Fa-f]*"', blob, text)
    open(os.path.join(a.out_dir, "module.mlir"), "w").write(text)
    shape = [int(d) for d in a.x_shape.split(",")]
    count = 1
    for d in shape:
        count *= d
    npytool.write_npy(os.path.join(a.out_dir, "x.npy"), npytool.DESCR[a.dtype],
                      shape, random_values(rng, a.dtype, count))


def load(path):
    _, shape, values = npytool.read_npy(path)
    return shape, values


def linear(x, xs, w, b, n, k, rows):
    """x W^T + b and its scale (xs: the scale of x, or |x|)."""
    y, s = [], []
    for r in range(rows):
        for j in range(n):
            acc = b[j]
            sc = abs(b[j])
            for i in range(k):
                acc += x[r * k + i] * w[j * k + i]
                sc += xs[r * k + i] * abs(w[j * k + i])
            y.append(acc)
            s.append(sc)
    return y, s


def reference(a):
    d = a.dir
    (rows, k), x = load(os.path.join(d, "x.npy"))
    if a.model == "affine":
        _, w = load(os.path.join(d, "norm.weight.npy"))
        _, b = load(os.path.join(d, "norm.bias.npy"))
        _, pos = load(os.path.join(d, "pos.table.npy"))
        y = [x[i] * w[i % k] + b[i % k] + pos[i] for i in range(rows * k)]
        s = [abs(x[i] * w[i % k]) + abs(b[i % k]) + abs(pos[i]) for i in range(rows * k)]
        return y, s
    if a.model == "lin":
        (n, _), w = load(os.path.join(d, "fc.weight.npy"))
        _, b = load(os.path.join(d, "fc.bias.npy"))
        return linear(x, [abs(v) for v in x], w, b, n, k, rows)
    (h, _), w1 = load(os.path.join(d, "fc1.weight.npy"))
    _, b1 = load(os.path.join(d, "fc1.bias.npy"))
    (n, _), w2 = load(os.path.join(d, "fc2.weight.npy"))
    _, b2 = load(os.path.join(d, "fc2.bias.npy"))
    z, zs = linear(x, [abs(v) for v in x], w1, b1, h, k, rows)
    g = [v * 0.5 * (1.0 + math.erf(v / math.sqrt(2.0))) for v in z]
    # |gelu'| <= 1.13: the hidden error's scale, plus the value's own.
    gs = [1.13 * s + abs(v) for s, v in zip(zs, g)]
    return linear(g, gs, w2, b2, n, h, rows)


def check(a):
    ref, scale = reference(a)
    bound = a.bound if a.bound is not None else BOUND[a.dtype]
    worst = 0.0
    for r in range(a.world_size):
        path = a.out.replace("{rank}", str(r))
        _, y = load(path)
        if len(y) != len(ref):
            sys.exit("rank %d: %s has %d elements, the reference %d" % (r, path, len(y), len(ref)))
        for i, (v, e, s) in enumerate(zip(y, ref, scale)):
            err = abs(v - e) / s
            if not err <= bound:
                sys.exit("rank %d: element %d is %r, the reference %r (error %.3g of its scale, bound %.3g)"
                         % (r, i, v, e, err, bound))
            worst = max(worst, err)
    print("ok: %d ranks, max error %.3g (bound %.3g)" % (a.world_size, worst, bound))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    f = sub.add_parser("fill")
    f.add_argument("template")
    f.add_argument("--out-dir", required=True)
    f.add_argument("--dtype", default="f32", choices=sorted(SIZE))
    f.add_argument("--seed", type=int, default=0)
    f.add_argument("--x-shape", required=True)
    c = sub.add_parser("check")
    c.add_argument("--model", required=True, choices=["lin", "mlp", "affine"])
    c.add_argument("--dir", required=True)
    c.add_argument("--out", required=True)
    c.add_argument("--world-size", type=int, required=True)
    c.add_argument("--dtype", default="f32", choices=sorted(SIZE))
    c.add_argument("--bound", type=float)
    a = p.parse_args()
    fill(a) if a.cmd == "fill" else check(a)


if __name__ == "__main__":
    main()
