"""examples/python/train_mlp.py: an MLP trained through shardlin.torch
(forward and generated backward on 3 ranks, SGD) and the same model in plain
PyTorch; the losses agree step by step within the example's bound (1e-5
relative: both are float32, differing by the order of additions) and fall."""
import os
import subprocess
import sys

import pytest

from conftest import ROOT

pytest.importorskip("torch")
pytest.importorskip("torch_mlir")


def test_train_mlp_matches_pytorch():
    sys.path.insert(0, str(ROOT / "examples" / "python"))
    try:
        import train_mlp
    finally:
        sys.path.pop(0)
    losses = train_mlp.train(steps=200, world_size=3, opt_name="sgd",
                             verbose=False)
    assert len(losses) == 200
    for step, (ours, plain) in enumerate(losses):
        assert abs(ours - plain) <= train_mlp.BOUND * abs(plain), (
            f"step {step}: shardlin {ours!r}, PyTorch {plain!r}")
    first = sum(s for s, _ in losses[:25]) / 25
    last = sum(s for s, _ in losses[-25:]) / 25
    assert last < 0.2 * first, (first, last)


def test_train_mlp_script_adam():
    """The script as a user runs it (Adam, 4 ranks: 38 = 10 + 10 + 10 + 8)."""
    env = dict(os.environ)
    out = subprocess.run(
        [sys.executable, str(ROOT / "examples/python/train_mlp.py"),
         "--optimizer", "adam", "--steps", "150", "--world-size", "4"],
        capture_output=True, text=True, timeout=240, env=env)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "(bound 1e-05)" in out.stdout and out.stdout.rstrip().endswith("ok")
