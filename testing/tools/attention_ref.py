#!/usr/bin/env python3
"""Inputs and float64 references for issue 41's attention programs run by
shardlin-run (docs/attention.md), and the check of every rank's output.

  attention_ref.py gen-block --hq HQ --hkv HKV --world-size W [--head-dim 4]
      [--seq 4] [--features 8] [--dtype f32|bf16|f16] [--mask] [--dynamic]
      [--seed S] --out-dir DIR
      writes DIR/block.mlir, an attention sub-block in shardlin IR (entry
      @block): q = x Wq^T and k, v (col-wise shardlin.linear in whole GQA
      groups when W <= Hkv; replicated shardlin.gemm when W > Hkv), rope on q
      and k, causal attention with head_dim D (scale 1/sqrt(D)), [an additive
      replicated mask], y = o Wo^T row-wise; x [S, K] per rank, one sequence
      each (S `?` with --dynamic). Also DIR/x.{rank}.npy (distinct per rank),
      the global weights DIR/wq.npy, wk.npy, wv.npy, wo.npy, DIR/cos.npy,
      DIR/sin.npy (RoPE tables of positions 1..S, so no sin is zero),
      DIR/mask.npy, and DIR/ref.{rank}.npy: the float64 result on each rank's
      x from the values as stored (after rounding to the dtype).
  attention_ref.py gen-layer [--seed S] --out-dir DIR
      inputs of examples/attention/layer.mlir (3 ranks, x [8, 24] each,
      Hq = 6, Hkv = 2, D = 4, SwiGLU width 40) in its argument order x, n1,
      wq, wk, wv, wo, cos, sin, n2, wg, wu, wd, and the float64 reference of
      the whole layer (RMSNorm, QKV, rope, attention, O, residual, RMSNorm,
      SwiGLU, residual) per rank.
  attention_ref.py check --dir DIR --out PATTERN --world-size W --dtype D
      [--bound B]
      every rank's output (PATTERN with {rank}) against DIR/ref.{rank}.npy:
      max |out - ref| / max |ref| (over all ranks) must stay under B (f32
      1e-5, f16 2^-8, bf16 3 * 2^-8: three units of bf16's 2^-8); prints
      "ok: N ranks, relative error E (bound B)" or "MISMATCH: ..." and exits
      1. A rank with no rows of output is compared for its shape too.

Random values are uniform in +-[0.25, 1] (never zero); weights are scaled by
1/sqrt(fan-in). Only the Python standard library is used (npytool.py's .npy
reader and writer and its rounding to f16/bf16/f32), as in the other test
tools: the tests' python3 need not have NumPy.
"""
import argparse
import math
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import npytool  # noqa: E402

BOUNDS = {"f32": 1e-5, "f16": 2.0**-8, "bf16": 3 * 2.0**-8, "f64": 1e-12}
MLIR_TYPE = {"f32": "f32", "f16": "f16", "bf16": "bf16", "f64": "f64"}

# Matrices are lists of rows (lists of Python floats, i.e. float64).


def matmul_t(a, b):
    """a [M, K] times b [N, K] transposed: [M, N]."""
    return [[math.fsum(x * y for x, y in zip(row, col)) for col in b] for row in a]


def add(a, b):
    return [[x + y for x, y in zip(ra, rb)] for ra, rb in zip(a, b)]


def rounded(a, dtype):
    """a as dtype stores it (a matrix or a vector)."""
    if a and isinstance(a[0], list):
        return [[npytool.round_to(dtype, x) for x in row] for row in a]
    return [npytool.round_to(dtype, x) for x in a]


def save(path, a, dtype):
    if a and isinstance(a[0], list):
        shape, flat = [len(a), len(a[0])], [x for row in a for x in row]
    else:
        shape, flat = [len(a)], list(a)
    npytool.write_npy(path, npytool.DESCR[dtype], shape, flat)


def save_ref(path, a):
    save(path, a, "f64")


def random_matrix(rng, rows, cols, scale=1.0):
    return [[(-1.0 if rng.random() < 0.5 else 1.0) * rng.uniform(0.25, 1.0) * scale
             for _ in range(cols)] for _ in range(rows)]


