"""Inputs and float64 references of shardlin.attention_grad for
attention-grad-jit.test, with only the Python standard library.

  attention_grad_ref.py --world-size W --seq S --heads HQ --kv-heads HKV
      --head-dim D --seed N --out-dir DIR

Every rank r holds its own q [S, HQ*D], k, v [S, HKV*D] and dO [S, HQ*D]
(DIR/{q,k,v,do}.r.npy, f32, random and non-zero): the rank-local tensors
of a rank-local attention whose rank holds HQ query heads and HKV kv heads
(group HQ / HKV), causal, scale 1/sqrt(D). DIR/{dq,dk,dv}/ref.r.npy are the
float64 gradients of <dO, attention(q, k, v)> from the values as stored,
for testing/tools/attention_ref.py check --dir DIR/dq.
"""

import argparse
import math
import os
import random
import sys

TOOLS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..",
                     "testing", "tools")
sys.path.insert(0, TOOLS)
import attention_ref  # noqa: E402


def grads(q, k, v, do, d, hq, hkv):
    """dq, dk, dv of one causal sequence (the definitions, docs/attention.md)."""
    s, g, scale = len(q), hq // hkv, 1.0 / math.sqrt(d)
    dq = [[0.0] * (hq * d) for _ in range(s)]
    dk = [[0.0] * (hkv * d) for _ in range(s)]
    dv = [[0.0] * (hkv * d) for _ in range(s)]
    for h in range(hq):
        t = h // g
        for i in range(s):
            sc = [scale * math.fsum(q[i][h * d + c] * k[j][t * d + c] for c in range(d))
                  for j in range(i + 1)]
            top = max(sc)
            e = [math.exp(x - top) for x in sc]
            total = math.fsum(e)
            p = [x / total for x in e]
            dp = [math.fsum(do[i][h * d + c] * v[j][t * d + c] for c in range(d))
                  for j in range(i + 1)]
            delta = math.fsum(p[j] * dp[j] for j in range(i + 1))
            for j in range(i + 1):
                ds = p[j] * (dp[j] - delta)
                for c in range(d):
                    dq[i][h * d + c] += scale * ds * k[j][t * d + c]
                    dk[j][t * d + c] += scale * ds * q[i][h * d + c]
                    dv[j][t * d + c] += p[j] * do[i][h * d + c]
    return dq, dk, dv


def main():
    ap = argparse.ArgumentParser()
    for name in ("world-size", "seq", "heads", "kv-heads", "head-dim", "seed"):
        ap.add_argument("--" + name, type=int, required=True)
    ap.add_argument("--out-dir", required=True)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    d, hq, hkv = a.head_dim, a.heads, a.kv_heads
    for sub in ("dq", "dk", "dv"):
        os.makedirs(os.path.join(a.out_dir, sub), exist_ok=True)
    for r in range(a.world_size):
        x = {}
        for name, f in (("q", hq), ("k", hkv), ("v", hkv), ("do", hq)):
            m = attention_ref.rounded(attention_ref.random_matrix(rng, a.seq, f * d), "f32")
            attention_ref.save(os.path.join(a.out_dir, "%s.%d.npy" % (name, r)), m, "f32")
            x[name] = m
        for sub, ref in zip(("dq", "dk", "dv"),
                            grads(x["q"], x["k"], x["v"], x["do"], d, hq, hkv)):
            attention_ref.save_ref(os.path.join(a.out_dir, sub, "ref.%d.npy" % r), ref)
    return 0


if __name__ == "__main__":
    sys.exit(main())
