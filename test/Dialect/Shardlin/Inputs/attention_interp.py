#!/usr/bin/env python3
"""Checks the lowering of attention blocks numerically, before the runtime
executes the rank-local ops: interprets, in float64 (pure Python), a module before
--lower-sharded-linear (the global view: each rank's own sequences through
the linears with whole weights and the attention on all heads) and after it
(every rank's ops: the gathers and reductions across ranks, the weight
chunks and slices of each rank, the rank-local attention with its head
tables), both printed in MLIR's generic form, and compares every rank's
result of every function on random inputs (x differs per rank; the other
arguments are the same on every rank).

  attention_interp.py BEFORE.mlir AFTER.mlir [--seed N]

Prints `ok: FUNC W ranks, max error E` per function; exits 1 on a mismatch
over 1e-9 (relative to the result's largest magnitude) or an op it does not
know.
"""
import argparse
import re
import sys

import math
import random


class T:
    """A float64 tensor: shape and row-major values (pure Python: the tests
    run on the system python3 without numpy)."""

    def __init__(self, shape, values):
        self.shape = list(shape)
        self.v = list(values)
        assert len(self.v) == math.prod(self.shape), (shape, len(self.v))

    @property
    def ndim(self):
        return len(self.shape)

    def reshape(self, shape):
        shape = list(shape)
        if -1 in shape:
            known = math.prod(d for d in shape if d != -1)
            shape[shape.index(-1)] = len(self.v) // known if known else 0
        return T(shape, self.v)

    def index(self, idx):
        flat = 0
        for i, d in zip(idx, self.shape):
            flat = flat * d + i
        return flat

    def take(self, axis, begin, end):
        """Elements [begin, end) along `axis`."""
        outer = math.prod(self.shape[:axis])
        inner = math.prod(self.shape[axis + 1:])
        n = self.shape[axis]
        vals = []
        for o in range(outer):
            base = o * n * inner
            vals.extend(self.v[base + begin * inner:base + end * inner])
        shape = list(self.shape)
        shape[axis] = end - begin
        return T(shape, vals)


def concat(parts, axis):
    outer = math.prod(parts[0].shape[:axis])
    inner = math.prod(parts[0].shape[axis + 1:])
    vals = []
    for o in range(outer):
        for p in parts:
            n = p.shape[axis]
            vals.extend(p.v[o * n * inner:(o + 1) * n * inner])
    shape = list(parts[0].shape)
    shape[axis] = sum(p.shape[axis] for p in parts)
    return T(shape, vals)


def add(a, b):
    """a + b, b of a's shape or a vector along a's last dim."""
    if b.shape == a.shape:
        return T(a.shape, [x + y for x, y in zip(a.v, b.v)])
    n = b.shape[0]
    return T(a.shape, [x + b.v[i % n] for i, x in enumerate(a.v)])


def transpose(a):
    r, c = a.shape
    return T([c, r], [a.v[i * c + j] for j in range(c) for i in range(r)])


def matmul(a, b):
    (m, k), (k2, n) = a.shape, b.shape
    assert k == k2, (a.shape, b.shape)
    out = [0.0] * (m * n)
    for i in range(m):
        row = a.v[i * k:(i + 1) * k]
        for j in range(n):
            out[i * n + j] = sum(row[t] * b.v[t * n + j] for t in range(k))
    return T([m, n], out)


def total(parts):
    return T(parts[0].shape, [sum(vs) for vs in zip(*(p.v for p in parts))])


def max_abs_diff(a, b):
    return max((abs(x - y) for x, y in zip(a.v, b.v)), default=0.0)


def max_abs(a):
    return max((abs(x) for x in a.v), default=0.0)


def randn(rng, shape, scale=1.0):
    return T(shape, [rng.gauss(0.0, scale) for _ in range(math.prod(shape))])

OP = re.compile(r'^\s*(?:(%[\w]+) = )?"([\w.]+)"\((.*?)\)(.*) : \((.*)\) -> (.*)$')


def ints(text):
    return [int(v) for v in re.findall(r"-?\d+", text)]


def chunk_attr(text):
    """(dim, placements, bounds or None) of the first #shardlin.chunk<...>."""
    m = re.search(r"chunk<dim = (\d+), placements = \[([^\]]*)\]"
                  r"(?:, bounds = \[([^\]]*)\])?", text)
    return int(m.group(1)), ints(m.group(2)), (ints(m.group(3)) if m.group(3) else None)


