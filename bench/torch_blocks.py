#!/usr/bin/python3
"""Times PyTorch DTensor tensor-parallel blocks for shardlin-bench's blocks section.

    bench/.venv/bin/python bench/torch_blocks.py --world-size=W \
        --shapes="mlp,H,F,B;swiglu,H,F,B" \
        [--warmup=2 --min-trials=3 --max-trials=15 --min-time=0.3 --trial-time=0.02]

Starts W processes (torch.multiprocessing, spawn) that meet through a
FileStore in a temporary directory and form a gloo process group, one
thread each (torch.set_num_threads(1), OMP/MKL/OpenBLAS threads 1). Per
shape, the block shardlin-bench measures, f32, biases on every linear:

    mlp:    down(gelu_tanh(up(x)))            up: H -> F, down: F -> H
    swiglu: down(silu(gate(x)) * up(x))       gate, up: H -> F

parallelized the Megatron sequence-parallel way with
torch.distributed.tensor.parallel: the block's input arrives as each rank's
B rows (Shard(0)) and is gathered once (PrepareModuleInput to Replicate),
gate/up are ColwiseParallel, down is RowwiseParallel with a Shard(0) output
(a reduce_scatter), so each rank ends with its B rows, as in shardlin's
fused form. Each rank's output is compared once with the unsharded module
on its rows (the max error relative to max |y| is printed).

The timing protocol is shardlin-bench's: warm-up runs (the slowest rank's
last one sizes the trials), then trials of back-to-back runs, each trial
after a barrier and timed from the earliest start to the latest end over
ranks (time.monotonic: CLOCK_MONOTONIC, shared by the processes); the
median over trials of the per-run time.

With --backward, the same model trains: loss = sum(y * dy) with a fixed
random dy of each rank's rows (so the output's gradient is dy, as
shardlin-bench's @main_backward gets it), and three measurements with the
same protocol: the forward with autograd recording (to the loss), a training step
(forward + loss.backward(), the parameters' .grad set to None first, no
optimizer) and loss.backward() alone on a graph kept (retain_graph=True)
from one forward. Each rank's input gradient and its shards of the weight
and bias gradients are compared once with the unsharded module's, run on
every rank's rows (max error relative to each gradient's max |g|).

Output on stdout, one line each (parsed by shardlin-bench):
    torch VERSION
    result KIND H F B MEDIAN_S MIN_S MAX_S MAX_REL_ERROR ITERS TRIALS
    result KIND H F B FORWARD_S STEP_S BACKWARD_S MAX_REL_ERROR  (--backward;
                                                            medians)
or, if PyTorch (with torch.distributed.tensor) cannot be imported:
    unavailable REASON           (exit status 3)
"""

import argparse
import os
import sys
import tempfile
import time

from torch_timing import add_timing_args, median, plan_trials


# The DTensor process-group setup, shared with bench/dtensor_attention.py.

def single_thread_env():
    """One BLAS/OpenMP thread per process; call before torch is loaded (the
    spawned workers inherit the environment)."""
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = "1"


def import_torch_or_exit():
    """Imports torch with torch.distributed.tensor and gloo, or prints
    `unavailable REASON` and exits with status 3. Returns torch."""
    try:
        import torch
        import torch.distributed  # noqa: F401
        import torch.distributed.tensor.parallel  # noqa: F401
    except Exception as e:  # ImportError, or a broken install
        print("unavailable cannot import torch.distributed.tensor with %s: %s"
              % (sys.executable, e))
        sys.exit(3)
    if not torch.distributed.is_available() or \
            not torch.distributed.is_gloo_available():
        print("unavailable torch %s has no gloo backend" % torch.__version__)
        sys.exit(3)
    return torch


def init_gloo_mesh(rank, world_size, store_path, timeout_s=None):
    """Joins the gloo group of `world_size` processes meeting at the
    FileStore `store_path`, with one torch thread; returns a 1-D CPU mesh."""
    import datetime

    import torch
    import torch.distributed as dist
    from torch.distributed.device_mesh import init_device_mesh

    torch.set_num_threads(1)
    kwargs = {}
    if timeout_s is not None:
        kwargs["timeout"] = datetime.timedelta(seconds=timeout_s)
    dist.init_process_group("gloo",
                            store=dist.FileStore(store_path, world_size),
                            rank=rank, world_size=world_size, **kwargs)
    return init_device_mesh("cpu", (world_size,))


