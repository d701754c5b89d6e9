#!/usr/bin/env python3
"""Inputs, float64 references and checks for issue 41's attention programs
run on a DP x TP grid (shardlin-run --grid=DPxTP, docs/attention.md, "Grids"):
DP replicas of a TP program, the same weights in every replica, each rank of
each replica its own x. Built on testing/tools/attention_ref.py's float64
model (its rope, attention, rms_norm and .npy helpers).

  attention_grid.py gen-block --replicas R --hq HQ --hkv HKV --world-size W
      [--head-dim 4] [--seq 4] [--features 8] [--dtype f32|bf16|f16]
      [--mask] [--dynamic] [--replicated] [--seed S] --out-dir DIR
      attention_ref.py gen-block's DIR/block.mlir (W = one replica's TP
      ranks) and global weights; DIR/x.{replica}.{rank}.npy and the float64
      result on it, DIR/ref.{replica}.{rank}.npy. --replicated: x replicated
      (every linear replicated -> replicated), one sequence a replica, the
      same file content on each of its ranks.
  attention_grid.py gen-layer --replicas R [--world-size 3] [--dtype D]
      [--dynamic] [--seed S] --out-dir DIR
      the transformer layer of examples/attention/layer.mlir (H = 24, D = 4,
      Hq = 6, Hkv = 2 replicated, SwiGLU width 40, S = 8 tokens a rank) in
      its argument order x, n1, wq, wk, wv, wo, cos, sin, n2, wg, wu, wd and
      the float64 reference of the whole layer per replica and rank; also
      DIR/layer.mlir, the same layer for W ranks (W > Hkv), dtype D and a
      static or dynamic (`?`) sequence length. For W = 3, f32, static, it
      computes what examples/attention/layer.mlir computes.
  attention_grid.py gen-params --replicas R --world-size W [--seed S]
      --out-dir DIR
      inputs of attention-grid-params.mlir's @f (x [4, 8] per rank, the
      RMSNorm weight n [8] and K's weight wk [7, 8] replicated, Q's weight
      wq [7, 8] split over W ranks; y = rms(x) wq^T + rms(x) wk^T) and of
      its backward: DIR/x.{replica}.{rank}.npy, dy.{replica}.{rank}.npy,
      n.npy, wq.npy, wk.npy; the float64 gradients DIR/ref-dx.{replica}.
      {rank}.npy (each replica's own) and ref-dn.npy, ref-dwq.npy,
      ref-dwk.npy (the mean over the replicas of each replica's sum over
      its ranks).
  attention_grid.py check-params --dir DIR --out PREFIX --replicas R
      --world-size W [--bound B]
      PREFIX dx.{replica}.{rank}.npy, dn.{replica}.npy, dwq.{replica}.npy
      and dwk.{replica}.npy against the references, each relative to its
      largest magnitude (f32: bound 1e-5); prints "ok: dx dn dwq dwk, R
      replicas x W ranks, relative error E (bound B)" or "MISMATCH: ...".
  attention_grid.py gen-block ... --grad / gen-layer ... --grad
      also each replica's results' gradients DIR/dy.{replica}.{rank}.npy and
      the float64 gradients of the loss sum_r <dy_r, y_r> of every replica
      (attention_ref.py's block_grads / layer_grads): ref-dx.{replica}.
      {rank}.npy (each replica's own) and ref-dNAME.npy for each weight, the
      mean over the replicas of each replica's gradient (what --grid's
      averaging gives every replica).
  attention_grid.py check-grads --dir DIR --replicas R --world-size W
      [--dtype D] [--bound B] --grad NAME=PATTERN ...
      each gradient's files (PATTERN with {replica}, and {rank} for one file
      a rank) against the references: max |out - ref| / max |ref| per
      gradient under B (attention_ref.py's GRAD_BOUNDS: f32 1e-5, bf16
      8 * 2^-8); prints "ok: NAME, N files, relative
      error E (bound B)" for each and "ok: K gradients", or "MISMATCH: ...".
  attention_grid.py check --dir DIR --out PATTERN --replicas R
      --world-size W [--dtype D] [--bound B]
      every rank of every replica (PATTERN with {replica} and {rank}) against
      DIR/ref.{replica}.{rank}.npy: max |out - ref| / max |ref| (over the
      grid) under B (attention_ref.py's bounds by default); prints
      "ok: R replicas x W ranks, relative error E (bound B)" or
      "MISMATCH: ..." and exits 1.
"""
import argparse
import math
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "testing", "tools"))
import attention_ref as ar  # noqa: E402

