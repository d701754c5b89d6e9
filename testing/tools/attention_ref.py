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
  attention_ref.py gen-block ... --replicated
      x replicated (one sequence, the same file for every rank) and every
      linear `layouts replicated -> replicated`: the block that lowers to one
      all_reduce of O's partial products; the reference is the same on every
      rank.
  attention_ref.py gen-block ... --grad / gen-layer ... --grad
      also the backward's inputs and float64 references (the loss is
      sum_r <dy_r, y_r>): DIR/dy.{rank}.npy (random, the dtype's), and
      DIR/dx.ref.{rank}.npy and DIR/d<NAME>.ref.npy for every weight NAME
      (wq, wk, wv, wo; the layer's n1, n2, wg, wu, wd too): each the whole
      gradient, summed over every rank's sequences.
  attention_ref.py check-grads --dir DIR --world-size W [--dtype D]
      [--bound B] --grad NAME=PATTERN ...
      every rank's gradient NAME (x: DIR/dx.ref.{rank}.npy; else
      DIR/dNAME.ref.npy, which every rank's file, PATTERN with {rank}, or the
      one assembled file, PATTERN without it, must match): max |out - ref| /
      max |ref| under B (f32 1e-5, f16 2^-8, bf16 8 * 2^-8); prints "ok: NAME ..." per
      gradient and "ok: N gradients", or "MISMATCH: ..." and exits 1.
  attention_ref.py fd-check
      the float64 backward above against central finite differences of the
      loss (h = 1e-6): every element of a block's inputs ((Hq, Hkv) = (4,
      2), 3 sequences, a mask) and sampled elements of the layer's; prints
      "ok: finite differences ..." or "MISMATCH: ..." and exits 1 above a
      relative error of 1e-6.
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


def matmul(a, b):
    """a [M, K] times b [K, N]: [M, N]."""
    return matmul_t(a, transpose(b))


def transpose(a):
    return [list(col) for col in zip(*a)]


def acc(total, name, m):
    """total[name] += m (matrices or vectors)."""
    if name not in total:
        total[name] = m
    elif m and isinstance(m[0], list):
        total[name] = add(total[name], m)
    else:
        total[name] = [x + y for x, y in zip(total[name], m)]


def attention_bwd(q, k, v, do, d, hq, hkv, mask=None):
    """dq, dk, dv of <do, attention(q, k, v)> (one sequence, causal)."""
    s, g, scale = len(q), hq // hkv, 1.0 / math.sqrt(d)
    dq = [[0.0] * (hq * d) for _ in range(s)]
    dk = [[0.0] * (hkv * d) for _ in range(s)]
    dv = [[0.0] * (hkv * d) for _ in range(s)]
    for h in range(hq):
        kh = h // g
        for i in range(s):
            sc = [scale * math.fsum(q[i][h * d + c] * k[j][kh * d + c] for c in range(d))
                  + (mask[i][j] if mask else 0.0) for j in range(i + 1)]
            top = max(sc)
            e = [math.exp(x - top) for x in sc]
            total = math.fsum(e)
            p = [x / total for x in e]
            dp = [math.fsum(do[i][h * d + c] * v[j][kh * d + c] for c in range(d))
                  for j in range(i + 1)]
            mean = math.fsum(pj * dpj for pj, dpj in zip(p, dp))
            for j in range(i + 1):
                ds = p[j] * (dp[j] - mean)
                for c in range(d):
                    dv[j][kh * d + c] += p[j] * do[i][h * d + c]
                    dq[i][h * d + c] += scale * ds * k[j][kh * d + c]
                    dk[j][kh * d + c] += scale * ds * q[i][h * d + c]
    return dq, dk, dv


def rope_inv(x, cos, sin, d):
    """The transpose of rope: the rotation by the opposite angle."""
    return rope(x, cos, [[-v for v in row] for row in sin], d)


