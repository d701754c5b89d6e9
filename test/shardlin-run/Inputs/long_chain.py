"""Writes a module with an elementwise chain of N ops (addf, mulf, subf with
splat constants, and a tanh every 7th op) for long-chains.mlir:

  long_chain.py N plain  -- the chain alone on a 5x6 f32 tensor
  long_chain.py N mlp    -- a col-wise linear, the chain, a row-wise linear
                            (W = 2), which --strategy=activations fuses
"""
import sys


def chain(prev, ty, lines, n):
    ops = ["arith.addf", "arith.mulf", "arith.subf"]
    for i in range(n):
        if i % 7 == 3:
            lines.append(f"  %v{i} = math.tanh {prev} : {ty}")
        else:
            lines.append(f"  %v{i} = {ops[i % 3]} {prev}, %c{i % 3} : {ty}")
        prev = f"%v{i}"
    return prev


def main():
    n, kind = int(sys.argv[1]), sys.argv[2]
    lines = []
    if kind == "plain":
        ty = "tensor<5x6xf32>"
        lines.append(f"func.func @main(%x: {ty}) -> {ty} {{")
        head = "%x"
    else:
        ty = "tensor<5x12xf32>"
        w1 = ("!shardlin.sharded<tensor<12x8xf32>, "
              "#shardlin.chunk<dim = 0, placements = [0, 1]>>")
        w2 = ("!shardlin.sharded<tensor<6x12xf32>, "
              "#shardlin.chunk<dim = 1, placements = [0, 1]>>")
        lines.append(f"func.func @main(%x: tensor<5x8xf32>, %w1: {w1}, "
                     f"%w2: {w2}) -> tensor<5x6xf32> {{")
        lines.append(f"  %h = shardlin.linear %x, %w1 : (tensor<5x8xf32>, "
                     f"{w1}) -> {ty}")
        head = "%h"
    for k, v in enumerate([0.5, 0.75, 0.125]):
        lines.append(f"  %c{k} = arith.constant dense<{v}> : {ty}")
    last = chain(head, ty, lines, n)
    if kind == "plain":
        lines.append(f"  return {last} : {ty}")
    else:
        lines.append(f"  %y = shardlin.linear {last}, %w2 : ({ty}, {w2}) "
                     f"-> tensor<5x6xf32>")
        lines.append("  return %y : tensor<5x6xf32>")
    lines.append("}")
    print("\n".join(lines))


main()