LAYER = {"s": 8, "h": 24, "d": 4, "hq": 6, "hkv": 2, "f": 40}


def path(d, name, rep, rank):
    return os.path.join(d, "%s.%d.%d.npy" % (name, rep, rank))


def gen_block(a):
    if a.hq % a.hkv != 0:
        sys.exit("--hq must be a multiple of --hkv")
    os.makedirs(a.out_dir, exist_ok=True)
    rng = random.Random(a.seed)
    t, d, k, s = a.dtype, a.head_dim, a.features, a.seq
    fq, fkv = a.hq * d, a.hkv * d
    w = {"wq": ar.rounded(ar.random_matrix(rng, fq, k, k ** -0.5), t),
         "wk": ar.rounded(ar.random_matrix(rng, fkv, k, k ** -0.5), t),
         "wv": ar.rounded(ar.random_matrix(rng, fkv, k, k ** -0.5), t),
         "wo": ar.rounded(ar.random_matrix(rng, k, fq, fq ** -0.5), t)}
    w["cos"], w["sin"] = (ar.rounded(x, t) for x in ar.rope_tables(s, d))
    if a.mask:
        w["mask"] = ar.rounded(ar.random_matrix(rng, s, s), t)
    for name, v in w.items():
        ar.save(os.path.join(a.out_dir, name + ".npy"), v, t)
    # --replicated: one sequence a replica, the same on each of its ranks.
    seqs = 1 if a.replicated else a.world_size
    xs = [[] for _ in range(a.replicas)]
    for rep in range(a.replicas):
        for r in range(seqs):
            x = ar.rounded(ar.random_matrix(rng, s, k), t)
            xs[rep].append(x)
            q = ar.rope(ar.matmul_t(x, w["wq"]), w["cos"], w["sin"], d)
            kk = ar.rope(ar.matmul_t(x, w["wk"]), w["cos"], w["sin"], d)
            o = ar.attention(q, kk, ar.matmul_t(x, w["wv"]), d, a.hq, a.hkv,
                             w.get("mask"))
            for rank in range(a.world_size) if a.replicated else [r]:
                ar.save(path(a.out_dir, "x", rep, rank), x, t)
                ar.save_ref(path(a.out_dir, "ref", rep, rank), ar.matmul_t(o, w["wo"]))
    if a.grad:
        need_grads()
        grid_grads(a, xs, w, lambda rows, dys: ar.block_grads(rows, dys, w, d, a.hq, a.hkv))
    with open(os.path.join(a.out_dir, "block.mlir"), "w") as f:
        f.write(ar.block_mlir(a, ar.MLIR_TYPE[t]))


