#!/usr/bin/env python3
"""Checks the bytes each rank of a threads run read (shardlin-run --verbose on
stdin): rank r read chunk[r] bytes of its own, plus some of the files every
rank shares, each of which one rank (whichever loads it first) reads once.

  shardlin-run ... --verbose 2>&1 | read_bytes.py --chunks C0,C1,... --shared S1,S2,...

Prints "ok: ..." or fails naming the rank."""
import argparse
import itertools
import re
import sys


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--chunks", required=True)
    p.add_argument("--shared", default="")
    a = p.parse_args()
    chunks = [int(c) for c in a.chunks.split(",")]
    shared = [int(s) for s in a.shared.split(",") if s]
    read = {}
    for line in sys.stdin:
        m = re.search(r"rank (\d+):.*; read (\d+) bytes of input files", line)
        if m:
            read[int(m.group(1))] = int(m.group(2))
    if sorted(read) != list(range(len(chunks))):
        sys.exit(f"FAIL: read counts for ranks {sorted(read)}, expected "
                 f"0..{len(chunks) - 1}")
    sums = {sum(c) for n in range(len(shared) + 1)
            for c in itertools.combinations(shared, n)}
    for r, c in enumerate(chunks):
        if read[r] - c not in sums:
            sys.exit(f"FAIL: rank {r} read {read[r]} bytes: its chunks are "
                     f"{c} bytes, plus some of the shared files {shared}")
    if sum(read.values()) != sum(chunks) + sum(shared):
        sys.exit(f"FAIL: {sum(read.values())} bytes read in all, expected "
                 f"{sum(chunks) + sum(shared)} (each shared file once)")
    print(f"ok: {len(chunks)} ranks read their chunks {chunks} and the shared "
          f"files once")


if __name__ == "__main__":
    main()
