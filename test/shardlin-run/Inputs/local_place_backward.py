#!/usr/bin/env python3
"""Inputs and checks of local-place-backward.test (standard library only).

  local_place_backward.py gen DIR     x, w, b, every rank's dy and dc, with
                                      an inf in rank 1's dy and a NaN in
                                      rank 0's dc
  local_place_backward.py check DIR PREFIX
                                      every rank's PREFIX-dw.{rank}.npy and
                                      PREFIX-db.{rank}.npy against float64

@sliced (local-place-backward.mlir) on 3 ranks slices rows [0, 4), [2, 6),
[6, 8) of a replicated 8 x 8 w and columns [0, 2), [2, 4), [4, 6) of a
replicated 2 x 8 x 6 b. Rank r's dw must be dy_r^T x (float64, within 1e-5
of its largest finite magnitude) at its rows and exactly +0 elsewhere; its
db exactly dc_r at its columns and +0 elsewhere. An inf or NaN must reach
only the elements its own products reach: with an identity GEMM placing
the rows, 0 * inf made every row of that column NaN.
"""
import math
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "testing", "tools"))
from npytool import nonzero, read_npy, write_npy  # noqa: E402

ROWS = [(0, 4), (2, 6), (6, 8)]
COLS = [(0, 2), (2, 4), (4, 6)]


def gen(d):
    rng = random.Random(7)
    x = [nonzero(rng) for _ in range(4 * 8)]
    write_npy(os.path.join(d, "x.npy"), "<f4", [4, 8], x)
    write_npy(os.path.join(d, "w.npy"), "<f4", [8, 8],
              [nonzero(rng) for _ in range(64)])
    write_npy(os.path.join(d, "b.npy"), "<f4", [2, 8, 6],
              [nonzero(rng) for _ in range(96)])
    for r, (b, e) in enumerate(ROWS):
        dy = [nonzero(rng) for _ in range(4 * (e - b))]
        if r == 1:
            dy[1 * (e - b) + 2] = math.inf  # dy_1[1, 2]: dw_1 row 4
        write_npy(os.path.join(d, "dy.%d.npy" % r), "<f4", [4, e - b], dy)
        dc = [nonzero(rng) for _ in range(2 * 8 * 2)]
        if r == 0:
            dc[(0 * 8 + 3) * 2 + 1] = math.nan  # dc_0[0, 3, 1]
        write_npy(os.path.join(d, "dc.%d.npy" % r), "<f4", [2, 8, 2], dc)


def same(a, b):
    return (math.isnan(a) and math.isnan(b)) or (
        a == b and math.copysign(1, a) == math.copysign(1, b))


def check_dw(d, prefix, r, x):
    b, e = ROWS[r]
    n = e - b
    _, _, dy = read_npy(os.path.join(d, "dy.%d.npy" % r))
    _, shape, got = read_npy(os.path.join(d, "%s-dw.%d.npy" % (prefix, r)))
    assert list(shape) == [8, 8], shape
    want = [0.0] * 64
    for j in range(n):
        for k in range(8):
            want[(b + j) * 8 + k] = sum(dy[i * n + j] * x[i * 8 + k]
                                        for i in range(4))
    finite = [abs(v) for v in want if math.isfinite(v)]
    scale = max(finite) if finite else 1.0
    worst, bad = 0.0, 0
    for w, g in zip(want, got):
        if not math.isfinite(w) or w == 0.0:
            bad += not same(w, g)
        else:
            worst = max(worst, abs(g - w) / scale)
    nonfinite = sum(not math.isfinite(v) for v in got)
    print("rank %d dw: max err %.2e, %d non-finite, %d exact misses"
          % (r, worst, nonfinite, bad))
    return worst <= 1e-5 and bad == 0


def check_db(d, prefix, r):
    b, e = COLS[r]
    _, _, dc = read_npy(os.path.join(d, "dc.%d.npy" % r))
    _, shape, got = read_npy(os.path.join(d, "%s-db.%d.npy" % (prefix, r)))
    assert list(shape) == [2, 8, 6], shape
    want = [0.0] * 96
    for o in range(16):
        for c in range(e - b):
            want[o * 6 + b + c] = dc[o * 2 + c]
    bad = sum(not same(w, g) for w, g in zip(want, got))
    nonfinite = sum(not math.isfinite(v) for v in got)
    print("rank %d db: %d non-finite, %d misses" % (r, nonfinite, bad))
    return bad == 0


def main():
    if sys.argv[1] == "gen":
        gen(sys.argv[2])
        return 0
    d, prefix = sys.argv[2], sys.argv[3]
    _, _, x = read_npy(os.path.join(d, "x.npy"))
    ok = True
    for r in range(3):
        ok &= check_dw(d, prefix, r, x)
        ok &= check_db(d, prefix, r)
    print("ok" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
