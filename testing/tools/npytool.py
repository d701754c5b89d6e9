#!/usr/bin/env python3
"""Makes inputs for shardlin programs and checks their outputs, with only the
Python standard library (no NumPy needed).

  npytool.py gen-linear --n N --k K --batch-shape 5 --world-size W \
      [--dtype f32] [--bf16-descr '<V2'|'<u2'] [--bias] [--seed S] --out-dir DIR
      (--batch-shape may list one shape per rank: 2x3,0x3,1x3)
      writes DIR/x.{rank}.npy (distinct random inputs per rank), DIR/w.npy
      (the global N x K weight), DIR/b.npy, and DIR/ref.{rank}.npy, the dense
      float64 reference y_r = x_r A^T + b computed from the values as stored
      (after rounding to the dtype), plus DIR/scale.{rank}.npy, the per-element
      error scale sum_k |x_k||A_jk| + |b_j|.
  npytool.py check --dir DIR --out PATTERN --world-size W --dtype f32
      [--bound B]
      compares every rank's output with the reference; the error of each
      element, divided by its scale, must stay under the dtype's bound (or B,
      which the blocks' suite writes per configuration).
  npytool.py gen-mlp --k K --hidden H --n N --rows R --world-size W \
      [--dtype bf16] [--seed S] --out-dir DIR
      a two-linear MLP without biases, y_r = relu(x_r A^T) B^T: writes
      DIR/x.{rank}.npy (R x K), DIR/w1.npy (H x K), DIR/w2.npy (N x H), the
      float64 reference and scale of y in DIR/ref.{rank}.npy and
      DIR/scale.{rank}.npy (the scale bounds the hidden layer's error too:
      sum_h |B_jh| s_h, s_h the first layer's scale), and those of the hidden
      relu(x_r A^T) in DIR/h/.
  npytool.py safetensors --out FILE NAME=ARRAY.npy ...
      writes a safetensors file by the format's rules (an 8-byte
      little-endian header length, the JSON header padded with spaces to a
      multiple of 8, the tensors' bytes): dtype F16, BF16 (from '<V2', '|V2'
      or '<u2'), F32 or F64.
  npytool.py show FILE      prints an array.

Wherever an array is read (check --out, show), FILE.safetensors:NAME names
the tensor NAME of a safetensors file.

bf16 arrays are written as ml_dtypes writes them, descr '<V2' (two opaque
bytes per element, the bf16 bit patterns; `np.load(f).view(ml_dtypes.bfloat16)`
reads them as bf16), or as '<u2' with --bf16-descr '<u2'. Both, and '|V2',
are read as bf16.
"""
import argparse
import ast
import json
import math
import os
import random
import struct
import sys

DESCR = {"f16": "<f2", "bf16": "<V2", "f32": "<f4", "f64": "<f8"}
# The descrs that hold bf16 bit patterns (what shardlin reads as bf16).
BF16_DESCRS = ("<V2", "|V2", "<u2")
FMT = {"<f2": "e", "<V2": "H", "|V2": "H", "<u2": "H", "<f4": "f", "<f8": "d"}


def descr_matches(descr, dtype):
    """Whether an array of descr holds dtype's elements, as shardlin reads it."""
    if dtype == "bf16":
        return descr in BF16_DESCRS
    return descr == DESCR[dtype]


def bf16_bits(x):
    (u,) = struct.unpack("<I", struct.pack("<f", x))
    if (u & 0x7F800000) == 0x7F800000 and (u & 0x7FFFFF):
        return (u >> 16) | 0x40
    u += 0x7FFF + ((u >> 16) & 1)
    return (u >> 16) & 0xFFFF


def bf16_value(bits):
    return struct.unpack("<f", struct.pack("<I", bits << 16))[0]


def round_to(dtype, x):
    """The value x takes once stored as dtype (as a Python float)."""
    if dtype == "f64":
        return x
    if dtype == "f32":
        return struct.unpack("<f", struct.pack("<f", x))[0]
    if dtype == "f16":
        return struct.unpack("<e", struct.pack("<e", x))[0]
    return bf16_value(bf16_bits(x))


