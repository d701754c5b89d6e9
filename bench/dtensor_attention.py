#!/usr/bin/python3
"""PyTorch DTensor tensor parallelism on transformer decoder layers (issue 41's peer).

    PY=/root/.cache/shardlin/frontend-1f22c0651fb95e6e/bin/python   # or bench/torch-venv.sh's
    $PY bench/dtensor_attention.py [--models=llama,gpt2,gpt2-split]
        [--cases="8,4,4;8,2,2;..."] [--check-d=8 --check-seq=12 --check-batch=2]
        [--d=64 --seq=256 --batch=1 --warmup=2 --steps=5] [--no-time]
        [--json=PATH] [--case-timeout=180]

For each layer and (Hq, Hkv, W), W processes (torch.multiprocessing fork,
gloo, one thread each: bench/torch_blocks.py's setup, imported) parallelize
one decoder layer with the plan of PyTorch's TP tutorial (and its Llama
example, pytorch/examples distributed/tensor_parallelism):

    norms            SequenceParallel()          (each rank's S / W rows)
    attention, mlp   PrepareModuleInput(Shard(1) -> Replicate())  (all_gather)
    q, k, v, gate/up ColwiseParallel()           (the fused qkv of gpt2 too)
    o, down          RowwiseParallel(output_layouts=Shard(1))    (reduce_scatter)

and the tutorial's heads-per-rank adjustment: the attention module's
n_heads and n_kv_heads become n_heads // W and n_kv_heads // W (its forward
views q as [B, S, n_heads, D]).

    llama:      RMSNorm -> q, k, v (no bias) -> RoPE -> causal SDPA, GQA
                (repeat_interleave of kv heads) -> o -> residual -> RMSNorm
                -> SwiGLU (F = 8H/3 rounded up to 64) -> residual
    gpt2:       LayerNorm -> fused qkv Linear [(Hq + 2 Hkv) D, H] with bias
                -> split -> causal SDPA (GQA when Hkv < Hq) -> o (bias) ->
                residual -> LayerNorm -> GELU(tanh) MLP (F = 4H, biases)
                -> residual
    gpt2-split: gpt2 with separate q, k, v Linears (biases)

Per case, exactly one outcome:

  ok          runs, and every rank's forward output rows, input gradient
              and every parameter gradient (DTensor grads gathered with
              full_tensor()) match the unsharded float64 layer: the sharded
              layer also runs in float64, loss = sum(y * dy) with random
              x, dy; max |got - want| / max |want| <= --bound (1e-10) for
              each tensor (a bias's gradient on the scale of its module's
              weight gradient as well: the k bias's exact gradient is 0);
  WRONG       runs, but some tensor exceeds the bound (the max relative
              error and the tensor are printed);
  REFUSED     a rank raises: the exception's first line (from the lowest
              rank whose error is not a peer's lost connection); also
              when no result comes within --case-timeout (said so). An
              exception while timing, after a passing check, is kept as
              the case's "timing_error" instead;
  cannot be expressed   W > Hkv (or W > Hq): the tutorial's per-rank head
              count n_kv_heads // W is 0 and ColwiseParallel cannot
              replicate K and V to the ranks that need them; what running
              the code anyway did is printed after it.

S is rounded up to a multiple of W (from_local's Shard(1) assumes even
sequence shards; the head split is what is measured here). Where the check
passes, a training step (forward, loss, backward; grads set to None first)
is timed at the bench shape (f32, B, S, D, H = Hq * D): --warmup steps, then
--steps steps, each after a barrier, each step's time the slowest rank's;
the median is reported.

Output: a Markdown table on stdout; with --json PATH, a JSON object with the
machine, torch version, thread settings, shapes and "cases" keyed by
"MODEL/Hq/Hkv/W", each case holding a "dtensor" entry and, for llama, a
"shardlin" one: the same layer through shardlin (bench/shardlin_attention.py,
`import shardlin` from --shardlin-pythonpath, the backward from
--shardlin-opt), x replicated, checked against float64, its forward and
training step timed beside DTensor's (wall and CPU time); --no-shardlin
leaves it out.
"""

