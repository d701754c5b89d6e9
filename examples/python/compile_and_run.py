"""Compile examples/quickstart/linear.mlir and run it on 4 ranks from Python
(docs/python.md): A (11 x 19) split along K over 4 ranks, each rank its own
x (5 x 19); every rank's y is checked against a float64 reference.

    PYTHONPATH=build/python python examples/python/compile_and_run.py
"""
import pathlib

import numpy as np

import shardlin

ROOT = pathlib.Path(__file__).resolve().parents[2]
program = shardlin.compile(ROOT / "examples/quickstart/linear.mlir")
print(program)
print(program.explain())

rng = np.random.default_rng(0)
W = program.world_size
xs = [rng.uniform(-1, 1, (5, 19)).astype(np.float32) for _ in range(W)]  # per rank
w = rng.uniform(-1, 1, (11, 19)).astype(np.float32)  # the global weight
b = rng.uniform(-1, 1, 11).astype(np.float32)

ys = program.run(xs, w, b, per_rank=True)
for rank, (y,) in enumerate(ys):
    ref = xs[rank].astype(np.float64) @ w.astype(np.float64).T + b
    err = np.max(np.abs(y - ref) / np.maximum(1.0, np.abs(ref)))
    assert err <= 1e-5, f"rank {rank}: max relative error {err:.2e}"
print(f"{W} ranks match the float64 reference (bound 1e-05)")

try:
    program.run(xs, w.astype(np.float64), b)
except shardlin.InvalidArgumentError as e:
    print(f"refused: status {e.status} ({e.status_name})")
