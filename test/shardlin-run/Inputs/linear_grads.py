#!/usr/bin/env python3
"""Checks a linear's backward function run by shardlin-run (backward.mlir,
test/Dialect/Shardlin/backward-run.mlir) against the dense model's float64 gradients, with the
Python standard library only (npytool.py's .npy reader).

  linear_grads.py DIR W DY DX DW DB [--dw-chunks PATTERN --dim D --placements P]

DIR holds npytool.py gen-linear's x.{rank}.npy, w.npy and b.npy; DY the
gradients of the results (a pattern with {rank}: any non-zero values, e.g.
another gen-linear's inputs); DX and DB are output patterns with {rank} (every rank's input gradient, every rank's bias
gradient), DW a whole weight gradient (the runner assembled it from every
rank's chunk). The reference, for y_r = x_r A^T + b and rows summed over
every rank r:
  dx_r = dy_r A,   dA = sum_r dy_r^T x_r,   db = sum_r (column sums of dy_r),
each element compared with its bound relative to the sum of the magnitudes
of its terms (math.fsum, float64). With --dw-chunks, each rank's own chunk
(PATTERN with {rank}) is compared with the rows or columns of dA its chunk
covers (the ceil rule, placements[c] holding chunk c).

With --replicas D (shardlin-run --grid=DxW): every path but DIR's w.npy
may hold {replica}; replica d's dx is its own, and every replica's dW and
db are the average over the D replicas of their dA and db (the terms of
each replica scaled by 1/D, exactly).
"""
import argparse
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "testing", "tools"))
import npytool  # noqa: E402

# f32 accumulates in f32: a few 2^-24 roundings per term, far below 1e-5
# of the magnitudes; f64 the same at 2^-53.
BOUND = {"<f4": 1e-5, "<f8": 1e-12}


def rows_of(shape):
    n = 1
    for d in shape[:-1]:
        n *= d
    return n


def main():
    p = argparse.ArgumentParser()
    p.add_argument("dir")
    p.add_argument("world_size", type=int)
    p.add_argument("dy")
    p.add_argument("dx")
    p.add_argument("dw")
    p.add_argument("db")
    p.add_argument("--dw-chunks")
    p.add_argument("--dim", type=int, default=0)
    p.add_argument("--placements", default="")
    p.add_argument("--replicas", type=int, default=1)
    a = p.parse_args()

    def path(pattern, replica, rank=None):
        out = pattern.replace("{replica}", str(replica))
        return out if rank is None else out.replace("{rank}", str(rank))

    descr, (n, k), w = npytool.read_npy(os.path.join(path(a.dir, 0), "w.npy"))
    bound = BOUND[descr]
    worst = 0.0
    failures = []

    def compare(what, got, terms):
        nonlocal worst
        want = math.fsum(terms)
        scale = max(math.fsum(abs(t) for t in terms), 1e-30)
        err = abs(got - want) / scale
        worst = max(worst, err)
        if not err <= bound and len(failures) < 5:
            failures.append("%s: %r, reference %r (relative error %.3g)" % (what, got, want, err))

    # dA and db, summed over every rank's rows of every replica, each
    # replica's terms scaled by 1 / replicas.
    da_terms = [[[] for _ in range(k)] for _ in range(n)]
    db_terms = [[] for _ in range(n)]
    inputs = []
    for d in range(a.replicas):
        xs, dys = [], []
        for r in range(a.world_size):
            _, xshape, x = npytool.read_npy(os.path.join(path(a.dir, d), "x.%d.npy" % r))
            _, _, dy = npytool.read_npy(path(a.dy, d, r))
            xs.append((rows_of(xshape), x))
            dys.append(dy)
            for i in range(rows_of(xshape)):
                for j in range(n):
                    g = dy[i * n + j] / a.replicas
                    db_terms[j].append(g)
                    for t in range(k):
                        da_terms[j][t].append(g * x[i * k + t])
        inputs.append((xs, dys))
    for d, (xs, dys) in enumerate(inputs):
        who = "replica %d " % d if a.replicas > 1 else ""
        for r in range(a.world_size):
            rows, _ = xs[r]
            _, _, dx = npytool.read_npy(path(a.dx, d, r))
            for i in range(rows):
                for t in range(k):
                    compare("%srank %d dx[%d, %d]" % (who, r, i, t), dx[i * k + t],
                            [dys[r][i * n + j] * w[j * k + t] for j in range(n)])
            _, _, db = npytool.read_npy(path(a.db, d, r))
            for j in range(n):
                compare("%srank %d db[%d]" % (who, r, j), db[j], db_terms[j])
        _, shape, dw = npytool.read_npy(path(a.dw, d))
        if shape != (n, k):
            failures.append("%sdW has shape %s, expected %s" % (who, shape, (n, k)))
        else:
            for j in range(n):
                for t in range(k):
                    compare("%sdW[%d, %d]" % (who, j, t), dw[j * k + t], da_terms[j][t])
    if a.dw_chunks:
        placements = [int(v) for v in a.placements.split(",")]
        size = (n, k)[a.dim]
        split = -(-size // len(placements))
        for c, r in enumerate(placements):
            lo, hi = min(size, c * split), min(size, (c + 1) * split)
            _, cshape, chunk = npytool.read_npy(path(a.dw_chunks, 0, r))
            want = (hi - lo, k) if a.dim == 0 else (n, hi - lo)
            if cshape != want:
                failures.append("rank %d's chunk has shape %s, expected %s" % (r, cshape, want))
                continue
            for j in range(want[0]):
                for t in range(want[1]):
                    gj, gt = (lo + j, t) if a.dim == 0 else (j, lo + t)
                    compare("rank %d dW chunk [%d, %d]" % (r, j, t),
                            chunk[j * want[1] + t], da_terms[gj][gt])
    for f in failures:
        print(f)
    print("%s: %d ranks%s, max relative error %.3g (bound %.0e)" %
          ("ok" if not failures else "FAILED", a.world_size,
           " x %d replicas" % a.replicas if a.replicas > 1 else "", worst, bound))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