def rms_norm_bwd(x, w, g, eps=1e-5):
    """dx and dw of <g, rms_norm(x, w)>."""
    n = len(w)
    dx, dw = [], [0.0] * n
    for row, grow in zip(x, g):
        r = 1.0 / math.sqrt(math.fsum(v * v for v in row) / n + eps)
        gw = [gv * c for gv, c in zip(grow, w)]
        dot = math.fsum(a * b for a, b in zip(gw, row))
        dx.append([r * a - r ** 3 * v / n * dot for a, v in zip(gw, row)])
        dw = [acc_v + gv * v * r for acc_v, gv, v in zip(dw, grow, row)]
    return dx, dw


def attention_sub(h, p, d, hq, hkv, mask=None):
    """o Wo^T of the attention sub-block on one sequence h, and its values."""
    q0, k0, v = matmul_t(h, p["wq"]), matmul_t(h, p["wk"]), matmul_t(h, p["wv"])
    q, k = rope(q0, p["cos"], p["sin"], d), rope(k0, p["cos"], p["sin"], d)
    o = attention(q, k, v, d, hq, hkv, mask)
    return matmul_t(o, p["wo"]), (q, k, v, o)


def attention_sub_bwd(h, dy, p, vals, d, hq, hkv, grads, mask=None):
    """dh of <dy, attention_sub(h)>; the weights' gradients added to grads."""
    q, k, v, o = vals
    do = matmul(dy, p["wo"])
    acc(grads, "wo", matmul(transpose(dy), o))
    dq, dk, dv = attention_bwd(q, k, v, do, d, hq, hkv, mask)
    dq0 = rope_inv(dq, p["cos"], p["sin"], d)
    dk0 = rope_inv(dk, p["cos"], p["sin"], d)
    for name, dm in (("wq", dq0), ("wk", dk0), ("wv", dv)):
        acc(grads, name, matmul(transpose(dm), h))
    return add(add(matmul(dq0, p["wq"]), matmul(dk0, p["wk"])), matmul(dv, p["wv"]))


def block_grads(xs, dys, p, d, hq, hkv):
    """Every sequence's dx and the weights' gradients of sum_r <dy_r, y_r>."""
    grads, dxs = {}, []
    for x, dy in zip(xs, dys):
        _, vals = attention_sub(x, p, d, hq, hkv, p.get("mask"))
        dxs.append(attention_sub_bwd(x, dy, p, vals, d, hq, hkv, grads, p.get("mask")))
    return dxs, grads


def silu(v):
    return v / (1.0 + math.exp(-v))


LAYER = {"w": 3, "s": 8, "h": 24, "d": 4, "hq": 6, "hkv": 2, "f": 40}


def layer_forward(x, p, c=LAYER):
    """examples/attention/layer.mlir on one sequence, and its values."""
    d, hq, hkv = c["d"], c["hq"], c["hkv"]
    h1 = rms_norm(x, p["n1"])
    att, avals = attention_sub(h1, p, d, hq, hkv)
    hh = add(x, att)
    h2 = rms_norm(hh, p["n2"])
    g, u = matmul_t(h2, p["wg"]), matmul_t(h2, p["wu"])
    act = [[silu(gv) * uv for gv, uv in zip(gr, ur)] for gr, ur in zip(g, u)]
    return add(hh, matmul_t(act, p["wd"])), (h1, avals, hh, h2, g, u, act)


def layer_grads(xs, dys, p, c=LAYER):
    d, hq, hkv = c["d"], c["hq"], c["hkv"]
    grads, dxs = {}, []
    for x, dy in zip(xs, dys):
        _, (h1, avals, hh, h2, g, u, act) = layer_forward(x, p, c)
        acc(grads, "wd", matmul(transpose(dy), act))
        dact = matmul(dy, p["wd"])
        du = [[a * silu(gv) for a, gv in zip(ar, gr)] for ar, gr in zip(dact, g)]
        dg = []
        for ar, gr, ur in zip(dact, g, u):
            row = []
            for a, gv, uv in zip(ar, gr, ur):
                sg = 1.0 / (1.0 + math.exp(-gv))
                row.append(a * uv * sg * (1.0 + gv * (1.0 - sg)))
            dg.append(row)
        acc(grads, "wg", matmul(transpose(dg), h2))
        acc(grads, "wu", matmul(transpose(du), h2))
        dh2 = add(matmul(dg, p["wg"]), matmul(du, p["wu"]))
        dhh2, dn2 = rms_norm_bwd(hh, p["n2"], dh2)
        acc(grads, "n2", dn2)
        dhh = add(dy, dhh2)
        dh1 = attention_sub_bwd(h1, dhh, p, avals, d, hq, hkv, grads)
        dx1, dn1 = rms_norm_bwd(x, p["n1"], dh1)
        acc(grads, "n1", dn1)
        dxs.append(add(dhh, dx1))
    return dxs, grads