def rms_norm_mlir(t, s):
    """@rms_norm of examples/attention/layer.mlir for type t, rows s."""
    x, r = "tensor<%sx24x%s>" % (s, t), "tensor<%sx1x%s>" % (s, t)
    dyn = s == "?"
    empty = "tensor.empty(%rows)" if dyn else "tensor.empty()"
    rows = ["    %c0 = arith.constant 0 : index",
            "    %rows = tensor.dim %x, %c0 : " + x] if dyn else []
    gen = "linalg.generic {indexing_maps = [%s], iterator_types = [\"parallel\", \"%s\"]}"
    return "\n".join([
        "  func.func private @rms_norm(%%x: %s, %%w: tensor<24x%s>) -> %s {" % (x, t, x),
        "    %%zero = arith.constant 0.0 : %s" % t,
        "    %%n = arith.constant 24.0 : %s" % t,
        "    %%eps = arith.constant 1.0e-5 : %s" % t] + rows + [
        "    %%e = %s : %s" % (empty, x),
        "    %%e1 = %s : %s" % (empty, r),
        "    %%sq = %s ins(%%x : %s) outs(%%e : %s) {" % (gen % ("#id, #id", "parallel"), x, x),
        "    ^bb0(%%a: %s, %%o: %s):" % (t, t),
        "      %%m = arith.mulf %%a, %%a : %s" % t,
        "      linalg.yield %%m : %s" % t,
        "    } -> " + x,
        "    %%z = linalg.fill ins(%%zero : %s) outs(%%e1 : %s) -> %s" % (t, r, r),
        "    %%ss = %s ins(%%sq : %s) outs(%%z : %s) {" % (gen % ("#id, #row", "reduction"), x, r),
        "    ^bb0(%%a: %s, %%o: %s):" % (t, t),
        "      %%s = arith.addf %%a, %%o : %s" % t,
        "      linalg.yield %%s : %s" % t,
        "    } -> " + r,
        "    %%r = %s ins(%%ss : %s) outs(%%e1 : %s) {" % (gen % ("#id, #id", "parallel"), r, r),
        "    ^bb0(%%a: %s, %%o: %s):" % (t, t),
        "      %%mean = arith.divf %%a, %%n : %s" % t,
        "      %%v = arith.addf %%mean, %%eps : %s" % t,
        "      %%q = math.rsqrt %%v : %s" % t,
        "      linalg.yield %%q : %s" % t,
        "    } -> " + r,
        "    %%y = %s ins(%%x, %%r, %%w : %s, %s, tensor<24x%s>) outs(%%e : %s) {"
        % (gen % ("#id, #row, #col, #id", "parallel"), x, r, t, x),
        "    ^bb0(%%a: %s, %%b: %s, %%c: %s, %%o: %s):" % (t, t, t, t),
        "      %%t = arith.mulf %%a, %%b : %s" % t,
        "      %%u = arith.mulf %%t, %%c : %s" % t,
        "      linalg.yield %%u : %s" % t,
        "    } -> " + x,
        "    return %%y : %s" % x,
        "  }"])


def layer_mlir(w, t, s):
    """examples/attention/layer.mlir for W ranks, type t, rows s (8 or ?)."""
    places = ", ".join(str(i) for i in range(w))
    sh = "!shardlin.sharded<tensor<%s>, #shardlin.chunk<dim = %d, placements = [%s]%s>>"
    x, q, kv = ("tensor<%sx%dx%s>" % (s, n, t) for n in (24, 24, 8))
    f, rep = "tensor<%sx40x%s>" % (s, t), "tensor<%sx2x%s>" % (s, t)
    wkv = "tensor<8x24x%s>" % t
    dyn = s == "?"
    silu = ([
        "    %c0 = arith.constant 0 : index",
        "    %rows = tensor.dim %x, %c0 : " + x,
        "    %one = arith.constant 1.0 : " + t,
        "    %ef = tensor.empty(%rows) : " + f,
        "    %ones = linalg.fill ins(%one : " + t + ") outs(%ef : " + f + ") -> " + f]
        if dyn else
        ["    %%one = arith.constant dense<1.0> : %s" % f])
    return "\n".join([
        "// Generated by test/shardlin-run/Inputs/attention_grid.py gen-layer:",
        "// examples/attention/layer.mlir on %d ranks, %s, S = %s." % (w, t, s),
        "!wq = " + sh % ("24x24x" + t, 0, places, ", block = 4"),
        "!wo = " + sh % ("24x24x" + t, 1, places, ", block = 4"),
        "!wg = " + sh % ("40x24x" + t, 0, places, ""),
        "!wd = " + sh % ("24x40x" + t, 1, places, ""),
        "#id = affine_map<(d0, d1) -> (d0, d1)>",
        "#row = affine_map<(d0, d1) -> (d0, 0)>",
        "#col = affine_map<(d0, d1) -> (d1)>",
        "module {",
        rms_norm_mlir(t, s),
        "  func.func @layer(%%x: %s, %%n1: tensor<24x%s> {shardlin.replicated}, %%wq: !wq,"
        % (x, t),
        "      %%wk: %s {shardlin.replicated}, %%wv: %s {shardlin.replicated}, %%wo: !wo,"
        % (wkv, wkv),
        "      %%cos: %s {shardlin.replicated}, %%sin: %s {shardlin.replicated},"
        % (rep, rep),
        "      %%n2: tensor<24x%s> {shardlin.replicated}, %%wg: !wg, %%wu: !wg, %%wd: !wd)"
        " -> %s {" % (t, x),
        "    %%h1 = func.call @rms_norm(%%x, %%n1) : (%s, tensor<24x%s>) -> %s" % (x, t, x),
        "    %%q = shardlin.linear %%h1, %%wq : (%s, !wq) -> %s" % (x, q),
        "    %%k = shardlin.gemm %%h1, %%wk transpose_rhs : (%s, %s) -> %s" % (x, wkv, kv),
        "    %%v = shardlin.gemm %%h1, %%wv transpose_rhs : (%s, %s) -> %s" % (x, wkv, kv),
        "    %%qr = shardlin.rope %%q, %%cos, %%sin {head_dim = 4 : i64} : %s, %s, %s -> %s"
        % (q, rep, rep, q),
        "    %%kr = shardlin.rope %%k, %%cos, %%sin {head_dim = 4 : i64} : %s, %s, %s -> %s"
        % (kv, rep, rep, kv),
        "    %%att = shardlin.attention %%qr, %%kr, %%v {head_dim = 4 : i64, causal} : "
        "%s, %s, %s -> %s" % (q, kv, kv, q),
        "    %%o = shardlin.linear %%att, %%wo : (%s, !wo) -> %s" % (q, x),
        "    %h = arith.addf %x, %o : " + x,
        "    %%h2 = func.call @rms_norm(%%h, %%n2) : (%s, tensor<24x%s>) -> %s" % (x, t, x),
        "    %%g = shardlin.linear %%h2, %%wg : (%s, !wg) -> %s" % (x, f),
        "    %%u = shardlin.linear %%h2, %%wu : (%s, !wg) -> %s" % (x, f)] + silu + [
        "    %ng = arith.negf %g : " + f,
        "    %ex = math.exp %ng : " + f,
        "    %%den = arith.addf %s, %%ex : %s" % ("%ones" if dyn else "%one", f),
        "    %silu = arith.divf %g, %den : " + f,
        "    %a = arith.mulf %silu, %u : " + f,
        "    %%d = shardlin.linear %%a, %%wd : (%s, !wd) -> %s" % (f, x),
        "    %y = arith.addf %h, %d : " + x,
        "    return %y : " + x,
        "  }",
        "}", ""])