import argparse
import json
import math
import os
import platform
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_blocks import (import_torch_or_exit, init_gloo_mesh,  # noqa: E402
                          single_thread_env, spawn_world)
from torch_timing import median  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_CASES = ("8,4,4;8,2,2;12,4,8;25,5,4;7,7,3;32,8,6;6,2,4;12,4,3;"
                 "40,8,6;56,8,7;96,8,6")
MODELS = ("llama", "gpt2", "gpt2-split")


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--models", default=",".join(MODELS))
    p.add_argument("--cases", default=DEFAULT_CASES,
                   help="semicolon-separated Hq,Hkv,W")
    p.add_argument("--check-d", type=int, default=8)
    p.add_argument("--check-seq", type=int, default=12)
    p.add_argument("--check-batch", type=int, default=2)
    p.add_argument("--bound", type=float, default=1e-10)
    p.add_argument("--d", type=int, default=64, help="bench head_dim")
    p.add_argument("--seq", type=int, default=256, help="bench S")
    p.add_argument("--batch", type=int, default=1, help="bench B")
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--no-time", action="store_true")
    p.add_argument("--case-timeout", type=float, default=180.0)
    p.add_argument("--gloo-timeout", type=float, default=60.0)
    p.add_argument("--json", metavar="PATH")
    p.add_argument("--no-shardlin", action="store_true",
                   help="do not time shardlin's side (llama layers)")
    p.add_argument("--shardlin-pythonpath", default=os.path.join(
        REPO, "build", "python"), help="where `import shardlin` is found "
        "(the build's python/ folder; default %(default)s)")
    p.add_argument("--shardlin-opt", default=os.path.join(
        REPO, "build", "bin", "shardlin-opt"), help="the shardlin-opt that "
        "differentiates the layer for shardlin's step (default %(default)s)")
    p.add_argument("--shardlin-bound", type=float, default=1e-4,
                   help="shardlin's f32 output against the float64 layer, "
                        "max |diff| / max |y|")
    a = p.parse_args(argv)
    a.models = [m for m in a.models.split(",") if m]
    for m in a.models:
        if m not in MODELS:
            p.error("unknown model %r (one of %s)" % (m, ", ".join(MODELS)))
    try:
        a.cases = parse_cases(a.cases)
    except ValueError as e:
        p.error(str(e))
    return a


def parse_cases(text):
    cases = []
    for item in text.split(";"):
        if item.strip():
            hq, hkv, w = (int(v) for v in item.split(","))
            if hq <= 0 or hkv <= 0 or w <= 0 or hq % hkv:
                raise ValueError("bad case %r: need Hq, Hkv, W > 0 and "
                                 "Hkv dividing Hq" % item)
            cases.append((hq, hkv, w))
    return cases


