"""The Python call path's cost per Program.run (docs/performance.md, "From
Python"): a small linear (W ranks, f32) run N times from Python, against the
same run driven from C++ on arguments converted once (_bench_native: the
runtime's in-memory run, what an embedder calling the C++ API pays). The
difference is what Python adds: argument conversion (nanobind's ndarray
import, DLPack), the GIL release, the SIGINT scope, wrapping the results.

    PYTHONPATH=build/python python python/bench/call_overhead.py [--iterations N]
"""
import argparse
import statistics
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


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--iterations", type=int, default=2000)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--world-size", type=int, default=2)
    a = p.parse_args()
    w = a.world_size
    program = shardlin.compile(module(w, 4, 16, 16))
    rng = np.random.default_rng(0)
    xs = [rng.uniform(-1, 1, (4, 16)).astype(np.float32) for _ in range(w)]
    wt = rng.uniform(-1, 1, (16, 16)).astype(np.float32)
    b = rng.uniform(-1, 1, 16).astype(np.float32)
    args = [xs, wt, b]
    program.run(*args)  # warm up (plans, threads, BLAS)
    py_times, native_times = [], []
    for _ in range(a.repeats):
        start = time.perf_counter()
        for _ in range(a.iterations):
            program.run(*args)
        py_times.append((time.perf_counter() - start) / a.iterations)
        native_times.append(_shardlin._bench_native(program._handle, args, a.iterations))
    py_us = 1e6 * statistics.median(py_times)
    native_us = 1e6 * statistics.median(native_times)
    print(f"linear 4x16 @ 16x16 on {w} ranks (threads), median of {a.repeats} x "
          f"{a.iterations} calls:")
    print(f"  from C++ (runtime in-memory run): {native_us:8.2f} us per call")
    print(f"  from Python (Program.run):        {py_us:8.2f} us per call")
    print(f"  added by the Python call path:    {py_us - native_us:8.2f} us per call")


if __name__ == "__main__":
    main()