def save_grads(out_dir, dxs, grads):
    for r, dx in enumerate(dxs):
        save_ref(os.path.join(out_dir, "dx.ref.%d.npy" % r), dx)
    for name, g in grads.items():
        save_ref(os.path.join(out_dir, "d%s.ref.npy" % name), g)


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
    # --replicated: x, y (and dy) the same on every rank, every linear
    # replicated -> replicated (no sequence parallelism).
    lay = " layouts replicated -> replicated" if a.replicated else ""
    x_attr = " {shardlin.replicated}" if a.replicated else ""
    if w <= hkv:
        wkv = ("!shardlin.sharded<tensor<%dx%dx%s>, #shardlin.chunk<dim = 0, "
               "placements = [%s], block = %d>>" % (fkv, k, t, places, d))
        kv_arg = wkv
        proj = "shardlin.linear %%x, %%%s" + lay + " : (%s, %s) -> %s"
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
        "func.func @block(%%x: %s%s, %%wq: %s, %%wk: %s, %%wv: %s, %%wo: %s, "
        "%%cos: %s {shardlin.replicated}, %%sin: %s {shardlin.replicated}%s) -> %s {"
        % (x, x_attr, wq, kv_arg, kv_arg, wo, tab, tab, mask_arg, x),
        "  %%q = shardlin.linear %%x, %%wq%s : (%s, %s) -> %s" % (lay, x, wq, tq),
        "  %%k = %s" % kv[0],
        "  %%v = %s" % kv[1],
        "  %%qr = shardlin.rope %%q, %%cos, %%sin {head_dim = %d : i64} : %s, %s, %s -> %s"
        % (d, tq, tab, tab, tq),
        "  %%kr = shardlin.rope %%k, %%cos, %%sin {head_dim = %d : i64} : %s, %s, %s -> %s"
        % (d, tkv, tab, tab, tkv),
        "  %%a = shardlin.attention %%qr, %%kr, %%v%s {head_dim = %d : i64, causal} : "
        "%s, %s, %s%s -> %s" % (mask_use, d, tq, tkv, tkv, mask_type, tq),
        "  %%y = shardlin.linear %%a, %%wo%s : (%s, %s) -> %s" % (lay, tq, wo, x),
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
    # Replicated: one x (and dy), every rank's file the same; the loss is
    # <dy, y> of that one tensor, and every rank's dx is all of dL / dx.
    seqs = 1 if a.replicated else a.world_size
    xs = [rounded(random_matrix(rng, s, k), t) for _ in range(seqs)]
    for r in range(a.world_size):
        x = xs[r % seqs]
        save(os.path.join(a.out_dir, "x.%d.npy" % r), x, t)
        y, _ = attention_sub(x, w, d, a.hq, a.hkv, w.get("mask"))
        save_ref(os.path.join(a.out_dir, "ref.%d.npy" % r), y)
    if a.grad:
        dys = [rounded(random_matrix(rng, s, k), t) for _ in range(seqs)]
        for r in range(a.world_size):
            save(os.path.join(a.out_dir, "dy.%d.npy" % r), dys[r % seqs], t)
        dxs, grads = block_grads(xs, dys, w, d, a.hq, a.hkv)
        save_grads(a.out_dir, [dxs[r % seqs] for r in range(a.world_size)], grads)
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
    c = LAYER
    w, s, h, d, hq, hkv, f = (c[n] for n in ("w", "s", "h", "d", "hq", "hkv", "f"))
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
    xs = []
    for r in range(w):
        x = rounded(random_matrix(rng, s, h), t)
        xs.append(x)
        save(os.path.join(a.out_dir, "x.%d.npy" % r), x, t)
        save_ref(os.path.join(a.out_dir, "ref.%d.npy" % r), layer_forward(x, p)[0])
    if a.grad:
        dys = [rounded(random_matrix(rng, s, h), t) for _ in range(w)]
        for r, dy in enumerate(dys):
            save(os.path.join(a.out_dir, "dy.%d.npy" % r), dy, t)
        save_grads(a.out_dir, *layer_grads(xs, dys, p))


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