def spawn_world(worker, args, world_size, timeout_s=None,
                start_method="spawn"):
    """Runs worker(rank, *args, store_path) in `world_size` processes
    (torch.multiprocessing, `start_method`: "fork" skips the workers' torch
    import). Returns True when all ended; False when `timeout_s` passed
    first (the processes are then terminated)."""
    import torch.multiprocessing as mp

    with tempfile.TemporaryDirectory(prefix="shardlin-dtensor-") as d:
        ctx = mp.start_processes(
            worker, args=tuple(args) + (os.path.join(d, "store"),),
            nprocs=world_size, join=False, start_method=start_method)
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while not ctx.join(timeout=1.0):
            if deadline is not None and time.monotonic() > deadline:
                for proc in ctx.processes:
                    if proc.is_alive():
                        proc.terminate()
                for proc in ctx.processes:
                    proc.join()
                return False
    return True


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--world-size", type=int, required=True)
    p.add_argument("--shapes", required=True,
                   help="semicolon-separated KIND,H,F,B (KIND: mlp | swiglu)")
    p.add_argument("--backward", action="store_true",
                   help="time forward + loss.backward() and the backward "
                        "alone instead of the forward")
    add_timing_args(p)
    return p.parse_args()


def parse_shapes(text):
    shapes = []
    for item in text.split(";"):
        if item.strip():
            kind, h, f, b = item.split(",")
            if kind not in ("mlp", "swiglu"):
                raise ValueError("unknown block kind %r" % kind)
            shapes.append((kind, int(h), int(f), int(b)))
    return shapes


