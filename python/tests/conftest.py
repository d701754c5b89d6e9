"""Shared helpers of the package's tests (docs/python.md, "Tests").

Every numerical test compares every rank's output with a float64 NumPy
reference on random inputs under a bound stated next to it."""
import os
import pathlib

import ml_dtypes
import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
BF16 = np.dtype(ml_dtypes.bfloat16)
DTYPES = {"f16": np.dtype(np.float16), "bf16": BF16,
          "f32": np.dtype(np.float32), "f64": np.dtype(np.float64)}
# Relative to max(1, |reference|): the GEMM's K additions in the element type
# (f16/bf16 accumulate in f32 and round once; the bound is a few ulps of the
# result's type), for K <= 64 and inputs in [-1, 1).
BOUNDS = {"f16": 4e-3, "bf16": 3e-2, "f32": 1e-5, "f64": 1e-12}


def linear_module(dtype: str, b: int = 5, n: int = 11, k: int = 19,
                  dim: int = 1, placements=(2, 3, 0, 1)) -> str:
    """y = x A^T + b with A (n x k) split along `dim` (1: K, 0: N)."""
    p = ", ".join(str(r) for r in placements)
    w = (f"!shardlin.sharded<tensor<{n}x{k}x{dtype}>, "
         f"#shardlin.chunk<dim = {dim}, placements = [{p}]>>")
    return (f"func.func @main(%x: tensor<{b}x{k}x{dtype}>, %w: {w},\n"
            f"    %b: tensor<{n}x{dtype}>) -> tensor<{b}x{n}x{dtype}> {{\n"
            f"  %y = shardlin.linear %x, %w, %b : (tensor<{b}x{k}x{dtype}>, {w}, "
            f"tensor<{n}x{dtype}>) -> tensor<{b}x{n}x{dtype}>\n"
            f"  return %y : tensor<{b}x{n}x{dtype}>\n}}\n")


def random(rng, shape, dtype):
    """Uniform in [-1, 1), rounded to `dtype` (the reference uses the rounded
    values)."""
    return rng.uniform(-1.0, 1.0, size=shape).astype(DTYPES[dtype])


def reference(x, w, b):
    return (x.astype(np.float64) @ w.astype(np.float64).T
            + b.astype(np.float64))


def assert_close(got, ref, dtype, what=""):
    got = np.asarray(got).astype(np.float64)
    assert got.shape == ref.shape, (what, got.shape, ref.shape)
    err = np.max(np.abs(got - ref) / np.maximum(1.0, np.abs(ref)), initial=0.0)
    assert err <= BOUNDS[dtype], f"{what}: max relative error {err:.3e} > {BOUNDS[dtype]}"


@pytest.fixture
def rng():
    return np.random.default_rng(20261207)
