#!/usr/bin/env python3
"""Rewrites the output of upstream's --shard-partition (a per-device module
with `shard` collectives) into a module shardlin-run runs, for
upstream-partition.test: the collectives become shardlin's of the same
meaning on the grid's W ranks (device i = rank i), the grid is dropped, and
identity tensor.casts are folded, and the device's grid index and the grid's
size become shardlin.rank and W. Only what the even cases' partitions hold
is supported; anything else is an error, not a guess.

  shard_to_shardlin.py < partitioned.mlir > runnable.mlir
"""
import re
import sys

text = sys.stdin.read()
grid = re.search(r"shard\.grid @(\w+)\(shape = (\d+)\)", text)
if not grid:
    sys.exit("shard_to_shardlin.py: no 1-D shard.grid in the input")
w = int(grid.group(2))
placements = ", ".join(str(i) for i in range(w))
out = []
casts = {}
for line in text.splitlines():
    if re.match(r"\s*shard\.grid @", line):
        continue
    m = re.match(r"(\s*%\S+) = shard\.all_gather (%\S+) on @\w+ grid_axes = \[0\] "
                 r"gather_axis = (\d+) : (.*)$", line)
    if m:
        line = "%s = shardlin.all_gather %s along <dim = %s, placements = [%s]> : %s" % (
            m.group(1), m.group(2), m.group(3), placements, m.group(4))
    m = re.match(r"(\s*%\S+) = shard\.all_reduce (%\S+) on @\w+ grid_axes = \[0\] "
                 r": (\S+) -> \S+$", line)
    if m:
        line = "%s = shardlin.all_reduce %s world_size = %d : %s" % (
            m.group(1), m.group(2), w, m.group(3))
    # The device's index on the grid's one axis is the rank; the axis size,
    # W. (Upstream's all-reduce partitions start the partial sums with an
    # scf.if on the index, which runs in compiled code: --jit.)
    m = re.match(r"(\s*%\S+) = shard\.process_multi_index on @\w+ axes = \[0\] : index$", line)
    if m:
        line = "%s = shardlin.rank world_size = %d" % (m.group(1), w)
    m = re.match(r"(\s*%\S+) = shard\.grid_shape @\w+ axes = \[0\] : index$", line)
    if m:
        line = "%s = arith.constant %d : index" % (m.group(1), w)
    m = re.match(r"\s*(%\S+) = tensor\.cast (%\S+) : (\S+) to (\S+)$", line)
    if m and m.group(3) == m.group(4):
        casts[m.group(1)] = m.group(2)
        continue
    if "shard." in line:
        sys.exit("shard_to_shardlin.py: not supported: " + line.strip())
    for name, source in casts.items():
        line = re.sub(re.escape(name) + r"\b", source, line)
    out.append(line)
print("\n".join(out))