def worker(rank, args, store_path):
    import torch
    import torch.distributed as dist
    import torch.nn as nn
    import torch.nn.functional as F
    from torch.distributed.tensor import Replicate, Shard
    from torch.distributed.tensor.parallel import (ColwiseParallel,
                                                   PrepareModuleInput,
                                                   RowwiseParallel,
                                                   parallelize_module)

    w = args.world_size
    mesh = init_gloo_mesh(rank, w, store_path)

    class Mlp(nn.Module):
        def __init__(self, h, f):
            super().__init__()
            self.up = nn.Linear(h, f)
            self.down = nn.Linear(f, h)

        def forward(self, x):
            return self.down(F.gelu(self.up(x), approximate="tanh"))

    class SwiGlu(nn.Module):
        def __init__(self, h, f):
            super().__init__()
            self.gate = nn.Linear(h, f)
            self.up = nn.Linear(h, f)
            self.down = nn.Linear(f, h)

        def forward(self, x):
            return self.down(F.silu(self.gate(x)) * self.up(x))

    class Block(nn.Module):
        def __init__(self, ffn):
            super().__init__()
            self.ffn = ffn

        def forward(self, x):
            return self.ffn(x)

    def all_min_max(values, op):
        t = torch.tensor(values, dtype=torch.float64)
        dist.all_reduce(t, op=op)
        return t.tolist()

    def timed(run):
        """The protocol on `run`: the median over trials of the per-run
        time, from the earliest start to the latest end over ranks."""
        warm = 0.0
        for _ in range(max(1, args.warmup)):
            dist.barrier()
            t0 = time.monotonic()
            run()
            warm = time.monotonic() - t0
        (slowest,) = all_min_max([warm], dist.ReduceOp.MAX)
        iters, trials = plan_trials(slowest, args)
        starts, ends = [], []
        for _ in range(trials):
            dist.barrier()
            starts.append(time.monotonic())
            for _ in range(iters):
                run()
            ends.append(time.monotonic())
        starts = all_min_max(starts, dist.ReduceOp.MIN)
        ends = all_min_max(ends, dist.ReduceOp.MAX)
        per_run = sorted((e - s) / iters for s, e in zip(starts, ends))
        return per_run, iters, trials

    def build(kind, h, f):
        """The dense module (the same weights on every rank) and its copy
        parallelized with the Megatron-SP plan."""
        torch.manual_seed(0)
        dense = Block(Mlp(h, f) if kind == "mlp" else SwiGlu(h, f))
        model = Block(Mlp(h, f) if kind == "mlp" else SwiGlu(h, f))
        model.load_state_dict(dense.state_dict())
        plan = {
            "ffn": PrepareModuleInput(input_layouts=(Shard(0),),
                                      desired_input_layouts=(Replicate(),)),
            "ffn.up": ColwiseParallel(),
            "ffn.down": RowwiseParallel(output_layouts=Shard(0)),
        }
        if kind == "swiglu":
            plan["ffn.gate"] = ColwiseParallel()
        parallelize_module(model, mesh, plan)
        return dense, model

    def rows_of(r, b, h):
        """Rank r's input rows and output gradient."""
        g = torch.Generator().manual_seed(1 + r)
        x = torch.rand(b, h, dtype=torch.float32, generator=g) * 2 - 1
        dy = torch.rand(b, h, dtype=torch.float32, generator=g) * 2 - 1
        return x, dy

    def forward_of(model, x):
        # The output may be an AsyncCollectiveTensor whose reduce_scatter is
        # still in flight: wait for it, so that a run ends when its result
        # is there.
        out = model(x)
        return out.wait() if hasattr(out, "wait") else out

    def rel_err(got, want):
        return ((got - want).abs().max() /
                want.abs().max().clamp_min(1e-30)).item()

    def backward_shape(kind, h, f, b):
        dense, model = build(kind, h, f)
        x, dy = rows_of(rank, b, h)
        x.requires_grad_(True)
        params = list(model.parameters())

        def loss_of():
            # The loss waits for the output's reduce_scatter (its operand
            # may be an AsyncCollectiveTensor, whose wait() would leave the
            # graph).
            return (model(x) * dy).sum()

        def step():
            for p in params:
                p.grad = None
            x.grad = None
            loss_of().backward()

        # The gradients, once: dx against the dense module on this rank's
        # rows; the parameters' (summed over every rank's rows) against the
        # dense module on all ranks' rows where that is cheap.
        step()
        xr = x.detach().clone().requires_grad_(True)
        (dense(xr) * dy).sum().backward()
        err = rel_err(x.grad, xr.grad)
        if w * b * h * f <= 2 ** 30:
            dense.zero_grad(set_to_none=True)
            xs, dys = zip(*(rows_of(r, b, h) for r in range(w)))
            (dense(torch.cat(xs)) * torch.cat(dys)).sum().backward()
            want = dict(dense.named_parameters())
            for name, p in model.named_parameters():
                g = p.grad.full_tensor() if hasattr(p.grad, "full_tensor") \
                    else p.grad
                err = max(err, rel_err(g, want[name].grad))
        (max_err,) = all_min_max([err], dist.ReduceOp.MAX)

        forward, _, _ = timed(loss_of)
        steps, _, _ = timed(step)
        loss = loss_of()

        def backward():
            for p in params:
                p.grad = None
            x.grad = None
            loss.backward(retain_graph=True)

        backwards, _, _ = timed(backward)
        if rank == 0:
            print("result %s %d %d %d %.9g %.9g %.9g %.3g" %
                  (kind, h, f, b, median(forward), median(steps),
                   median(backwards), max_err), flush=True)

    for kind, h, f, b in parse_shapes(args.shapes):
        if args.backward:
            backward_shape(kind, h, f, b)
            continue
        dense, model = build(kind, h, f)
        torch.manual_seed(1 + rank)  # each rank its own rows
        x = torch.rand(b, h, dtype=torch.float32) * 2 - 1
        with torch.no_grad():
            reference = dense(x)

        def run():
            return forward_of(model, x)

        with torch.no_grad():
            y = run()
            if hasattr(y, "to_local"):
                y = y.to_local()
            err = rel_err(y, reference)
            (max_err,) = all_min_max([err], dist.ReduceOp.MAX)

            per_run, iters, trials = timed(run)
        if rank == 0:
            print("result %s %d %d %d %.9g %.9g %.9g %.3g %d %d" %
                  (kind, h, f, b, median(per_run), per_run[0], per_run[-1],
                   max_err,
                   iters, trials), flush=True)
    dist.barrier()
    dist.destroy_process_group()


def main():
    args = parse_args()
    single_thread_env()
    torch = import_torch_or_exit()
    parse_shapes(args.shapes)  # fail here, not in W workers
    print("torch %s" % torch.__version__, flush=True)
    if not spawn_world(worker, (args,), args.world_size):
        sys.exit(1)


if __name__ == "__main__":
    main()