def round_up(n, m):
    return -(-n // m) * m


def inexpressible(hq, hkv, w):
    """Why the tutorial's plan cannot express (hq, hkv, w), or None."""
    if w > hq:
        return ("W > Hq: n_heads // W = 0, a rank without query heads has "
                "no form in the plan")
    if w > hkv:
        return ("W > Hkv: n_kv_heads // W = 0; ColwiseParallel splits K/V, "
                "it cannot replicate a kv head to the ranks whose query "
                "heads need it")
    return None


# ----------------------------------------------------------------- layers

def layer_classes():
    """The decoder layers (defined once torch is importable)."""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class RMSNorm(nn.Module):
        def __init__(self, h, eps=1e-6):
            super().__init__()
            self.eps = eps
            self.weight = nn.Parameter(torch.ones(h))

        def forward(self, x):
            return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) +
                                   self.eps) * self.weight

    def rope(x, theta=10000.0):
        """Rotary embedding on [B, S, heads, D] (rotate-half form), the
        tables computed for positions 0..S-1."""
        s, d = x.shape[1], x.shape[-1]
        inv = 1.0 / theta ** (torch.arange(0, d, 2, dtype=x.dtype) / d)
        ang = torch.outer(torch.arange(s, dtype=x.dtype), inv)
        cos = torch.cat([ang.cos(), ang.cos()], -1)[None, :, None, :]
        sin = torch.cat([ang.sin(), ang.sin()], -1)[None, :, None, :]
        x1, x2 = x[..., : d // 2], x[..., d // 2:]
        return x * cos + torch.cat([-x2, x1], -1) * sin

    def attend(q, k, v, n_heads, n_kv_heads):
        """Causal SDPA on [B, S, heads, D], kv heads repeated for GQA."""
        q, k, v = (t.transpose(1, 2) for t in (q, k, v))
        rep = n_heads // n_kv_heads
        k = k.repeat_interleave(rep, dim=1)
        v = v.repeat_interleave(rep, dim=1)
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return o.transpose(1, 2).reshape(o.shape[0], o.shape[2], -1)

    class LlamaAttention(nn.Module):
        def __init__(self, h, hq, hkv, d):
            super().__init__()
            self.n_heads, self.n_kv_heads, self.head_dim = hq, hkv, d
            self.wq = nn.Linear(h, hq * d, bias=False)
            self.wk = nn.Linear(h, hkv * d, bias=False)
            self.wv = nn.Linear(h, hkv * d, bias=False)
            self.wo = nn.Linear(hq * d, h, bias=False)

        def forward(self, x):
            b, s = x.shape[0], x.shape[1]
            q = self.wq(x).view(b, s, self.n_heads, self.head_dim)
            k = self.wk(x).view(b, s, self.n_kv_heads, self.head_dim)
            v = self.wv(x).view(b, s, self.n_kv_heads, self.head_dim)
            return self.wo(attend(rope(q), rope(k), v, self.n_heads,
                                  self.n_kv_heads))

    class SwiGlu(nn.Module):
        def __init__(self, h, f):
            super().__init__()
            self.w1 = nn.Linear(h, f, bias=False)
            self.w3 = nn.Linear(h, f, bias=False)
            self.w2 = nn.Linear(f, h, bias=False)

        def forward(self, x):
            return self.w2(F.silu(self.w1(x)) * self.w3(x))

    class Gpt2Attention(nn.Module):
        def __init__(self, h, hq, hkv, d, fused):
            super().__init__()
            self.n_heads, self.n_kv_heads, self.head_dim = hq, hkv, d
            self.fused = fused
            if fused:
                self.c_attn = nn.Linear(h, (hq + 2 * hkv) * d)
            else:
                self.q = nn.Linear(h, hq * d)
                self.k = nn.Linear(h, hkv * d)
                self.v = nn.Linear(h, hkv * d)
            self.c_proj = nn.Linear(hq * d, h)

        def forward(self, x):
            b, s = x.shape[0], x.shape[1]
            d = self.head_dim
            if self.fused:
                q, k, v = self.c_attn(x).split(
                    [self.n_heads * d, self.n_kv_heads * d,
                     self.n_kv_heads * d], dim=-1)
            else:
                q, k, v = self.q(x), self.k(x), self.v(x)
            q = q.view(b, s, self.n_heads, d)
            k = k.view(b, s, self.n_kv_heads, d)
            v = v.view(b, s, self.n_kv_heads, d)
            return self.c_proj(attend(q, k, v, self.n_heads,
                                      self.n_kv_heads))

    class GeluMlp(nn.Module):
        def __init__(self, h, f):
            super().__init__()
            self.c_fc = nn.Linear(h, f)
            self.c_proj = nn.Linear(f, h)

        def forward(self, x):
            return self.c_proj(F.gelu(self.c_fc(x), approximate="tanh"))

    class Layer(nn.Module):
        """x + attn(norm1(x)), then + mlp(norm2(.))."""

        def __init__(self, norm1, attention, norm2, mlp):
            super().__init__()
            self.norm1, self.attention = norm1, attention
            self.norm2, self.mlp = norm2, mlp

        def forward(self, x):
            h = x + self.attention(self.norm1(x))
            return h + self.mlp(self.norm2(h))

    def make(model, hq, hkv, d):
        h = hq * d
        if model == "llama":
            f = round_up(8 * h // 3, 64)
            return Layer(RMSNorm(h), LlamaAttention(h, hq, hkv, d),
                         RMSNorm(h), SwiGlu(h, f))
        return Layer(nn.LayerNorm(h), Gpt2Attention(h, hq, hkv, d,
                                                    model == "gpt2"),
                     nn.LayerNorm(h), GeluMlp(h, 4 * h))

    return make


def tp_plan(model):
    """The TP tutorial's plan for one layer (relative to the layer)."""
    from torch.distributed.tensor import Replicate, Shard
    from torch.distributed.tensor.parallel import (ColwiseParallel,
                                                   PrepareModuleInput,
                                                   RowwiseParallel,
                                                   SequenceParallel)

    def gather():
        return PrepareModuleInput(input_layouts=(Shard(1),),
                                  desired_input_layouts=(Replicate(),))

    plan = {"norm1": SequenceParallel(), "attention": gather(),
            "norm2": SequenceParallel(), "mlp": gather()}
    if model == "llama":
        cols = ["attention.wq", "attention.wk", "attention.wv", "mlp.w1",
                "mlp.w3"]
        rows = ["attention.wo", "mlp.w2"]
    else:
        cols = (["attention.c_attn"] if model == "gpt2" else
                ["attention.q", "attention.k", "attention.v"]) + ["mlp.c_fc"]
        rows = ["attention.c_proj", "mlp.c_proj"]
    for name in cols:
        plan[name] = ColwiseParallel()
    for name in rows:
        plan[name] = RowwiseParallel(output_layouts=Shard(1))
    return plan


# ----------------------------------------------------------------- workers

def rel_err(got, want, scale=None):
    """max |got - want| / max |scale| (scale: want by default)."""
    scale = want if scale is None else scale
    return ((got.double() - want.double()).abs().max() /
            scale.double().abs().max().clamp_min(1e-300)).item()


def dense_layer(make, case, d, dtype):
    """The unsharded layer of a case, its weights from seed 0 (the same in
    every process, and for shardlin's side)."""
    import torch

    model, hq, hkv, w = case
    torch.manual_seed(0)
    dense = make(model, hq, hkv, d).to(dtype)
    with torch.no_grad():  # non-trivial norm weights and biases
        for name, p in dense.named_parameters():
            if "norm" in name or name.endswith("bias"):
                p.copy_(torch.rand_like(p) + 0.5 if "norm" in name
                        else torch.rand_like(p) * 0.2 - 0.1)
    return dense


def build(make, case, d, dtype, mesh):
    """(dense layer, TP layer) with the same weights; the TP layer gets the
    plan and the tutorial's n_heads // W adjustment."""
    from torch.distributed.tensor.parallel import parallelize_module

    model, hq, hkv, w = case
    dense = dense_layer(make, case, d, dtype)
    tp = make(model, hq, hkv, d).to(dtype)
    tp.load_state_dict(dense.state_dict())
    parallelize_module(tp, mesh, tp_plan(model))
    tp.attention.n_heads = hq // w
    tp.attention.n_kv_heads = hkv // w
    return dense, tp


def check(make, case, args, rank, mesh):
    """The float64 check; returns (the largest relative error, its tensor,
    the output's relative error)."""
    import torch

    model, hq, hkv, w = case
    d, b = args.check_d, args.check_batch
    s = round_up(args.check_seq, w)
    dense, tp = build(make, case, d, torch.float64, mesh)
    g = torch.Generator().manual_seed(7)
    x = torch.rand(b, s, hq * d, dtype=torch.float64, generator=g) * 2 - 1
    dy = torch.rand(b, s, hq * d, dtype=torch.float64, generator=g) * 2 - 1
    rows = slice(rank * s // w, (rank + 1) * s // w)
    xl = x[:, rows].clone().requires_grad_(True)
    y = tp(xl)
    (y * dy[:, rows]).sum().backward()
    xr = x.clone().requires_grad_(True)
    yr = dense(xr)
    (yr * dy).sum().backward()
    errs = {"output": rel_err(y, yr[:, rows]),
            "grad x": rel_err(xl.grad, xr.grad[:, rows])}
    want = dict(dense.named_parameters())
    for name, p in tp.named_parameters():
        grad = p.grad
        if grad is None:
            errs["grad " + name] = float("inf")
            continue
        if hasattr(grad, "full_tensor"):
            grad = grad.full_tensor()
        # A bias is measured on the scale of its module's weight gradient:
        # the k bias's exact gradient is 0 (softmax is invariant to adding
        # q . b_k to every score), its reference is rounding noise.
        scale = want[name].grad
        weight = want.get(name[: -len("bias")] + "weight")
        if name.endswith("bias") and weight is not None:
            scale = torch.cat([scale.flatten(), weight.grad.flatten()])
        errs["grad " + name] = rel_err(grad, want[name].grad, scale)
    worst = max(errs, key=errs.get)
    return errs[worst], worst, errs["output"]


def time_steps(make, case, args, rank, mesh):
    """Medians over --steps of a training step and of a forward under
    no_grad (each the slowest rank's time)."""
    import time

    import torch
    import torch.distributed as dist

    model, hq, hkv, w = case
    s = round_up(args.seq, w)
    _, tp = build(make, case, args.d, torch.float32, mesh)
    g = torch.Generator().manual_seed(11 + rank)
    x = torch.rand(args.batch, s // w, hq * args.d, generator=g) * 2 - 1
    dy = torch.rand(args.batch, s // w, hq * args.d, generator=g) * 2 - 1
    params = list(tp.parameters())

    def step():
        for p in params:
            p.grad = None
        (tp(x) * dy).sum().backward()

    def forward():
        with torch.no_grad():
            tp(x)

    def timed(fn):
        """Per step: the slowest rank's wall time, and the CPU time of the
        W processes summed (time.process_time: every thread of the
        process, gloo's included)."""
        times, cpu = [], []
        for i in range(args.warmup + args.steps):
            dist.barrier()
            t0, c0 = time.monotonic(), time.process_time()
            fn()
            t = torch.tensor([time.monotonic() - t0], dtype=torch.float64)
            c = torch.tensor([time.process_time() - c0], dtype=torch.float64)
            dist.all_reduce(t, op=dist.ReduceOp.MAX)
            dist.all_reduce(c, op=dist.ReduceOp.SUM)
            if i >= args.warmup:
                times.append(t.item())
                cpu.append(c.item())
        return times, cpu

    times, step_cpu = timed(step)
    forward_times, forward_cpu = timed(forward)
    return {"step_s_median": median(times), "step_s": times,
            "step_cpu_s_median": median(step_cpu),
            "forward_s_median": median(forward_times),
            "forward_s": forward_times,
            "forward_cpu_s_median": median(forward_cpu),
            "forward_cpu_s": forward_cpu,
            "batch": args.batch, "seq": s, "head_dim": args.d,
            "hidden": hq * args.d}


def first_line(e):
    text = str(e).strip().splitlines()
    return "%s: %s" % (type(e).__name__, text[0] if text else "")


def worker(rank, case, args, out_dir, store_path):
    """One rank of one case: writes rank<r>.json to out_dir."""
    import torch
    import torch.distributed as dist

    result = {"rank": rank, "phase": "check"}

    def write():
        with open(os.path.join(out_dir, "rank%d.json" % rank), "w") as f:
            json.dump(result, f)

    try:
        mesh = init_gloo_mesh(rank, case[3], store_path,
                              timeout_s=args.gloo_timeout)
        make = layer_classes()
        err, worst, out_err = check(make, case, args, rank, mesh)
        result.update(max_rel_err=err, worst=worst, output_rel_err=out_err)
        t = torch.tensor([err], dtype=torch.float64)
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        if t.item() <= args.bound and not args.no_time:
            result["phase"] = "time"
            result["timing"] = time_steps(make, case, args, rank, mesh)
        write()
        dist.barrier()
        dist.destroy_process_group()
    except Exception as e:  # the case's outcome, not the script's failure
        result["error"] = first_line(e)
        result["comm_error"] = is_comm_error(e)
        write()
        sys.stdout.flush()
        os._exit(0)  # leave the group at once: peers fail instead of hang


def is_comm_error(e):
    """A peer's lost connection or a timeout, as opposed to the cause."""
    text = str(e)
    return any(k in text for k in ("Connection closed by peer",
                                   "Connection reset", "Timed out",
                                   "timed out", "Socket Timeout",
                                   "Broken pipe", "ECONNRESET"))


# ----------------------------------------------------------------- driver

def run_case(case, args):
    """Spawns the W ranks of one case; returns its "dtensor" entry."""
    model, hq, hkv, w = case
    with tempfile.TemporaryDirectory(prefix="shardlin-attn-") as out_dir:
        finished = spawn_world(worker, (case, args, out_dir), w,
                               timeout_s=args.case_timeout,
                               start_method="fork")
        ranks = []
        for r in range(w):
            path = os.path.join(out_dir, "rank%d.json" % r)
            if os.path.exists(path):
                with open(path) as f:
                    ranks.append(json.load(f))
    entry = {"bound": args.bound,
             "check_shape": {"batch": args.check_batch,
                             "seq": round_up(args.check_seq, w),
                             "head_dim": args.check_d,
                             "hidden": hq * args.check_d,
                             "dtype": "float64"}}
    errors = sorted((r for r in ranks if "error" in r),
                    key=lambda r: (r["comm_error"], r["rank"]))
    timing_errors = [r for r in errors if r["phase"] == "time"]
    if timing_errors and len(timing_errors) == len(errors):
        # The check passed on every rank; the timing failed (e.g. memory).
        entry["timing_error"] = "rank %d: %s" % (timing_errors[0]["rank"],
                                                 timing_errors[0]["error"])
        errors = []
    if errors:
        entry.update(outcome="REFUSED",
                     detail="rank %d: %s" % (errors[0]["rank"],
                                             errors[0]["error"]),
                     failing_ranks=[r["rank"] for r in errors
                                    if not r["comm_error"]])
    elif not finished or len(ranks) < w:
        entry.update(outcome="REFUSED",
                     detail="no result within %g s (%d of %d ranks "
                            "reported)" % (args.case_timeout, len(ranks), w))
    else:
        worst = max(ranks, key=lambda r: r["max_rel_err"])
        entry["max_rel_err"] = worst["max_rel_err"]
        entry["output_rel_err"] = max(r["output_rel_err"] for r in ranks)
        if worst["max_rel_err"] <= args.bound:
            entry.update(outcome="ok",
                         detail="max rel err %.2g (%s)" %
                         (worst["max_rel_err"], worst["worst"]))
            if "timing" in ranks[0]:
                entry["timing"] = ranks[0]["timing"]
        else:
            entry.update(outcome="WRONG",
                         detail="max rel err %.3g in %s (rank %d); "
                                "output %.3g" %
                         (worst["max_rel_err"], worst["worst"],
                          worst["rank"], entry["output_rel_err"]))
    why = inexpressible(hq, hkv, w)
    if why is not None:
        entry["attempt"] = "%s: %s" % (entry["outcome"], entry["detail"])
        entry.update(outcome="cannot be expressed", detail=why)
    return entry


def machine_info(torch):
    cpu = platform.processor()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {"host": platform.node(), "platform": platform.platform(),
            "cpu": cpu, "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "torch": torch.__version__,
            "loadavg_at_start": list(os.getloadavg())}


def markdown(report):
    lines = ["| layer | Hq | Hkv | W | DTensor | detail | step ms (B, S, H) "
             "| DTensor fwd ms (cpu) | shardlin | shardlin fwd ms (cpu) "
             "(B, S, H) | fwd shardlin/DTensor (cpu) | shardlin step ms "
             "(cpu) | step shardlin/DTensor (cpu) |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for key, case in report["cases"].items():
        e = case["dtensor"]
        t = e.get("timing")
        step = ("%.2f (%d, %d, %d)" % (1e3 * t["step_s_median"], t["batch"],
                                        t["seq"], t["hidden"])
                if t else "")
        fwd = ("%.2f (%.2f)" % (1e3 * t["forward_s_median"],
                                1e3 * t["forward_cpu_s_median"]) if t else "")
        detail = e["detail"] + ("; ran anyway: " + e["attempt"]
                                if "attempt" in e else "")
        mine = case.get("shardlin")
        ours, our_fwd, ratio = "", "", ""
        if mine:
            ours = mine["outcome"] if mine["outcome"] == "ok" else (
                "%s: %s" % (mine["outcome"], mine["detail"]))
            if "forward_s_median" in mine:
                our_fwd = "%.2f (%.2f) (%d, %d, %d)" % (
                    1e3 * mine["forward_s_median"],
                    1e3 * mine["forward_cpu_s_median"], mine["batch"],
                    mine["seq"], mine["hidden"])
                if t:
                    ratio = "%.2fx (%.2fx)" % (
                        mine["forward_s_median"] / t["forward_s_median"],
                        mine["forward_cpu_s_median"] /
                        t["forward_cpu_s_median"])
        our_step, step_ratio = "", ""
        st = (mine or {}).get("step", {})
        if "step_s_median" in st:
            our_step = "%.2f (%.2f)" % (1e3 * st["step_s_median"],
                                        1e3 * st["step_cpu_s_median"])
            if t:
                step_ratio = "%.2fx (%.2fx)" % (
                    st["step_s_median"] / t["step_s_median"],
                    st["step_cpu_s_median"] / t["step_cpu_s_median"])
        elif st:
            our_step = "%s: %s" % (st["outcome"], st["detail"])
        lines.append("| %s | %d | %d | %d | %s | %s | %s | %s | %s | %s | %s "
                     "| %s | %s |"
                     % (case["model"], case["hq"], case["hkv"], case["w"],
                        e["outcome"], detail.replace("|", "\\|"), step, fwd,
                        ours.replace("|", "\\|"), our_fwd, ratio,
                        our_step.replace("|", "\\|"), step_ratio))
    return "\n".join(lines)


def blas_kernels_for_cpu():
    """OpenBLAS's kernels for this CPU, as shardlin's tools choose them
    (reexecForBlasKernels, docs/performance.md "OpenBLAS's kernels"):
    Debian's DYNAMIC_ARCH OpenBLAS falls back to its Prescott (SSE3) kernels
    on a CPU model it does not know, 2 to 4 times slower, and reads
    OPENBLAS_CORETYPE only when it is loaded, i.e. when `import shardlin`
    loads the extension. A user's own OPENBLAS_CORETYPE and
    SHARDLIN_BLAS_CORETYPE=keep are kept."""
    if "OPENBLAS_CORETYPE" in os.environ or \
            os.environ.get("SHARDLIN_BLAS_CORETYPE") == "keep":
        return
    flags = set()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    break
    except OSError:
        return
    if {"avx512f", "avx512bw", "avx512dq", "avx512vl"} <= flags:
        os.environ["OPENBLAS_CORETYPE"] = "SkylakeX"
    elif {"avx2", "fma"} <= flags:
        os.environ["OPENBLAS_CORETYPE"] = "Haswell"


def import_shardlin(args):
    """bench/shardlin_attention.py with `import shardlin` working, or None
    (said why on stderr): the DTensor side runs without it."""
    sys.path.insert(0, args.shardlin_pythonpath)
    blas_kernels_for_cpu()
    try:
        import shardlin  # noqa: F401
        import shardlin_attention
    except ImportError as e:
        print("shardlin: skipped: %s (build the extension: cmake --build "
              "build --target _shardlin)" % e, file=sys.stderr)
        return None
    return shardlin_attention


def compare(report):
    """shardlin's forward over DTensor's where both ran; the cases only
    shardlin ran."""
    ratios, cpu, step, step_cpu, only = [], [], [], [], []
    for key, case in report["cases"].items():
        mine = case.get("shardlin", {})
        if "forward_s_median" not in mine:
            continue
        theirs = case["dtensor"].get("timing", {})
        if theirs:
            ratios.append((key, mine["forward_s_median"] /
                           theirs["forward_s_median"]))
            cpu.append((key, mine["forward_cpu_s_median"] /
                        theirs["forward_cpu_s_median"]))
            ours = mine.get("step", {})
            if "step_s_median" in ours:
                step.append((key, ours["step_s_median"] /
                             theirs["step_s_median"]))
                step_cpu.append((key, ours["step_cpu_s_median"] /
                                 theirs["step_cpu_s_median"]))
        else:
            only.append((key, case["dtensor"]["outcome"]))

    def geo(pairs):
        return (math.exp(sum(math.log(r) for _, r in pairs) / len(pairs))
                if pairs else None)
    return {"forward_ratios": dict(ratios), "forward_geomean": geo(ratios),
            "forward_cpu_ratios": dict(cpu),
            "forward_cpu_geomean": geo(cpu), "step_ratios": dict(step),
            "step_geomean": geo(step), "step_cpu_ratios": dict(step_cpu),
            "step_cpu_geomean": geo(step_cpu), "only_shardlin": dict(only)}


def summary(cmp):
    lines = []
    if cmp["forward_ratios"]:
        for what, key in (("forward wall", "forward"),
                          ("forward CPU", "forward_cpu"),
                          ("step wall", "step"), ("step CPU", "step_cpu")):
            if not cmp[key + "_ratios"]:
                continue
            lines.append("%s time, shardlin / DTensor where both "
                         "run: %s; geometric mean %.2fx" % (what, ", ".join(
                             "%s %.2fx" % kv
                             for kv in cmp[key + "_ratios"].items()),
                             cmp[key + "_geomean"]))
    if cmp["only_shardlin"]:
        lines.append("run and timed by shardlin only: %s" % ", ".join(
            "%s (DTensor: %s)" % kv for kv in cmp["only_shardlin"].items()))
    return "\n".join(lines)


def main():
    args = parse_args()
    single_thread_env()
    torch = import_torch_or_exit()
    report = {"machine": machine_info(torch),
              "threads": {"processes": "W per case (gloo, fork)",
                          "torch.set_num_threads": 1,
                          "OMP/OPENBLAS/MKL_NUM_THREADS": 1},
              "plan": "TP tutorial: SequenceParallel norms, "
                      "PrepareModuleInput Shard(1)->Replicate, "
                      "ColwiseParallel q/k/v (fused qkv)/gate/up/fc, "
                      "RowwiseParallel(output_layouts=Shard(1)) o/down, "
                      "n_heads //= W, n_kv_heads //= W",
              "args": {k: v for k, v in vars(args).items()
                       if k not in ("json",)},
              "cases": {}}
    shardlin_side = None if args.no_shardlin else import_shardlin(args)
    for model in args.models:
        for hq, hkv, w in args.cases:
            key = "%s/%d/%d/%d" % (model, hq, hkv, w)
            entry = run_case((model, hq, hkv, w), args)
            report["cases"][key] = {"model": model, "hq": hq, "hkv": hkv,
                                    "w": w, "dtensor": entry}
            print("%s: %s (%s)" % (key, entry["outcome"], entry["detail"]),
                  file=sys.stderr, flush=True)
            if model == "llama" and shardlin_side is not None:
                # In this process, after the DTensor ranks have exited.
                mine = shardlin_side.time_forward(
                    (model, hq, hkv, w), args, layer_classes(), dense_layer)
                if mine["outcome"] == "ok":
                    mine["step"] = shardlin_side.time_step(
                        (model, hq, hkv, w), args, layer_classes(),
                        dense_layer)
                report["cases"][key]["shardlin"] = mine
                print("%s: shardlin %s (%s)%s" % (
                    key, mine["outcome"], mine["detail"],
                    ", forward %.2f ms" % (1e3 * mine["forward_s_median"])
                    if "forward_s_median" in mine else ""),
                    file=sys.stderr, flush=True)
    report["shardlin_vs_dtensor"] = compare(report)
    report["shardlin_openblas_coretype"] = os.environ.get("OPENBLAS_CORETYPE")
    print("torch %s, %s, %d CPUs, load average at start %.1f" %
          (torch.__version__, report["machine"]["cpu"],
           report["machine"]["cpus"], report["machine"]["loadavg_at_start"][0]))
    print(markdown(report))
    print(summary(report["shardlin_vs_dtensor"]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
