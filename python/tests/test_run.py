"""Program.run on the threads backend: every dtype, per-rank and global
inputs, assembled and per-rank results, zero-copy binding, DLPack, errors."""

import numpy as np
import pytest

import shardlin
from conftest import BF16, DTYPES, ROOT, assert_close, linear_module, random, reference

W = 4


@pytest.mark.parametrize("dtype", ["f16", "bf16", "f32", "f64"])
@pytest.mark.parametrize("dim", [0, 1])
def test_linear_every_dtype(rng, dtype, dim):
    program = shardlin.compile(linear_module(dtype, dim=dim))
    xs = [random(rng, (5, 19), dtype) for _ in range(W)]
    w, b = random(rng, (11, 19), dtype), random(rng, (11,), dtype)
    per_rank = program.run(xs, w, b, per_rank=True)
    assert len(per_rank) == W
    for r, (y,) in enumerate(per_rank):
        assert y.dtype == DTYPES[dtype]
        assert_close(y, reference(xs[r], w, b), dtype, f"rank {r}")
    # Assembled: a plain result is rank 0's, as shardlin-run's --out without
    # {rank} writes it.
    assert_close(program.run(xs, w, b), reference(xs[0], w, b), dtype, "rank 0")


def test_sharded_result_assembled_and_per_rank(rng):
    program = shardlin.compile(ROOT / "test/shardlin-run/return-sharded.mlir")
    w = random(rng, (10, 7), "f32")
    np.testing.assert_array_equal(program.run(w), w)
    rows = {0: (8, 10), 1: (0, 4), 2: (4, 8)}  # placements [1, 2, 0]
    chunks = program.run(w, per_rank=True)
    for r, (a, e) in rows.items():
        np.testing.assert_array_equal(chunks[r][0], w[a:e])
    # Per-rank chunks in: each rank's own rows.
    np.testing.assert_array_equal(program.run([w[8:10], w[0:4], w[4:8]]), w)


def test_upstream_module_global_inputs(rng):
    program = shardlin.compile(ROOT / "test/shardlin-run/Inputs/upstream-linears.mlir",
                               entry="col_uneven")
    x, w, b = (random(rng, s, "f32") for s in [(10, 16), (10, 16), (10,)])
    assert_close(program.run(x, w, b), reference(x, w, b), "f32", "assembled")


def test_zero_copy_rules(rng):
    # K split (dim 1): each rank's chunk is strided in the global weight,
    # so it is copied; x per rank and the bias are bound in place.
    program = shardlin.compile(linear_module("f32", dim=1))
    xs = [random(rng, (5, 19), "f32") for _ in range(W)]
    w, b = random(rng, (11, 19), "f32"), random(rng, (11,), "f32")
    program.run(xs, w, b)
    info = program.last_run_info
    for r in range(W):
        assert info.arg_addresses[r][0] == xs[r].ctypes.data
        assert info.arg_addresses[r][2] == b.ctypes.data
        assert info.arg_copied[r] == [False, True, False]
    # N split (dim 0): each chunk is a block of rows, bound in place.
    program = shardlin.compile(linear_module("f32", dim=0, placements=(2, 3, 0, 1)))
    program.run(xs, w, b)
    rows = {2: 0, 3: 3, 0: 6, 1: 9}  # ceil(11 / 4) = 3 rows per chunk
    for r in range(W):
        assert program.last_run_info.arg_copied[r] == [False, False, False]
        assert program.last_run_info.arg_addresses[r][1] == w.ctypes.data + rows[r] * 19 * 4


def test_non_contiguous_is_copied_and_correct(rng):
    program = shardlin.compile(linear_module("f64"))
    big = [random(rng, (5, 38), "f64") for _ in range(W)]
    xs = [a[:, ::2] for a in big]  # strided views
    w, b = random(rng, (11, 19), "f64"), random(rng, (11,), "f64")
    for r, (y,) in enumerate(program.run(xs, w, b, per_rank=True)):
        assert_close(y, reference(xs[r], w, b), "f64", f"rank {r}")
        assert program.last_run_info.arg_copied[r][0]
        assert program.last_run_info.arg_addresses[r][0] != big[r].ctypes.data


class DLPackOnly:
    """An array that only speaks DLPack (as a torch or JAX CPU array does)."""

    def __init__(self, a):
        self.a = a

    def __dlpack__(self, **kw):
        return self.a.__dlpack__(**kw)

    def __dlpack_device__(self):
        return self.a.__dlpack_device__()


def test_dlpack_inputs_zero_copy(rng):
    program = shardlin.compile(linear_module("f32"))
    xs = [random(rng, (5, 19), "f32") for _ in range(W)]
    w, b = random(rng, (11, 19), "f32"), random(rng, (11,), "f32")
    out = program.run([DLPackOnly(x) for x in xs], DLPackOnly(w), DLPackOnly(b),
                      per_rank=True)
    for r, (y,) in enumerate(out):
        assert_close(y, reference(xs[r], w, b), "f32", f"rank {r}")
        assert program.last_run_info.arg_addresses[r][0] == xs[r].ctypes.data


def test_bad_inputs(rng):
    program = shardlin.compile(linear_module("f32"))
    xs = [random(rng, (5, 19), "f32") for _ in range(W)]
    w, b = random(rng, (11, 19), "f32"), random(rng, (11,), "f32")
    with pytest.raises(shardlin.InvalidArgumentError, match="f64.*takes f32") as e:
        program.run(xs, w.astype(np.float64), b)
    assert e.value.status == shardlin.STATUS["invalid argument"]
    assert isinstance(e.value, ValueError) and isinstance(e.value, RuntimeError)
    with pytest.raises(shardlin.InvalidArgumentError, match=r"shape \[5, 18\]"):
        program.run([x[:, :18] for x in xs], w, b)
    with pytest.raises(shardlin.InvalidArgumentError, match="takes 3 arguments"):
        program.run(xs, w)
    with pytest.raises(shardlin.InvalidArgumentError, match="3 per-rank arrays for 4 ranks"):
        program.run(xs[:3], w, b)
    with pytest.raises(TypeError, match="str"):
        program.run(xs, "w", b)
    with pytest.raises(TypeError, match="not f16, bf16, f32 or f64"):
        program.run(xs, w.astype(np.int32), b)
    with pytest.raises(shardlin.InvalidArgumentError, match="world"):
        program.run(xs, w, b, world_size=3)
    with pytest.raises(shardlin.RuntimeError) as e:
        program.run(xs, w, b, backend="no-such-backend")
    assert e.value.status_name == "invalid argument"
    # A good run after the failures.
    assert_close(program.run(xs, w, b), reference(xs[0], w, b), "f32")


def test_jit_program():
    # Compiled to native code (shardlin-run --jit): the same results, in
    # this process (the code links against the extension's runtime without
    # making its symbols global: docs/python.md, "Limits").
    rng = np.random.default_rng(20261207)
    program = shardlin.compile(ROOT / "examples/quickstart/linear.mlir",
                               jit=True)
    assert program.jit and "jit" in repr(program)
    xs = [random(rng, (5, 19), "f32") for _ in range(W)]
    w, b = random(rng, (11, 19), "f32"), random(rng, (11,), "f32")
    for r, (y,) in enumerate(program.run(xs, w, b, per_rank=True)):
        assert_close(y, reference(xs[r], w, b), "f32", f"rank {r}")
