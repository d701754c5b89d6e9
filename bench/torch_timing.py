"""The timing protocol shardlin-bench uses (BenchCommon's planTrials), for
the PyTorch peers bench/torch_linear.py and bench/torch_blocks.py."""

import math


def add_timing_args(p):
    """The options of the protocol, with shardlin-bench's defaults."""
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--min-trials", type=int, default=3)
    p.add_argument("--max-trials", type=int, default=15)
    p.add_argument("--min-time", type=float, default=0.3)
    p.add_argument("--trial-time", type=float, default=0.02)
    p.add_argument("--max-iters", type=int, default=2000)


def plan_trials(one, args):
    """(iterations per trial, trials) for a run that takes `one` seconds."""
    one = max(one, 1e-7)
    iters = int(min(max(round(args.trial_time / one), 1), args.max_iters))
    trials = int(min(max(math.ceil(args.min_time / (one * iters)),
                         args.min_trials),
                     max(args.min_trials, args.max_trials)))
    return iters, trials


def median(values):
    """The median of a non-empty list."""
    s = sorted(values)
    mid = len(s) // 2
    return s[mid] if len(s) % 2 else 0.5 * (s[mid - 1] + s[mid])