GRAD_BOUNDS = {"f32": 1e-5, "bf16": 8 * 2.0**-8, "f16": 2.0**-8, "f64": 1e-12}


def check_grads(a):
    """Every rank's gradients against the float64 references."""
    bound = a.bound if a.bound is not None else GRAD_BOUNDS[a.dtype]
    for spec in a.grad:
        name, _, pattern = spec.partition("=")
        per_rank = "{rank}" in pattern
        files = [pattern.replace("{rank}", str(r)) for r in range(a.world_size)] \
            if per_rank else [pattern]
        worst, where, mag = 0.0, None, 0.0
        for r, path in enumerate(files):
            ref_path = os.path.join(
                a.dir, "dx.ref.%d.npy" % r if name == "x" else "d%s.ref.npy" % name)
            ref = load(ref_path, "f64")
            out = load(path, a.dtype)
            if out[0] != ref[0]:
                print("MISMATCH: %s of %s has shape %s, the reference %s"
                      % (name, path, out[0], ref[0]))
                return 1
            if not all(math.isfinite(x) for x in out[1]):
                print("MISMATCH: %s of %s is not finite" % (name, path))
                return 1
            m = max((abs(x) for x in ref[1]), default=0.0)
            if m == 0.0:
                print("MISMATCH: the reference %s is all zeros" % ref_path)
                return 1
            e = max((abs(x - y) for x, y in zip(out[1], ref[1])), default=0.0) / m
            mag = max(mag, m)
            if e > worst or where is None:
                worst, where = max(e, worst), path
        if not worst <= bound:
            print("MISMATCH: %s relative error %.3g exceeds %.3g (%s)"
                  % (name, worst, bound, where))
            return 1
        print("ok: %s, %d %s, relative error %.3g (bound %.3g)"
              % (name, len(files), "ranks" if per_rank else "assembled file",
                 worst, bound))
    print("ok: %d gradients" % len(a.grad))
    return 0


def fd_compare(label, loss, tensors, grads, pick, h=1e-6):
    """Central differences of loss() at the elements pick(name, tensor)
    chooses, against grads; the worst relative error (to the gradient's
    largest magnitude)."""
    worst, count = 0.0, 0
    for name, t in tensors.items():
        g = grads[name]
        mag = max(abs(x) for row in g for x in (row if isinstance(row, list) else [row]))
        for idx in pick(name, t):
            holder, j = (t[idx[0]], idx[1]) if len(idx) == 2 else (t, idx[0])
            old = holder[j]
            holder[j] = old + h
            up = loss()
            holder[j] = old - h
            down = loss()
            holder[j] = old
            num = (up - down) / (2 * h)
            ana = g[idx[0]][idx[1]] if len(idx) == 2 else g[idx[0]]
            worst = max(worst, abs(num - ana) / mag)
            count += 1
    print("%s: %d elements, max relative error %.3g" % (label, count, worst))
    return worst, count


def all_elements(name, t):
    if t and isinstance(t[0], list):
        return [(i, j) for i in range(len(t)) for j in range(len(t[0]))]
    return [(i,) for i in range(len(t))]