def layer_ref(x, p):
    """The float64 layer of attention_ref.py gen-layer on one rank's x."""
    d, hq, hkv = LAYER["d"], LAYER["hq"], LAYER["hkv"]
    h1 = ar.rms_norm(x, p["n1"])
    q = ar.rope(ar.matmul_t(h1, p["wq"]), p["cos"], p["sin"], d)
    k = ar.rope(ar.matmul_t(h1, p["wk"]), p["cos"], p["sin"], d)
    o = ar.attention(q, k, ar.matmul_t(h1, p["wv"]), d, hq, hkv)
    hh = ar.add(x, ar.matmul_t(o, p["wo"]))
    h2 = ar.rms_norm(hh, p["n2"])
    g, u = ar.matmul_t(h2, p["wg"]), ar.matmul_t(h2, p["wu"])
    act = [[gv / (1.0 + math.exp(-gv)) * uv for gv, uv in zip(gr, ur)]
           for gr, ur in zip(g, u)]
    return ar.add(hh, ar.matmul_t(act, p["wd"]))


def gen_layer(a):
    if a.world_size <= LAYER["hkv"]:
        sys.exit("--world-size must exceed the layer's 2 kv heads (K and V replicated)")
    os.makedirs(a.out_dir, exist_ok=True)
    rng = random.Random(a.seed)
    s, h, d, f, t = LAYER["s"], LAYER["h"], LAYER["d"], LAYER["f"], a.dtype
    fq, fkv = LAYER["hq"] * d, LAYER["hkv"] * d
    p = {"n1": ar.random_matrix(rng, 1, h)[0],
         "wq": ar.random_matrix(rng, fq, h, h ** -0.5),
         "wk": ar.random_matrix(rng, fkv, h, h ** -0.5),
         "wv": ar.random_matrix(rng, fkv, h, h ** -0.5),
         "wo": ar.random_matrix(rng, h, fq, fq ** -0.5),
         "n2": ar.random_matrix(rng, 1, h)[0],
         "wg": ar.random_matrix(rng, f, h, h ** -0.5),
         "wu": ar.random_matrix(rng, f, h, h ** -0.5),
         "wd": ar.random_matrix(rng, h, f, f ** -0.5)}
    p["cos"], p["sin"] = ar.rope_tables(s, d)
    p = {n: ar.rounded(v, t) for n, v in p.items()}
    for n, v in p.items():
        ar.save(os.path.join(a.out_dir, n + ".npy"), v, t)
    xs = [[] for _ in range(a.replicas)]
    for rep in range(a.replicas):
        for r in range(a.world_size):
            x = ar.rounded(ar.random_matrix(rng, s, h), t)
            xs[rep].append(x)
            ar.save(path(a.out_dir, "x", rep, r), x, t)
            ar.save_ref(path(a.out_dir, "ref", rep, r), layer_ref(x, p))
    if a.grad:
        need_grads()
        grid_grads(a, xs, p, lambda rows, dys: ar.layer_grads(rows, dys, p))
    with open(os.path.join(a.out_dir, "layer.mlir"), "w") as out:
        out.write(layer_mlir(a.world_size, ar.MLIR_TYPE[t], "?" if a.dynamic else str(s)))


