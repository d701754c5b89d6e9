#!/usr/bin/env python3
"""Every rank's output against one float64 reference (standard library only).

  compare_ranks.py REF.npy 'OUT.{rank}.npy' --world-size W [--bound B]

Each rank's largest error divided by the reference's largest magnitude must
stay under B (1e-5); prints one line per rank and exits non-zero otherwise.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "testing", "tools"))
from npytool import read_npy  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("ref")
    p.add_argument("out")
    p.add_argument("--world-size", type=int, required=True)
    p.add_argument("--bound", type=float, default=1e-5)
    a = p.parse_args()
    _, ref_shape, ref = read_npy(a.ref)
    scale = max(abs(v) for v in ref)
    ok = True
    for r in range(a.world_size):
        path = a.out.replace("{rank}", str(r))
        _, shape, got = read_npy(path)
        if shape != ref_shape:
            print(f"rank {r}: shape {shape}, reference {ref_shape}")
            ok = False
            continue
        err = max(abs(x - y) for x, y in zip(got, ref)) / scale
        print(f"rank {r}: max error / max |ref| = {err:.3g} (bound {a.bound:g})")
        ok = ok and err < a.bound
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