def fd_check(a):
    bound = 1e-6
    rng = random.Random(7)
    # A block: (Hq, Hkv) = (4, 2), D = 4, 3 sequences of 4, K = 6, a mask.
    d, hq, hkv, s, k = 4, 4, 2, 4, 6
    p = {"wq": random_matrix(rng, hq * d, k, k ** -0.5),
         "wk": random_matrix(rng, hkv * d, k, k ** -0.5),
         "wv": random_matrix(rng, hkv * d, k, k ** -0.5),
         "wo": random_matrix(rng, k, hq * d, (hq * d) ** -0.5),
         "mask": random_matrix(rng, s, s)}
    p["cos"], p["sin"] = rope_tables(s, d)
    xs = [random_matrix(rng, s, k) for _ in range(3)]
    dys = [random_matrix(rng, s, k) for _ in range(3)]

    def dot(a_, b_):
        return math.fsum(x * y for ra, rb in zip(a_, b_) for x, y in zip(ra, rb))

    def block_loss():
        return math.fsum(dot(dy, attention_sub(x, p, d, hq, hkv, p["mask"])[0])
                         for x, dy in zip(xs, dys))
    dxs, grads = block_grads(xs, dys, p, d, hq, hkv)
    tensors = {n: p[n] for n in ("wq", "wk", "wv", "wo")}
    for r, x in enumerate(xs):
        tensors["x%d" % r] = x
        grads["x%d" % r] = dxs[r]
    worst, count = fd_compare("block", block_loss, tensors, grads, all_elements)
    # The layer: 12 sampled elements of every input.
    c = LAYER
    lp = {"n1": random_matrix(rng, 1, c["h"])[0], "n2": random_matrix(rng, 1, c["h"])[0],
          "wq": random_matrix(rng, c["hq"] * c["d"], c["h"], c["h"] ** -0.5),
          "wk": random_matrix(rng, c["hkv"] * c["d"], c["h"], c["h"] ** -0.5),
          "wv": random_matrix(rng, c["hkv"] * c["d"], c["h"], c["h"] ** -0.5),
          "wo": random_matrix(rng, c["h"], c["hq"] * c["d"], (c["hq"] * c["d"]) ** -0.5),
          "wg": random_matrix(rng, c["f"], c["h"], c["h"] ** -0.5),
          "wu": random_matrix(rng, c["f"], c["h"], c["h"] ** -0.5),
          "wd": random_matrix(rng, c["h"], c["f"], c["f"] ** -0.5)}
    lp["cos"], lp["sin"] = rope_tables(c["s"], c["d"])
    lxs = [random_matrix(rng, c["s"], c["h"]) for _ in range(c["w"])]
    ldys = [random_matrix(rng, c["s"], c["h"]) for _ in range(c["w"])]

    def layer_loss():
        return math.fsum(dot(dy, layer_forward(x, lp)[0]) for x, dy in zip(lxs, ldys))
    ldxs, lgrads = layer_grads(lxs, ldys, lp)
    ltensors = {n: lp[n] for n in ("n1", "wq", "wk", "wv", "wo", "n2", "wg", "wu", "wd")}
    for r, x in enumerate(lxs):
        ltensors["x%d" % r] = x
        lgrads["x%d" % r] = ldxs[r]

    def sample(name, t):
        return rng.sample(all_elements(name, t), 12)
    lworst, lcount = fd_compare("layer", layer_loss, ltensors, lgrads, sample)
    worst = max(worst, lworst)
    if not worst <= bound:
        print("MISMATCH: finite differences differ by %.3g (bound %.3g)" % (worst, bound))
        return 1
    print("ok: finite differences, %d elements, max relative error %.3g (bound %.3g)"
          % (count + lcount, worst, bound))
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
    b.add_argument("--grad", action="store_true")
    b.add_argument("--replicated", action="store_true")
    b.add_argument("--out-dir", required=True)
    lay = sub.add_parser("gen-layer")
    lay.add_argument("--seed", type=int, default=0)
    lay.add_argument("--grad", action="store_true")
    lay.add_argument("--out-dir", required=True)
    cg = sub.add_parser("check-grads")
    cg.add_argument("--dir", required=True)
    cg.add_argument("--world-size", type=int, required=True)
    cg.add_argument("--dtype", choices=sorted(GRAD_BOUNDS), default="f32")
    cg.add_argument("--bound", type=float)
    cg.add_argument("--grad", action="append", required=True)
    sub.add_parser("fd-check")
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
    elif a.cmd == "check-grads":
        return check_grads(a)
    elif a.cmd == "fd-check":
        return fd_check(a)
    else:
        return check(a)
    return 0


if __name__ == "__main__":
    sys.exit(main())