def rms_grads(x, n, dh, eps=1e-5):
    """dx and the rows' contributions to dn of h = rms_norm(x, n), given dh."""
    k = len(n)
    dx, dn = [], [0.0] * k
    for row, drow in zip(x, dh):
        r = 1.0 / math.sqrt(math.fsum(v * v for v in row) / k + eps)
        dot = math.fsum(d * c * v for d, c, v in zip(drow, n, row))
        dx.append([r * d * c - v * r ** 3 * dot / k for d, c, v in zip(drow, n, row)])
        for j in range(k):
            dn[j] += drow[j] * row[j] * r
    return dx, dn


def gen_params(a):
    os.makedirs(a.out_dir, exist_ok=True)
    rng = random.Random(a.seed)
    rows, k, nq = 4, 8, 7
    p = {"n": ar.random_matrix(rng, 1, k)[0],
         "wq": ar.random_matrix(rng, nq, k, k ** -0.5),
         "wk": ar.random_matrix(rng, nq, k, k ** -0.5)}
    p = {name: ar.rounded(v, "f32") for name, v in p.items()}
    for name, v in p.items():
        ar.save(os.path.join(a.out_dir, name + ".npy"), v, "f32")
    mean = {"dn": [[0.0] * k], "dwq": [[0.0] * k for _ in range(nq)],
            "dwk": [[0.0] * k for _ in range(nq)]}
    for rep in range(a.replicas):
        for r in range(a.world_size):
            x = ar.rounded(ar.random_matrix(rng, rows, k), "f32")
            dy = ar.rounded(ar.random_matrix(rng, rows, nq), "f32")
            ar.save(path(a.out_dir, "x", rep, r), x, "f32")
            ar.save(path(a.out_dir, "dy", rep, r), dy, "f32")
            h = ar.rms_norm(x, p["n"])
            dyt = [list(c) for c in zip(*dy)]
            dw = ar.matmul_t(dyt, [list(c) for c in zip(*h)])  # dy^T h
            wq_t = [list(c) for c in zip(*p["wq"])]
            wk_t = [list(c) for c in zip(*p["wk"])]
            dh = ar.add(ar.matmul_t(dy, wq_t), ar.matmul_t(dy, wk_t))
            dx, dn = rms_grads(x, p["n"], dh)
            ar.save_ref(path(a.out_dir, "ref-dx", rep, r), dx)
            for name, g in (("dn", [dn]), ("dwq", dw), ("dwk", dw)):
                mean[name] = ar.add(mean[name], [[v / a.replicas for v in row] for row in g])
    for name, g in mean.items():
        ar.save_ref(os.path.join(a.out_dir, "ref-%s.npy" % name), g[0] if name == "dn" else g)


def check_params(a):
    bound = a.bound if a.bound is not None else ar.BOUNDS["f32"]
    pairs = []  # (what, reference file, output file)
    for rep in range(a.replicas):
        for r in range(a.world_size):
            pairs.append(("dx", path(a.dir, "ref-dx", rep, r),
                          "%sdx.%d.%d.npy" % (a.out, rep, r)))
        for name in ("dn", "dwq", "dwk"):
            pairs.append((name, os.path.join(a.dir, "ref-%s.npy" % name),
                          "%s%s.%d.npy" % (a.out, name, rep)))
    values = []
    for what, ref_path, out_path in pairs:
        ref, out = ar.load(ref_path, "f64"), ar.load(out_path, "f32")
        if out[0] != ref[0]:
            print("MISMATCH: %s has shape %s, the reference %s" % (out_path, out[0], ref[0]))
            return 1
        values.append((what, out_path, ref[1], out[1]))
    worst, where = 0.0, ""
    for what in ("dx", "dn", "dwq", "dwk"):
        mag = max(abs(v) for w, _, ref, _ in values if w == what for v in ref)
        for w, out_path, ref, out in values:
            if w != what:
                continue
            e = max(abs(x - y) for x, y in zip(out, ref)) / mag
            if not e <= worst:
                worst, where = e, out_path
    if not worst <= bound:
        print("MISMATCH: %s relative error %.3g exceeds %.3g" % (where, worst, bound))
        return 1
    print("ok: dx dn dwq dwk, %d replicas x %d ranks, relative error %.3g (bound %.3g)"
          % (a.replicas, a.world_size, worst, bound))
    return 0


