#!/usr/bin/python3
"""Times PyTorch's dense torch.nn.functional.linear for shardlin-bench.

    /usr/bin/python3 bench/torch_linear.py --threads=2 --shapes="M,N,K;M,N,K" \
        [--warmup=2 --min-trials=3 --max-trials=15 --min-time=0.3 --trial-time=0.02]

For each shape: y = F.linear(x, A, b) with x: M x K, A: N x K, b: N, f32,
under torch.inference_mode(), with torch.set_num_threads(threads) and the
BLAS library's own thread count set to the same number. The timing protocol
is shardlin-bench's: warm-up runs, then trials of back-to-back calls; the
median over trials of the per-call time.

Output, one line each (parsed by shardlin-bench):
    torch VERSION BLAS_INFO
    result M N K MEDIAN_S MIN_S MAX_S ITERS TRIALS
or, if PyTorch cannot be imported:
    unavailable REASON           (exit status 3)
"""

import argparse
import os
import sys
import time

from torch_timing import add_timing_args, median, plan_trials


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    p.add_argument("--shapes", required=True,
                   help="semicolon-separated M,N,K triples")
    add_timing_args(p)
    return p.parse_args()


def main():
    args = parse_args()
    # OpenBLAS (which Debian's torch calls through libblas.so.3) reads its
    # thread count when it is loaded, so set it before importing torch.
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(args.threads)
    try:
        import torch
        import torch.nn.functional as F
    except Exception as e:  # ImportError, or a broken install
        print("unavailable cannot import torch with %s: %s" %
              (sys.executable, e))
        sys.exit(3)
    torch.set_num_threads(args.threads)
    blas = "unknown"
    for part in torch.__config__.show().replace(",", " ").split():
        if part.startswith("BLAS_INFO="):
            blas = part.split("=", 1)[1]
    print("torch %s %s" % (torch.__version__, blas), flush=True)

    shapes = []
    for item in args.shapes.split(";"):
        if item.strip():
            m, n, k = (int(v) for v in item.split(","))
            shapes.append((m, n, k))

    torch.manual_seed(0)
    for m, n, k in shapes:
        x = torch.rand(m, k, dtype=torch.float32) * 2 - 1
        a = torch.rand(n, k, dtype=torch.float32) * 2 - 1
        b = torch.rand(n, dtype=torch.float32) * 2 - 1
        with torch.inference_mode():
            warm = 0.0
            for _ in range(max(1, args.warmup)):
                t0 = time.perf_counter()
                F.linear(x, a, b)
                warm = time.perf_counter() - t0
            iters, trials = plan_trials(warm, args)
            per_run = []
            for _ in range(trials):
                t0 = time.perf_counter()
                for _ in range(iters):
                    F.linear(x, a, b)
                per_run.append((time.perf_counter() - t0) / iters)
        per_run.sort()
        print("result %d %d %d %.9g %.9g %.9g %d %d" %
              (m, n, k, median(per_run), per_run[0], per_run[-1], iters,
               trials),
              flush=True)


if __name__ == "__main__":
    main()
