"""Train a GPT-2-style MLP tensor-parallel through shardlin, next to the same
model trained in plain PyTorch (docs/python.md, "PyTorch").

    PYTHONPATH=build/python python examples/python/train_mlp.py [--steps N]
        [--world-size W] [--optimizer sgd|adam] [--backend threads|mpi]

The model, y = fc2(gelu(fc1(x))) (H = 22, F = 38, float32), regresses a fixed
random teacher MLP's output from fresh random inputs (12 rows per step), with
the loss mean((y - t)^2). fc1 is split by its out features (colwise) and fc2
by its in features (rowwise) over W ranks (default 3: 38 = 13 + 13 + 12),
the rows split too (act="sequence"). Each step:

    loss = ((tp(x) - t) ** 2).mean(); opt.zero_grad(); loss.backward(); opt.step()

where tp = shardlin.torch.parallelize(model, ...) runs the compiled forward
and, in loss.backward(), the compiler's generated backward, whose gradients
autograd puts into model's parameters' .grad. A copy of the model trains in
plain PyTorch on the same batches with the same optimizer. Both are float32:
each step's losses must agree within BOUND relative; they differ by the
order of float32 additions (shardlin sums over ranks, PyTorch within one
GEMM), about 2^-24 relative per operation, which the training compounds
slowly: BOUND = 1e-5 (300 steps of SGD gave at most 2.7e-7 here, 200 of Adam 3.0e-7;
the script prints the largest). The loss must also fall: the mean of the
last 25 steps' below half the first 25's. Under `mpirun -np W ... --backend mpi` each process is one rank
(rank 0 prints).
"""
import argparse
import copy
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

import shardlin.torch

H, FF, ROWS = 22, 38, 12
BOUND = 1e-5


class MLP(nn.Module):
    def __init__(self, h, f):
        super().__init__()
        self.fc1 = nn.Linear(h, f)
        self.fc2 = nn.Linear(f, h)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x)))


def optimizer(name, params):
    if name == "sgd":
        return torch.optim.SGD(params, lr=0.1, momentum=0.9)
    return torch.optim.Adam(params, lr=3e-3)


def train(steps=300, world_size=3, opt_name="sgd", backend="threads",
          verbose=True):
    """Returns [(shardlin loss, PyTorch loss)] per step."""
    torch.manual_seed(0)
    teacher = MLP(H, FF)
    model = MLP(H, FF)
    plain = copy.deepcopy(model)
    x0 = torch.randn(ROWS, H)
    tp = shardlin.torch.parallelize(model, {"fc1": "colwise", "fc2": "rowwise"},
                                    world_size, (x0,), act="sequence",
                                    backend=backend)
    opt, opt_plain = optimizer(opt_name, tp.parameters()), optimizer(
        opt_name, plain.parameters())
    losses = []
    for step in range(steps):
        x = torch.randn(ROWS, H)
        with torch.no_grad():
            t = teacher(x)
        loss = ((tp(x) - t) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        loss_plain = ((plain(x) - t) ** 2).mean()
        opt_plain.zero_grad()
        loss_plain.backward()
        opt_plain.step()
        losses.append((loss.item(), loss_plain.item()))
        if verbose and (step % 25 == 0 or step == steps - 1):
            a, b = losses[-1]
            print(f"{step:5d}  {a:.9f}  {b:.9f}  {abs(a - b) / abs(b):.1e}")
    return losses


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--world-size", type=int, default=3)
    p.add_argument("--optimizer", choices=["sgd", "adam"], default="sgd")
    p.add_argument("--backend", default="threads")
    a = p.parse_args()
    torch.set_num_threads(1)
    rank0 = True
    if a.backend == "mpi":
        import os
        rank0 = os.environ.get("OMPI_COMM_WORLD_RANK", "0") == "0"
    if rank0:
        print(f" step  loss ({a.world_size} ranks, shardlin)  loss (PyTorch)  "
              f"rel. diff")
    losses = train(a.steps, a.world_size, a.optimizer, a.backend,
                   verbose=rank0)
    worst = max(abs(s - t) / abs(t) for s, t in losses)
    first = sum(s for s, _ in losses[:25]) / len(losses[:25])
    last = sum(s for s, _ in losses[-25:]) / len(losses[-25:])
    falls = last < 0.5 * first
    if rank0:
        print(f"largest relative difference {worst:.1e} (bound {BOUND:g}); "
              f"mean loss of the first 25 steps {first:.4f}, of the last 25 "
              f"{last:.4f}: "
              f"{'ok' if worst <= BOUND and falls else 'FAIL'}")
    return 0 if worst <= BOUND and falls else 1


if __name__ == "__main__":
    sys.exit(main())