def write_npy(path, descr, shape, values):
    fmt = FMT[descr]
    if descr in BF16_DESCRS:
        payload = struct.pack("<%d%s" % (len(values), fmt), *[bf16_bits(v) for v in values])
    else:
        payload = struct.pack("<%d%s" % (len(values), fmt), *values)
    if len(shape) == 1:
        shape_s = "(%d,)" % shape[0]
    else:
        shape_s = "(" + ", ".join("%d" % d for d in shape) + ")"
    header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape_s)
    total = 10 + len(header) + 1
    header += " " * ((64 - total % 64) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1"))
        f.write(payload)


ST_DTYPE = {"<f2": "F16", "<V2": "BF16", "|V2": "BF16", "<u2": "BF16", "<f4": "F32", "<f8": "F64"}
ST_DESCR = {"F16": "<f2", "BF16": "<V2", "F32": "<f4", "F64": "<f8"}


def npy_raw(path):
    """The descr, shape and raw data bytes of a .npy file."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:6] != b"\x93NUMPY":
        raise ValueError("%s: not a .npy file" % path)
    if data[6] == 1:
        (hlen,) = struct.unpack("<H", data[8:10])
        start = 10
    else:
        (hlen,) = struct.unpack("<I", data[8:12])
        start = 12
    header = ast.literal_eval(data[start:start + hlen].decode("latin1"))
    return header["descr"], tuple(header["shape"]), data[start + hlen:]


def write_safetensors(path, tensors):
    """tensors: (name, descr, shape, raw bytes), in the order of the data."""
    header, at = {}, 0
    for name, descr, shape, raw in tensors:
        header[name] = {"dtype": ST_DTYPE[descr], "shape": list(shape),
                        "data_offsets": [at, at + len(raw)]}
        at += len(raw)
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        for _, _, _, raw in tensors:
            f.write(raw)


def read_safetensors(path, name):
    with open(path, "rb") as f:
        data = f.read()
    (hlen,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + hlen].decode("utf-8"))
    if name not in header:
        raise SystemExit("%s has no tensor %r" % (path, name))
    t = header[name]
    descr = ST_DESCR[t["dtype"]]
    begin, end = t["data_offsets"]
    raw = data[8 + hlen + begin:8 + hlen + end]
    fmt = FMT[descr]
    values = list(struct.unpack("<%d%s" % (len(raw) // struct.calcsize(fmt), fmt), raw))
    if descr in BF16_DESCRS:
        values = [bf16_value(v) for v in values]
    return descr, tuple(t["shape"]), values


def read_npy(path):
    if ".safetensors:" in path:
        at = path.index(".safetensors:") + len(".safetensors")
        return read_safetensors(path[:at], path[at + 1:])
    descr, shape, raw = npy_raw(path)
    count = 1
    for d in shape:
        count *= d
    fmt = FMT[descr]
    values = list(struct.unpack("<%d%s" % (count, fmt), raw[:count * struct.calcsize(fmt)]))
    if descr in BF16_DESCRS:
        values = [bf16_value(v) for v in values]
    return descr, shape, values


def nonzero(rng):
    # Random values bounded away from zero, either sign.
    return rng.uniform(0.25, 1.0) * rng.choice((-1.0, 1.0))


def parse_batch(shape):
    return [int(d) for d in shape.split("x")] if shape else []


def gen_linear(a):
    rng = random.Random(a.seed)
    # One shape for every rank, or one per rank separated by commas (batch
    # sizes that differ between ranks, for dynamic batch dims).
    shapes = a.batch_shape.split(",") if "," in a.batch_shape else [a.batch_shape] * a.world_size
    if len(shapes) != a.world_size:
        raise SystemExit("--batch-shape: %d shapes for %d ranks" % (len(shapes), a.world_size))
    os.makedirs(a.out_dir, exist_ok=True)
    descr = a.bf16_descr if a.dtype == "bf16" else DESCR[a.dtype]
    w = [round_to(a.dtype, nonzero(rng)) for _ in range(a.n * a.k)]
    b = [round_to(a.dtype, nonzero(rng)) for _ in range(a.n)] if a.bias else [0.0] * a.n
    write_npy(os.path.join(a.out_dir, "w.npy"), descr, (a.n, a.k), w)
    if a.bias:
        write_npy(os.path.join(a.out_dir, "b.npy"), descr, (a.n,), b)
    for r in range(a.world_size):
        batch = parse_batch(shapes[r])
        rows = 1
        for d in batch:
            rows *= d
        x = [round_to(a.dtype, nonzero(rng)) for _ in range(rows * a.k)]
        ref, scale = [], []
        for i in range(rows):
            for j in range(a.n):
                acc = math.fsum(x[i * a.k + t] * w[j * a.k + t] for t in range(a.k)) + b[j]
                mag = math.fsum(abs(x[i * a.k + t] * w[j * a.k + t]) for t in range(a.k)) + abs(b[j])
                ref.append(acc)
                scale.append(mag)
        write_npy(os.path.join(a.out_dir, "x.%d.npy" % r), descr, tuple(batch + [a.k]), x)
        write_npy(os.path.join(a.out_dir, "ref.%d.npy" % r), "<f8", tuple(batch + [a.n]), ref)
        write_npy(os.path.join(a.out_dir, "scale.%d.npy" % r), "<f8", tuple(batch + [a.n]), scale)


def gen_mlp(a):
    rng = random.Random(a.seed)
    os.makedirs(os.path.join(a.out_dir, "h"), exist_ok=True)
    descr = DESCR[a.dtype]
    k, hid, n = a.k, a.hidden, a.n
    w1 = [round_to(a.dtype, nonzero(rng)) for _ in range(hid * k)]
    w2 = [round_to(a.dtype, nonzero(rng)) for _ in range(n * hid)]
    write_npy(os.path.join(a.out_dir, "w1.npy"), descr, (hid, k), w1)
    write_npy(os.path.join(a.out_dir, "w2.npy"), descr, (n, hid), w2)
    for r in range(a.world_size):
        x = [round_to(a.dtype, nonzero(rng)) for _ in range(a.rows * k)]
        h, hs, y, ys = [], [], [], []
        for i in range(a.rows):
            xi = x[i * k:(i + 1) * k]
            hrow, srow = [], []
            for j in range(hid):
                wj = w1[j * k:(j + 1) * k]
                hrow.append(max(0.0, math.fsum(p * q for p, q in zip(xi, wj))))
                srow.append(math.fsum(abs(p * q) for p, q in zip(xi, wj)))
            h += hrow
            hs += srow
            for j in range(n):
                wj = w2[j * hid:(j + 1) * hid]
                y.append(math.fsum(p * q for p, q in zip(hrow, wj)))
                ys.append(math.fsum(abs(q) * s for q, s in zip(wj, srow)))
        write_npy(os.path.join(a.out_dir, "x.%d.npy" % r), descr, (a.rows, k), x)
        for d, ref, scale, cols in (("", y, ys, n), ("h", h, hs, hid)):
            out = os.path.join(a.out_dir, d)
            write_npy(os.path.join(out, "ref.%d.npy" % r), "<f8", (a.rows, cols), ref)
            write_npy(os.path.join(out, "scale.%d.npy" % r), "<f8", (a.rows, cols), scale)


def pack_safetensors(a):
    tensors = []
    for spec in a.tensors:
        name, _, path = spec.partition("=")
        descr, shape, raw = npy_raw(path)
        tensors.append((name, descr, shape, raw))
    write_safetensors(a.out, tensors)
    return 0


# Error bounds relative to the scale sum|x||A| + |b| (see
# integration_test/EndToEnd/Reference.h for the derivation): f64 and f32 accumulate
# in their own precision; f16 and bf16 accumulate in f32 but round the output
# once per partial product (up to W partial sums for row-wise) and once more
# at the end.
def bound(dtype, world_size):
    return {"f64": 1e-12, "f32": 1e-5,
            "f16": (world_size + 2) * 2.0 ** -11,
            "bf16": (world_size + 2) * 2.0 ** -8}[dtype]


def check(a):
    worst = 0.0
    limit = a.bound if a.bound is not None else bound(a.dtype, a.world_size)
    for r in range(a.world_size):
        _, rshape, ref = read_npy(os.path.join(a.dir, "ref.%d.npy" % r))
        _, _, scale = read_npy(os.path.join(a.dir, "scale.%d.npy" % r))
        path = a.out.replace("{rank}", str(r))
        descr, shape, out = read_npy(path)
        if not descr_matches(descr, a.dtype):
            print("rank %d: %s has dtype %s, expected %s" % (r, path, descr, DESCR[a.dtype]))
            return 1
        if shape != rshape:
            print("rank %d: %s has shape %s, expected %s" % (r, path, shape, rshape))
            return 1
        for i, (o, e, s) in enumerate(zip(out, ref, scale)):
            err = abs(o - e) / max(s, 1e-30)
            if not err <= limit:
                print("rank %d: element %d is %r, reference %r (relative error %.3g > %.3g)" % (r, i, o, e, err, limit))
                return 1
            worst = max(worst, err)
    print("ok: %d ranks, max relative error %.3g (bound %.3g)" % (a.world_size, worst, limit))
    return 0


def show(a):
    descr, shape, values = read_npy(a.file)
    print("%s %s" % (descr, shape))
    cols = shape[-1] if shape else 1
    for i in range(0, len(values), max(cols, 1)):
        print("  " + " ".join("%9.4f" % v for v in values[i:i + cols]))
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("gen-linear")
    g.add_argument("--n", type=int, required=True)
    g.add_argument("--k", type=int, required=True)
    g.add_argument("--batch-shape", default="5",
                   help="e.g. 5, 2x3, or '' for a 1-D input; or one per rank, "
                        "separated by commas (2x3,0x3,1x3)")
    g.add_argument("--world-size", type=int, required=True)
    g.add_argument("--dtype", default="f32", choices=sorted(DESCR))
    g.add_argument("--bf16-descr", default="<V2", choices=BF16_DESCRS,
                   help="the descr bf16 arrays are written with (default '<V2', as ml_dtypes writes them)")
    g.add_argument("--bias", action="store_true")
    g.add_argument("--seed", type=int, default=1)
    g.add_argument("--out-dir", required=True)
    c = sub.add_parser("check")
    c.add_argument("--dir", required=True)
    c.add_argument("--out", required=True)
    c.add_argument("--world-size", type=int, required=True)
    c.add_argument("--dtype", default="f32", choices=sorted(DESCR))
    c.add_argument("--bound", type=float,
                   help="the bound on |y - ref| / scale (default: the linear "
                        "layer's for the dtype and W; a block's suite gives its own)")
    m = sub.add_parser("gen-mlp")
    for opt in ("--k", "--hidden", "--n", "--rows", "--world-size"):
        m.add_argument(opt, type=int, required=True)
    m.add_argument("--dtype", default="bf16", choices=sorted(DESCR))
    m.add_argument("--seed", type=int, default=1)
    m.add_argument("--out-dir", required=True)
    t = sub.add_parser("safetensors")
    t.add_argument("--out", required=True)
    t.add_argument("tensors", nargs="+", help="NAME=ARRAY.npy")
    s = sub.add_parser("show")
    s.add_argument("file")
    a = p.parse_args()
    if a.cmd == "gen-linear":
        gen_linear(a)
        return 0
    if a.cmd == "gen-mlp":
        gen_mlp(a)
        return 0
    if a.cmd == "safetensors":
        return pack_safetensors(a)
    if a.cmd == "check":
        return check(a)
    return show(a)


if __name__ == "__main__":
    sys.exit(main())
