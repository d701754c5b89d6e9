#!/usr/bin/env python3
"""A PyTorch MLP to a tensor-parallel shardlin run (docs/interop.md, "From
PyTorch"). Run with the frontend venv's Python (scripts/frontend-venv.sh):

  export_mlp.py --out DIR [--world-size 4] [--rows 10]

writes DIR/mlp.mlir (torch-mlir's export of the module, annotated from a
Megatron plan: fc1 column-parallel, fc2 row-parallel, x and y split along
their rows, 38 hidden features over the ranks unevenly), DIR/x.npy and
DIR/ref.npy (PyTorch's float64 output). The export and the annotation are
integration_test/frontends/export.py's, which the corpus tests run.
"""
import argparse
import os
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "integration_test", "frontends"))
from export import export_annotated  # noqa: E402


class MLP(nn.Module):
    def __init__(self, hidden=40, ffn=38):
        super().__init__()
        self.fc1 = nn.Linear(hidden, ffn)
        self.fc2 = nn.Linear(ffn, hidden)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x)))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--world-size", type=int, default=4)
    p.add_argument("--rows", type=int, default=10)
    args = p.parse_args()
    torch.manual_seed(0)
    model = MLP()
    x = torch.randn(args.rows, 40)
    plan = {"fc1": "colwise", "fc2": "rowwise"}
    module = export_annotated(model, x, plan, act="sequence",
                              world=args.world_size)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "mlp.mlir"), "w") as f:
        f.write(str(module))
    np.save(os.path.join(args.out, "x.npy"), x.numpy())
    with torch.no_grad():
        np.save(os.path.join(args.out, "ref.npy"),
                model.double()(x.double()).numpy())
    print(f"wrote {args.out}/mlp.mlir, x.npy and ref.npy")


if __name__ == "__main__":
    main()
