"""examples/python/train_mlp.py: an MLP trained through shardlin.torch
(forward and generated backward on 3 ranks, SGD) and the same model in plain
PyTorch; the losses agree step by step within the example's bound (1e-5
relative: both are float32, differing by the order of additions) and fall.
Then the script as a user runs it, under mpirun (backend="mpi")."""
import os
import shutil
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


def test_train_mlp_under_mpirun():
    """The same training with backend="mpi": each of 2 processes is one rank
    (rank 0 prints); the losses still match plain PyTorch's."""
    mpirun = os.environ.get("SHARDLIN_MPIEXEC") or shutil.which("mpirun")
    if not mpirun:
        pytest.skip("no mpirun")
    cmd = [mpirun, "--allow-run-as-root", "--oversubscribe", "-np", "2",
           sys.executable, str(ROOT / "examples/python/train_mlp.py"),
           "--backend", "mpi", "--world-size", "2", "--steps", "75"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=400,
                         env=dict(os.environ))
    assert out.returncode == 0, out.stdout + out.stderr
    assert "(bound 1e-05)" in out.stdout and out.stdout.rstrip().endswith("ok")