def bounds_of(chunk, n):
    dim, placements, bounds = chunk
    if bounds is not None:
        return bounds
    w = len(placements)
    split = -(-n // w)
    return [min(n, i * split) for i in range(w)] + [n]


def rank_range(chunk, n, rank):
    b = bounds_of(chunk, n)
    c = chunk[1].index(rank)
    return b[c], b[c + 1]


def shape_of(type_text):
    m = re.search(r"tensor<([^>]*?)x?f(?:16|32|64)>", type_text)
    dims = m.group(1).split("x") if m.group(1) else []
    return [int(d) if d != "?" else -1 for d in dims]


def split_types(text):
    """Top-level comma-separated types of a functional type's operand list."""
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch in "<([{":
            depth += 1
        elif ch in ">)]}":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def attention(q, k, v, d, g, scale, causal, mask, q_heads, kv_heads):
    """Per sequence b and head h of q (global index q_heads[0] + j), the kv
    head h // g at index h // g - kv_heads[0] of k and v."""
    q3 = q if q.ndim == 3 else q.reshape([1] + q.shape)
    k3 = k if k.ndim == 3 else k.reshape([1] + k.shape)
    v3 = v if v.ndim == 3 else v.reshape([1] + v.shape)
    nb, s, fq = q3.shape
    fk = k3.shape[2]
    out = [0.0] * len(q3.v)
    for b in range(nb):
        for j in range(q_heads[1] - q_heads[0]):
            kv = (q_heads[0] + j) // g - kv_heads[0]
            for i in range(s):
                qi = [q3.v[(b * s + i) * fq + j * d + t] for t in range(d)]
                scores = []
                for jj in range(s):
                    if causal and jj > i:
                        scores.append(-math.inf)
                        continue
                    kj = [k3.v[(b * s + jj) * fk + kv * d + t] for t in range(d)]
                    sc = scale * sum(x * y for x, y in zip(qi, kj))
                    if mask is not None:
                        sc += mask.v[i * s + jj]
                    scores.append(sc)
                top = max(scores)
                e = [math.exp(x - top) if x != -math.inf else 0.0 for x in scores]
                z = sum(e)
                for t in range(d):
                    out[(b * s + i) * fq + j * d + t] = sum(
                        e[jj] / z * v3.v[(b * s + jj) * fk + kv * d + t]
                        for jj in range(s))
    return T(q.shape, out)


def rope(x, cos, sin, d, inverse):
    """Rotate-half per head; cos, sin [S, D/2] by position (dim -2)."""
    f = x.shape[-1]
    s = x.shape[-2]
    half = d // 2
    sign = -1.0 if inverse else 1.0
    y = list(x.v)
    for row in range(len(x.v) // f if f else 0):
        pos = row % s
        for h in range(f // d):
            for i in range(half):
                a = row * f + h * d + i
                c, sn = cos.v[pos * half + i], sin.v[pos * half + i]
                x1, x2 = x.v[a], x.v[a + half]
                y[a] = x1 * c - sign * x2 * sn
                y[a + half] = x2 * c + sign * x1 * sn
    return T(x.shape, y)


def run(func, args, w):
    """Interprets `func` (lines) for every rank at once: env maps a value to
    its W per-rank arrays (a sharded argument: the global array)."""
    env = dict(args)
    for line in func:
        m = OP.match(line)
        if not m:
            continue
        res, name, operands, attrs, in_types, out_type = m.groups()
        ops = [o.strip() for o in operands.split(",") if o.strip()]
        vals = [env.get(o) for o in ops]
        tin = split_types(in_types)
        if name == "func.return":
            return vals[0]
        if name in ("arith.constant", "tensor.dim"):
            continue
        out = [None] * w
        for r in range(w):
            out[r] = step(name, attrs, vals, tin, out_type, r, w)
        env[res] = out
    raise ValueError("no func.return")


def step(name, attrs, vals, tin, out_type, r, w):
    v = [x[r] if isinstance(x, list) else x for x in vals]
    if name == "shardlin.all_gather":
        dim, placements, _ = chunk_attr(attrs)
        return concat([vals[0][p] for p in placements], dim)
    if name == "shardlin.reduce_scatter":
        chunk = chunk_attr(attrs)
        summed = total([vals[0][q] for q in range(w)])
        b, e = rank_range(chunk, summed.shape[chunk[0]], r)
        return summed.take(chunk[0], b, e)
    if name == "shardlin.all_reduce":
        return total([vals[0][q] for q in range(w)])
    if name in ("shardlin.local_shard", "shardlin.local_chunk"):
        chunk = chunk_attr(tin[0] if name == "shardlin.local_shard" else attrs)
        b, e = rank_range(chunk, v[0].shape[chunk[0]], r)
        return v[0].take(chunk[0], b, e)
    if name == "shardlin.local_slice":
        dim = int(re.search(r"dim = (\d+)", attrs).group(1))
        ranges = ints(re.search(r"ranges = array<i64:([^>]*)>", attrs).group(1))
        return v[0].take(dim, ranges[2 * r], ranges[2 * r + 1])
    if name == "shardlin.gemm":
        a, b = v[0], v[1]
        if "transpose_lhs" in attrs:
            a = transpose(a)
        if "transpose_rhs" in attrs:
            b = transpose(b)
        y = matmul(a, b)
        return add(y, v[2]) if len(v) > 2 else y
    if name == "shardlin.linear":
        x, wt = v[0], v[1]
        rows = x.reshape([-1, x.shape[-1]])
        y = matmul(rows, wt if "weight_kn" in attrs else transpose(wt))
        if len(v) > 2:
            y = add(y, v[2])
        return y.reshape(x.shape[:-1] + [y.shape[-1]])
    if name == "shardlin.bias_add":
        return add(v[0], v[1])
    if name == "shardlin.rope":
        d = int(re.search(r"head_dim = (\d+)", attrs).group(1))
        return rope(v[0], v[1], v[2], d, "inverse" in attrs)
    if name == "shardlin.attention":
        d = int(re.search(r"head_dim = (\d+)", attrs).group(1))
        q, k, vv = v[0], v[1], v[2]
        mask = v[3] if len(v) > 3 else None
        sm = re.search(r"scale = ([-\d.e+]+)", attrs)
        scale = float(sm.group(1)) if sm else 1.0 / math.sqrt(d)
        qh = re.search(r"q_heads = array<i64:([^>]*)>", attrs)
        if qh:
            g = int(re.search(r"group = (\d+)", attrs).group(1))
            qt = ints(qh.group(1))
            kt = ints(re.search(r"kv_heads = array<i64:([^>]*)>", attrs).group(1))
            heads_q, heads_kv = qt[2 * r:2 * r + 2], kt[2 * r:2 * r + 2]
        else:
            hq, hkv = q.shape[-1] // d, k.shape[-1] // d
            g = hq // hkv
            heads_q, heads_kv = [0, hq], [0, hkv]
        return attention(q, k, vv, d, g, scale, "causal" in attrs, mask,
                         heads_q, heads_kv)
    if name in ("tensor.collapse_shape", "tensor.expand_shape"):
        return v[0].reshape(shape_of(out_type))
    raise ValueError("unknown op " + name)


def functions(path):
    """{name: (block-argument types, arg_attrs text, body lines)}."""
    out, cur = {}, None
    for line in open(path):
        m = re.search(r'"func.func"\(\) <\{(.*)sym_name = "(\w+)"', line)
        if m:
            cur = m.group(2)
            out[cur] = [None, m.group(1), []]
            continue
        if cur and line.strip().startswith("^bb0("):
            out[cur][0] = [t.split(": ", 1) for t in
                           split_types(line.strip()[5:line.strip().rindex(")")])]
            continue
        if cur:
            out[cur][2].append(line)
            if '"func.return"' in line:
                cur = None
    return out


def make_args(block_args, arg_attrs, rng, w):
    """Random arguments: the first (x) differs per rank unless it is
    `shardlin.replicated`; the others are the same on every rank (a sharded
    one is its global array)."""
    replicated = re.search(r"arg_attrs = \[(.*?)\], function_type", arg_attrs)
    first_replicated = bool(replicated) and replicated.group(1).startswith(
        "{shardlin.replicated}")
    args = {}
    for i, (name, t) in enumerate(block_args):
        shape = shape_of(t)
        if i == 0 and not first_replicated:
            args[name] = [randn(rng, shape) for _ in range(w)]
            continue
        a = randn(rng, shape, 1.0 if i == 0 else 0.5 if len(shape) == 2 else 0.2)
        args[name] = [a] * w if "sharded" not in t else a
    return args


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--seed", type=int, default=7)
    opts = ap.parse_args()
    before, after = functions(opts.before), functions(opts.after)
    rng = random.Random(opts.seed)
    failed = False
    for name, (block_args, arg_attrs, body) in before.items():
        wm = re.search(r"placements = \[([^\]]*)\]",
                       " ".join(t for _, t in block_args))
        w = len(ints(wm.group(1)))
        args = make_args(block_args, arg_attrs, rng, w)
        want = run(body, args, w)
        # The lowered function's arguments are the same, in order.
        renamed = {n: args[b] for (n, _), (b, _) in zip(after[name][0], block_args)}
        got = run(after[name][2], renamed, w)
        same = all(got[r].shape == want[r].shape for r in range(w))
        err = max(max_abs_diff(got[r], want[r]) for r in range(w)) if same else math.inf
        scale = max(max_abs(want[r]) for r in range(w))
        ok = same and scale > 0 and err <= 1e-9 * scale
        print("%s: %s %d ranks, max error %.3g (of %.3g)" %
              ("ok" if ok else "MISMATCH", name, w, err, scale))
        failed |= not ok
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
