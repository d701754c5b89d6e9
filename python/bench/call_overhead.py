"""The Python call path's cost per Program.run (docs/performance.md, "From
Python"): a small linear (W ranks, f32) run from Python, against the same run
driven from C++ on arguments converted once (_bench_native: the runtime's
in-memory run, what an embedder of the C++ API pays). The difference is what
Python adds: the wrapper, argument conversion (nanobind's ndarray import),
the GIL release, wrapping the results as NumPy arrays.

Each call is timed alone, the two interleaved in rounds; the minimum, the
10th percentile and the median are reported (the median on a loaded machine
is partly the scheduler's: the W rank threads, kept between runs, are woken
on every call).

    PYTHONPATH=build/python python python/bench/call_overhead.py [--calls N]
        [--torch]

--torch adds shardlin.torch's forward (shardlin.torch.parallelize of an
nn.Linear of the same shapes, colwise, x replicated, under torch.no_grad():
the module's state dict read, each tensor passed as its NumPy view, the
result wrapped as a tensor) against Program.run of its own program with
NumPy arguments.
"""
import argparse
import time

import numpy as np

import shardlin
from shardlin import _shardlin


def module(w: int, b: int, n: int, k: int) -> str:
    placements = ", ".join(str(r) for r in range(w))
    ws = (f"!shardlin.sharded<tensor<{n}x{k}xf32>, "
          f"#shardlin.chunk<dim = 0, placements = [{placements}]>>")
    return (f"func.func @main(%x: tensor<{b}x{k}xf32>, %w: {ws}, %b: tensor<{n}xf32>)"
            f" -> tensor<{b}x{n}xf32> {{\n  %y = shardlin.linear %x, %w, %b : "
            f"(tensor<{b}x{k}xf32>, {ws}, tensor<{n}xf32>) -> tensor<{b}x{n}xf32>\n"
            f"  return %y : tensor<{b}x{n}xf32>\n}}\n")


def stats(seconds):
    s = sorted(seconds)
    return 1e6 * s[0], 1e6 * s[len(s) // 10], 1e6 * s[len(s) // 2]


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--calls", type=int, default=4000)
    p.add_argument("--rounds", type=int, default=20)
    p.add_argument("--world-size", type=int, default=2)
    p.add_argument("--torch", action="store_true")
    a = p.parse_args()
    w = a.world_size
    program = shardlin.compile(module(w, 4, 16, 16))
    rng = np.random.default_rng(0)
    xs = [rng.uniform(-1, 1, (4, 16)).astype(np.float32) for _ in range(w)]
    wt = rng.uniform(-1, 1, (16, 16)).astype(np.float32)
    b = rng.uniform(-1, 1, 16).astype(np.float32)
    args = [xs, wt, b]
    program.run(*args)  # warm up (plans, BLAS)
    per_round = max(1, a.calls // a.rounds)
    py, native = [], []
    clock = time.perf_counter
    for _ in range(a.rounds):
        for _ in range(per_round):
            start = clock()
            program.run(*args)
            py.append(clock() - start)
        native += _shardlin._bench_native(program._handle, args, per_round)
    (pmin, p10, pmed), (nmin, n10, nmed) = stats(py), stats(native)
    print(f"linear 4x16 @ 16x16 f32 on {w} ranks (threads), {len(py)} calls each "
          f"(min / p10 / median, us per call):")
    print(f"  from C++ (runtime in-memory run): {nmin:8.1f} {n10:8.1f} {nmed:8.1f}")
    print(f"  from Python (Program.run):        {pmin:8.1f} {p10:8.1f} {pmed:8.1f}")
    print(f"  added by the Python call path:    {pmin - nmin:8.1f} {p10 - n10:8.1f} "
          f"{pmed - nmed:8.1f}")
    if a.torch:
        torch_path(w, per_round, a.rounds)


def torch_path(w: int, per_round: int, rounds: int) -> None:
    import torch
    import shardlin.torch
    torch.manual_seed(0)
    model = torch.nn.Linear(16, 16)
    x = torch.randn(4, 16)
    tp = shardlin.torch.parallelize(model, {"": "colwise"}, w, x)
    program = tp.program
    args = [x.numpy()] + [t.detach().numpy() for t in
                          (dict(model.named_parameters())[n]
                           for n in tp._signature(x).names)]
    clock = time.perf_counter
    py, mod = [], []
    with torch.no_grad():
        tp(x)
        for _ in range(rounds):
            for _ in range(per_round):
                start = clock()
                program.run(*args)
                py.append(clock() - start)
            for _ in range(per_round):
                start = clock()
                tp(x)
                mod.append(clock() - start)
    (pmin, p10, pmed), (mmin, m10, mmed) = stats(py), stats(mod)
    print(f"shardlin.torch: nn.Linear(16, 16) colwise, x 4 x 16 replicated, "
          f"{w} ranks, {len(py)} calls each (min / p10 / median, us):")
    print(f"  Program.run (NumPy arguments):    {pmin:8.1f} {p10:8.1f} {pmed:8.1f}")
    print(f"  the parallelized module's call:   {mmin:8.1f} {m10:8.1f} {mmed:8.1f}")
    print(f"  added by shardlin.torch:          {mmin - pmin:8.1f} {m10 - p10:8.1f} "
          f"{mmed - pmed:8.1f}")


if __name__ == "__main__":
    main()
