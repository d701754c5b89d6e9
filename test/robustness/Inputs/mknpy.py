#!/usr/bin/env python3
"""Writes a .npy file whose header says anything, for hostile-input tests.

    mknpy.py OUT DESCR SHAPE [DATA_BYTES]

SHAPE is the text of the header's shape tuple, e.g. "(4611686018427387904,)"
or "(-5, 2)"; DATA_BYTES zero bytes follow the header (default 0).
"""
import struct
import sys

out, descr, shape = sys.argv[1:4]
data = int(sys.argv[4]) if len(sys.argv) > 4 else 0
header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape)
header += " " * (64 - (10 + len(header) + 1) % 64) + "\n"
with open(out, "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)))
    f.write(header.encode() + b"\0" * data)
