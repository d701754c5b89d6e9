"""Splits a global .npy into per-rank shard files by the chunk rule.

usage: shard.py GLOBAL.npy --dim D --placements P0,P1,... --out 'DIR/w.{rank}.npy'

Chunk i of dim D (split = ceil(n / W), rows [i*split, min(n, (i+1)*split)))
goes to rank placements[i], as shardlin's runtime reads it (ChunkLayout.h).
Uses testing/tools/npytool.py's reader and writer (no NumPy needed).
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "testing", "tools"))
import npytool  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--dim", type=int, required=True)
    ap.add_argument("--placements", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    descr, shape, values = npytool.read_npy(a.file)
    placements = [int(p) for p in a.placements.split(",")]
    w, n = len(placements), shape[a.dim]
    split = -(-n // w)
    outer = 1
    for d in shape[:a.dim]:
        outer *= d
    inner = 1
    for d in shape[a.dim + 1:]:
        inner *= d
    for chunk, rank in enumerate(placements):
        lo, hi = min(n, chunk * split), min(n, (chunk + 1) * split)
        part = []
        for o in range(outer):
            base = o * n * inner
            part += values[base + lo * inner:base + hi * inner]
        sub = list(shape)
        sub[a.dim] = hi - lo
        npytool.write_npy(a.out.replace("{rank}", str(rank)), descr, sub, part)


if __name__ == "__main__":
    main()