def grid_grads(a, xs, p, grads_of):
    """dy of every rank of every replica, each replica's dx and the weights'
    gradients averaged over the replicas (grads_of: attention_ref.py's
    block_grads or layer_grads on one replica's rows)."""
    rng = random.Random(a.seed + 1000)
    mean = {}
    for rep, rows in enumerate(xs):
        dys = [ar.rounded(ar.random_matrix(rng, len(x), len(x[0])), a.dtype) for x in rows]
        dxs, grads = grads_of(rows, dys)
        # One sequence on every rank (--replicated): its dy and dx on each.
        ranks = [[r] for r in range(len(rows))] if len(rows) == a.world_size \
            else [list(range(a.world_size))]
        for dy, dx, mine in zip(dys, dxs, ranks):
            for r in mine:
                ar.save(path(a.out_dir, "dy", rep, r), dy, a.dtype)
                ar.save_ref(path(a.out_dir, "ref-dx", rep, r), dx)
        for name, g in grads.items():
            part = ([[v / len(xs) for v in row] for row in g] if g and isinstance(g[0], list)
                    else [v / len(xs) for v in g])
            mean[name] = part if name not in mean else (
                ar.add(mean[name], part) if part and isinstance(part[0], list)
                else [x + y for x, y in zip(mean[name], part)])
    for name, g in mean.items():
        ar.save_ref(os.path.join(a.out_dir, "ref-d%s.npy" % name), g)


def need_grads():
    if not hasattr(ar, "layer_grads") or not hasattr(ar, "block_grads"):
        sys.exit("--grad: testing/tools/attention_ref.py has no float64 gradients "
                 "(block_grads, layer_grads)")


def check_grads(a):
    bounds = getattr(ar, "GRAD_BOUNDS", ar.BOUNDS)  # attention_ref.py's for gradients
    bound = a.bound if a.bound is not None else bounds[a.dtype]
    for spec in a.grad:
        name, _, pattern = spec.partition("=")
        ranks = range(a.world_size) if "{rank}" in pattern else [None]
        worst, where, files = 0.0, "", 0
        for rep in range(a.replicas):
            for r in ranks:
                out_path = pattern.replace("{replica}", str(rep))
                if r is not None:
                    out_path = out_path.replace("{rank}", str(r))
                ref_path = (path(a.dir, "ref-dx", rep, r) if name == "x"
                            else os.path.join(a.dir, "ref-d%s.npy" % name))
                if not os.path.exists(out_path):
                    print("MISMATCH: %s: no such file" % out_path)
                    return 1
                ref, out = ar.load(ref_path, "f64"), ar.load(out_path, a.dtype)
                if out[0] != ref[0]:
                    print("MISMATCH: %s has shape %s, the reference %s"
                          % (out_path, out[0], ref[0]))
                    return 1
                mag = max((abs(v) for v in ref[1]), default=0.0)
                if not mag > 0.0 or not all(math.isfinite(v) for v in out[1]):
                    print("MISMATCH: %s: a zero reference or a non-finite output" % out_path)
                    return 1
                e = max(abs(x - y) for x, y in zip(out[1], ref[1])) / mag
                files += 1
                if not e <= worst:
                    worst, where = e, out_path
        if not worst <= bound:
            print("MISMATCH: %s relative error %.3g exceeds %.3g (%s)"
                  % (name, worst, bound, where))
            return 1
        print("ok: %s, %d files, relative error %.3g (bound %.3g)"
              % (name, files, worst, bound))
    print("ok: %d gradients" % len(a.grad))
    return 0