def rope_tables(s, d):
    """cos, sin [S, D/2] of positions 1..S, angle p * 10000^(-2i/D)."""
    ang = [[p * 10000.0 ** (-2.0 * i / d) for i in range(d // 2)] for p in range(1, s + 1)]
    return ([[math.cos(x) for x in row] for row in ang],
            [[math.sin(x) for x in row] for row in ang])


def rope(x, cos, sin, d):
    """Rotate-half per head of x [S, H*D]."""
    out = []
    for p, row in enumerate(x):
        y = list(row)
        for h in range(len(row) // d):
            for i in range(d // 2):
                x1, x2 = row[h * d + i], row[h * d + i + d // 2]
                c, s = cos[p][i], sin[p][i]
                y[h * d + i] = x1 * c - x2 * s
                y[h * d + i + d // 2] = x2 * c + x1 * s
        out.append(y)
    return out


def attention(q, k, v, d, hq, hkv, mask=None):
    """Causal GQA attention of one sequence, q [S, Hq*D], k, v [S, Hkv*D]."""
    s, g, scale = len(q), hq // hkv, 1.0 / math.sqrt(d)
    out = [[0.0] * (hq * d) for _ in range(s)]
    for h in range(hq):
        kh = h // g
        for i in range(s):
            sc = []
            for j in range(i + 1):
                dot = math.fsum(q[i][h * d + c] * k[j][kh * d + c] for c in range(d))
                sc.append(scale * dot + (mask[i][j] if mask else 0.0))
            top = max(sc)
            p = [math.exp(x - top) for x in sc]
            total = math.fsum(p)
            for c in range(d):
                out[i][h * d + c] = math.fsum(
                    p[j] * v[j][kh * d + c] for j in range(i + 1)) / total
    return out


def block_mlir(a, t):
    """The attention sub-block of a's configuration in shardlin IR."""
    d, hq, hkv, w, k = a.head_dim, a.hq, a.hkv, a.world_size, a.features
    s = "?" if a.dynamic else str(a.seq)
    g = hq // hkv
    fq, fkv = hq * d, hkv * d
    places = ", ".join(str(i) for i in range(w))
    qblock = g * d if w <= hkv else d
    wq = ("!shardlin.sharded<tensor<%dx%dx%s>, #shardlin.chunk<dim = 0, "
          "placements = [%s], block = %d>>" % (fq, k, t, places, qblock))
    wo = ("!shardlin.sharded<tensor<%dx%dx%s>, #shardlin.chunk<dim = 1, "
          "placements = [%s], block = %d>>" % (k, fq, t, places, qblock))
    x = "tensor<%sx%dx%s>" % (s, k, t)
    tab = "tensor<%sx%dx%s>" % (s, d // 2, t)
    tq, tkv = "tensor<%sx%dx%s>" % (s, fq, t), "tensor<%sx%dx%s>" % (s, fkv, t)
    if w <= hkv:
        wkv = ("!shardlin.sharded<tensor<%dx%dx%s>, #shardlin.chunk<dim = 0, "
               "placements = [%s], block = %d>>" % (fkv, k, t, places, d))
        kv_arg = wkv
        proj = "shardlin.linear %%x, %%%s : (%s, %s) -> %s"
        kv = [proj % (n, x, wkv, tkv) for n in ("wk", "wv")]
    else:
        kv_arg = "tensor<%dx%dx%s> {shardlin.replicated}" % (fkv, k, t)
        wt = "tensor<%dx%dx%s>" % (fkv, k, t)
        kv = ["shardlin.gemm %%x, %%%s transpose_rhs : (%s, %s) -> %s" % (n, x, wt, tkv)
              for n in ("wk", "wv")]
    mask_arg = ", %%m: tensor<%sx%sx%s> {shardlin.replicated}" % (s, s, t) if a.mask else ""
    mask_use = " mask %m" if a.mask else ""
    mask_type = ", tensor<%sx%sx%s>" % (s, s, t) if a.mask else ""
    return "\n".join([
        "// Generated by testing/tools/attention_ref.py gen-block: (Hq, Hkv, W) = "
        "(%d, %d, %d), D = %d, %s." % (hq, hkv, w, d, t),
        "func.func @block(%%x: %s, %%wq: %s, %%wk: %s, %%wv: %s, %%wo: %s, "
        "%%cos: %s {shardlin.replicated}, %%sin: %s {shardlin.replicated}%s) -> %s {"
        % (x, wq, kv_arg, kv_arg, wo, tab, tab, mask_arg, x),
        "  %%q = shardlin.linear %%x, %%wq : (%s, %s) -> %s" % (x, wq, tq),
        "  %%k = %s" % kv[0],
        "  %%v = %s" % kv[1],
        "  %%qr = shardlin.rope %%q, %%cos, %%sin {head_dim = %d : i64} : %s, %s, %s -> %s"
        % (d, tq, tab, tab, tq),
        "  %%kr = shardlin.rope %%k, %%cos, %%sin {head_dim = %d : i64} : %s, %s, %s -> %s"
        % (d, tkv, tab, tab, tkv),
        "  %%a = shardlin.attention %%qr, %%kr, %%v%s {head_dim = %d : i64, causal} : "
        "%s, %s, %s%s -> %s" % (mask_use, d, tq, tkv, tkv, mask_type, tq),
        "  %%y = shardlin.linear %%a, %%wo : (%s, %s) -> %s" % (tq, wo, x),
        "  return %y : " + x,
        "}", ""])


def gen_block(a):
    if a.hq % a.hkv != 0:
        sys.exit("--hq must be a multiple of --hkv")
    os.makedirs(a.out_dir, exist_ok=True)
    rng = random.Random(a.seed)
    t, d, k, s = a.dtype, a.head_dim, a.features, a.seq
    fq, fkv = a.hq * d, a.hkv * d
    w = {"wq": rounded(random_matrix(rng, fq, k, k ** -0.5), t),
         "wk": rounded(random_matrix(rng, fkv, k, k ** -0.5), t),
         "wv": rounded(random_matrix(rng, fkv, k, k ** -0.5), t),
         "wo": rounded(random_matrix(rng, k, fq, fq ** -0.5), t)}
    w["cos"], w["sin"] = (rounded(x, t) for x in rope_tables(s, d))
    if a.mask:
        w["mask"] = rounded(random_matrix(rng, s, s), t)
    for name, v in w.items():
        save(os.path.join(a.out_dir, name + ".npy"), v, t)
    for r in range(a.world_size):
        x = rounded(random_matrix(rng, s, k), t)
        save(os.path.join(a.out_dir, "x.%d.npy" % r), x, t)
        q = rope(matmul_t(x, w["wq"]), w["cos"], w["sin"], d)
        kk = rope(matmul_t(x, w["wk"]), w["cos"], w["sin"], d)
        o = attention(q, kk, matmul_t(x, w["wv"]), d, a.hq, a.hkv, w.get("mask"))
        save_ref(os.path.join(a.out_dir, "ref.%d.npy" % r), matmul_t(o, w["wo"]))
    with open(os.path.join(a.out_dir, "block.mlir"), "w") as f:
        f.write(block_mlir(a, MLIR_TYPE[t]))


def rms_norm(x, w, eps=1e-5):
    out = []
    for row in x:
        r = 1.0 / math.sqrt(math.fsum(v * v for v in row) / len(row) + eps)
        out.append([v * r * c for v, c in zip(row, w)])
    return out


def gen_layer(a):
    """examples/attention/layer.mlir's inputs and float64 reference."""
    os.makedirs(a.out_dir, exist_ok=True)
    rng = random.Random(a.seed)
    w, s, h, d, hq, hkv, f = 3, 8, 24, 4, 6, 2, 40
    t = "f32"
    p = {"n1": random_matrix(rng, 1, h)[0],
         "wq": random_matrix(rng, hq * d, h, h ** -0.5),
         "wk": random_matrix(rng, hkv * d, h, h ** -0.5),
         "wv": random_matrix(rng, hkv * d, h, h ** -0.5),
         "wo": random_matrix(rng, h, hq * d, (hq * d) ** -0.5),
         "n2": random_matrix(rng, 1, h)[0],
         "wg": random_matrix(rng, f, h, h ** -0.5),
         "wu": random_matrix(rng, f, h, h ** -0.5),
         "wd": random_matrix(rng, h, f, f ** -0.5)}
    p["cos"], p["sin"] = rope_tables(s, d)
    p = {n: rounded(v, t) for n, v in p.items()}
    for n, v in p.items():
        save(os.path.join(a.out_dir, n + ".npy"), v, t)
    for r in range(w):
        x = rounded(random_matrix(rng, s, h), t)
        save(os.path.join(a.out_dir, "x.%d.npy" % r), x, t)
        h1 = rms_norm(x, p["n1"])
        q = rope(matmul_t(h1, p["wq"]), p["cos"], p["sin"], d)
        k = rope(matmul_t(h1, p["wk"]), p["cos"], p["sin"], d)
        o = attention(q, k, matmul_t(h1, p["wv"]), d, hq, hkv)
        hh = add(x, matmul_t(o, p["wo"]))
        h2 = rms_norm(hh, p["n2"])
        g, u = matmul_t(h2, p["wg"]), matmul_t(h2, p["wu"])
        act = [[gv / (1.0 + math.exp(-gv)) * uv for gv, uv in zip(gr, ur)]
               for gr, ur in zip(g, u)]
        save_ref(os.path.join(a.out_dir, "ref.%d.npy" % r), add(hh, matmul_t(act, p["wd"])))


def load(path, dtype):
    """shape and values (floats) of an output, checked to be dtype's."""
    descr, shape, values = npytool.read_npy(path)
    if not npytool.descr_matches(descr, dtype):
        sys.exit("%s holds %s, not %s" % (path, descr, dtype))
    return list(shape), values


def check(a):
    bound = a.bound if a.bound is not None else BOUNDS[a.dtype]
    refs, outs = [], []
    for r in range(a.world_size):
        ref = load(os.path.join(a.dir, "ref.%d.npy" % r), "f64")
        out = load(a.out.replace("{rank}", str(r)), a.dtype)
        if out[0] != ref[0]:
            print("MISMATCH: rank %d's output has shape %s, the reference %s"
                  % (r, out[0], ref[0]))
            return 1
        if not all(math.isfinite(x) for x in out[1]):
            print("MISMATCH: rank %d's output is not finite" % r)
            return 1
        refs.append(ref[1])
        outs.append(out[1])
    mag = max(abs(x) for ref in refs for x in ref)
    worst, where = 0.0, 0
    for r, (ref, out) in enumerate(zip(refs, outs)):
        e = max((abs(x - y) for x, y in zip(out, ref)), default=0.0) / mag
        if e > worst:
            worst, where = e, r
    if not worst <= bound:
        print("MISMATCH: rank %d relative error %.3g exceeds %.3g"
              % (where, worst, bound))
        return 1
    print("ok: %d ranks, relative error %.3g (bound %.3g)"
          % (a.world_size, worst, bound))
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("gen-block")
    b.add_argument("--hq", type=int, required=True)
    b.add_argument("--hkv", type=int, required=True)
    b.add_argument("--world-size", type=int, required=True)
    b.add_argument("--head-dim", type=int, default=4)
    b.add_argument("--seq", type=int, default=4)
    b.add_argument("--features", type=int, default=8)
    b.add_argument("--dtype", choices=sorted(MLIR_TYPE), default="f32")
    b.add_argument("--mask", action="store_true")
    b.add_argument("--dynamic", action="store_true")
    b.add_argument("--seed", type=int, default=0)
    b.add_argument("--out-dir", required=True)
    lay = sub.add_parser("gen-layer")
    lay.add_argument("--seed", type=int, default=0)
    lay.add_argument("--out-dir", required=True)
    c = sub.add_parser("check")
    c.add_argument("--dir", required=True)
    c.add_argument("--out", required=True)
    c.add_argument("--world-size", type=int, required=True)
    c.add_argument("--dtype", choices=sorted(BOUNDS), default="f32")
    c.add_argument("--bound", type=float)
    a = p.parse_args()
    if a.cmd == "gen-block":
        gen_block(a)
    elif a.cmd == "gen-layer":
        gen_layer(a)
    else:
        return check(a)
    return 0


if __name__ == "__main__":
    sys.exit(main())
