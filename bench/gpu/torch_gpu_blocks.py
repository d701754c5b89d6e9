#!/usr/bin/env python3
"""PyTorch's times for shardlin-gpu-bench's blocks (its --torch-blocks input).

For every block shape that DIR/blocks.txt lists (shardlin-write-block-suite
--bench; one line per W, each shape timed once), on one device:

  MLP:    y = F.linear(gelu_tanh(F.linear(x, w1, b1)), w2, b2)
  SwiGLU: y = F.linear(silu(F.linear(x, wg)) * F.linear(x, wu), w2)

in eager mode and under torch.compile (only for shapes of at least
--compile-min-rows rows: compiling takes tens of seconds per shape), with
random weights scaled as the bench's, after --warmup calls, the median of
--reps calls, each timed with CUDA events (on a CPU device: the wall clock).
Prints one line per shape:

  result KIND DTYPE M H F EAGER_MS COMPILE_MS

(COMPILE_MS "-" where not timed), and "torch TORCH_VERSION DEVICE_NAME" first.
Without PyTorch or without the device it prints "skipped: WHY" and exits 0,
so that the bench runs without the column.

usage: torch_gpu_blocks.py DIR [--device cuda:0] [--reps 20] [--warmup 5]
                               [--compile-min-rows 2048] [--no-compile]
"""

import argparse
import math
import statistics
import sys
import time


def shapes_of(directory):
    """The distinct (kind, dtype, M, H, F) of DIR/blocks.txt, in order."""
    seen, out = set(), []
    try:
        listing = open(f"{directory}/blocks.txt")
    except OSError as e:
        sys.exit(f"torch_gpu_blocks: cannot read {directory}/blocks.txt: "
                 f"{e.strerror}")
    with listing:
        for number, line in enumerate(listing, 1):
            fields = line.split()
            if not fields:
                continue
            if len(fields) != 11 or fields[1] not in ("mlp", "swiglu"):
                sys.exit(f"torch_gpu_blocks: {directory}/blocks.txt:{number}: "
                         f"not a line of shardlin-write-block-suite --bench: "
                         f"{line.strip()!r}")
            key = (fields[1], fields[2], int(fields[4]), int(fields[5]),
                   int(fields[6]))
            if key not in seen:
                seen.add(key)
                out.append(key)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir")
    parser.add_argument("--device", default="cuda:0")
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--compile-min-rows", type=int, default=2048)
    parser.add_argument("--no-compile", action="store_true")
    args = parser.parse_args()
    if args.reps < 1 or args.warmup < 0:
        sys.exit("torch_gpu_blocks: --reps must be >= 1 and --warmup >= 0")
    shapes = shapes_of(args.dir)

    try:
        import torch
        import torch.nn.functional as F
    except ImportError as e:
        print(f"skipped: PyTorch is not installed ({e})")
        return
    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        print("skipped: torch.cuda.is_available() is False")
        return
    name = (torch.cuda.get_device_name(device) if device.type == "cuda"
            else "cpu")
    print(f"torch {torch.__version__} {name.replace(' ', '_')}", flush=True)
    dtypes = {"bf16": torch.bfloat16, "f16": torch.float16,
              "f32": torch.float32, "f64": torch.float64}

    def rand(*shape, scale, dtype):
        # +-[0.25, 1] * scale, as the bench's values.
        mag = torch.rand(*shape, device=device, dtype=torch.float32) * 0.75
        sign = torch.randint(0, 2, shape, device=device) * 2 - 1
        return ((mag + 0.25) * sign * scale).to(dtype)

    def time_ms(fn, x):
        with torch.no_grad():
            for _ in range(args.warmup):
                fn(x)
            times = []
            for _ in range(args.reps):
                if device.type == "cuda":
                    start = torch.cuda.Event(enable_timing=True)
                    stop = torch.cuda.Event(enable_timing=True)
                    start.record()
                    fn(x)
                    stop.record()
                    stop.synchronize()
                    times.append(start.elapsed_time(stop))
                else:
                    t0 = time.perf_counter()
                    fn(x)
                    times.append((time.perf_counter() - t0) * 1e3)
        return statistics.median(times)

    for kind, dtype_name, m, h, f in shapes:
        dtype = dtypes[dtype_name]
        torch.manual_seed(0)
        x = rand(m, h, scale=1.0, dtype=dtype)
        if kind == "mlp":
            w1 = rand(f, h, scale=1 / math.sqrt(h), dtype=dtype)
            b1 = rand(f, scale=0.1, dtype=dtype)
            w2 = rand(h, f, scale=1 / math.sqrt(f), dtype=dtype)
            b2 = rand(h, scale=0.1, dtype=dtype)

            def block(t):
                return F.linear(F.gelu(F.linear(t, w1, b1), approximate="tanh"),
                                w2, b2)
        else:
            wg = rand(f, h, scale=1 / math.sqrt(h), dtype=dtype)
            wu = rand(f, h, scale=1 / math.sqrt(h), dtype=dtype)
            w2 = rand(h, f, scale=1 / math.sqrt(f), dtype=dtype)

            def block(t):
                return F.linear(F.silu(F.linear(t, wg)) * F.linear(t, wu), w2)

        eager = time_ms(block, x)
        compiled = "-"
        if not args.no_compile and m >= args.compile_min_rows:
            try:
                compiled = f"{time_ms(torch.compile(block), x):.4f}"
            except Exception as e:  # a backend without a compiler toolchain
                print(f"note: torch.compile failed for {kind} {dtype_name} "
                      f"{m}x{h}x{f}: {type(e).__name__}: {e}".splitlines()[0],
                      flush=True)
        print(f"result {kind} {dtype_name} {m} {h} {f} {eager:.4f} {compiled}",
              flush=True)
        del x
        if device.type == "cuda":
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