def check(a):
    bound = a.bound if a.bound is not None else ar.BOUNDS[a.dtype]
    refs, outs = {}, {}
    for rep in range(a.replicas):
        for r in range(a.world_size):
            ref = ar.load(path(a.dir, "ref", rep, r), "f64")
            out = ar.load(a.out.replace("{replica}", str(rep)).replace("{rank}", str(r)),
                          a.dtype)
            if out[0] != ref[0]:
                print("MISMATCH: replica %d rank %d's output has shape %s, the reference %s"
                      % (rep, r, out[0], ref[0]))
                return 1
            if not all(math.isfinite(v) for v in out[1]):
                print("MISMATCH: replica %d rank %d's output is not finite" % (rep, r))
                return 1
            refs[rep, r], outs[rep, r] = ref[1], out[1]
    mag = max(abs(v) for ref in refs.values() for v in ref)
    worst, where = 0.0, (0, 0)
    for key, ref in refs.items():
        e = max((abs(x - y) for x, y in zip(outs[key], ref)), default=0.0) / mag
        if e > worst:
            worst, where = e, key
    if not worst <= bound:
        print("MISMATCH: replica %d rank %d relative error %.3g exceeds %.3g"
              % (where[0], where[1], worst, bound))
        return 1
    print("ok: %d replicas x %d ranks, relative error %.3g (bound %.3g)"
          % (a.replicas, a.world_size, worst, bound))
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("gen-block")
    b.add_argument("--replicas", type=int, required=True)
    b.add_argument("--hq", type=int, required=True)
    b.add_argument("--hkv", type=int, required=True)
    b.add_argument("--world-size", type=int, required=True)
    b.add_argument("--head-dim", type=int, default=4)
    b.add_argument("--seq", type=int, default=4)
    b.add_argument("--features", type=int, default=8)
    b.add_argument("--dtype", choices=("f32", "bf16", "f16"), default="f32")
    b.add_argument("--mask", action="store_true")
    b.add_argument("--dynamic", action="store_true")
    b.add_argument("--grad", action="store_true")
    b.add_argument("--replicated", action="store_true")
    b.add_argument("--seed", type=int, default=0)
    b.add_argument("--out-dir", required=True)
    lay = sub.add_parser("gen-layer")
    lay.add_argument("--replicas", type=int, required=True)
    lay.add_argument("--world-size", type=int, default=3)
    lay.add_argument("--dtype", choices=("f32", "bf16", "f16"), default="f32")
    lay.add_argument("--dynamic", action="store_true")
    lay.add_argument("--grad", action="store_true")
    lay.add_argument("--seed", type=int, default=0)
    lay.add_argument("--out-dir", required=True)
    gp = sub.add_parser("gen-params")
    gp.add_argument("--replicas", type=int, required=True)
    gp.add_argument("--world-size", type=int, required=True)
    gp.add_argument("--seed", type=int, default=0)
    gp.add_argument("--out-dir", required=True)
    cp = sub.add_parser("check-params")
    cp.add_argument("--dir", required=True)
    cp.add_argument("--out", required=True)
    cp.add_argument("--replicas", type=int, required=True)
    cp.add_argument("--world-size", type=int, required=True)
    cp.add_argument("--bound", type=float)
    cg = sub.add_parser("check-grads")
    cg.add_argument("--dir", required=True)
    cg.add_argument("--replicas", type=int, required=True)
    cg.add_argument("--world-size", type=int, required=True)
    cg.add_argument("--dtype", choices=sorted(ar.BOUNDS), default="f32")
    cg.add_argument("--bound", type=float)
    cg.add_argument("--grad", action="append", required=True)
    c = sub.add_parser("check")
    c.add_argument("--dir", required=True)
    c.add_argument("--out", required=True)
    c.add_argument("--replicas", type=int, required=True)
    c.add_argument("--world-size", type=int, required=True)
    c.add_argument("--dtype", choices=sorted(ar.BOUNDS), default="f32")
    c.add_argument("--bound", type=float)
    a = p.parse_args()
    if a.cmd == "gen-block":
        gen_block(a)
    elif a.cmd == "gen-layer":
        gen_layer(a)
    elif a.cmd == "gen-params":
        gen_params(a)
    elif a.cmd == "check-params":
        return check_params(a)
    elif a.cmd == "check-grads":
        return check_grads(a)
    else:
        return check(a)
    return 0


if __name__ == "__main__":
    sys.exit(main())
