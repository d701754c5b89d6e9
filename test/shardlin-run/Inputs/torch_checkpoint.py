#!/usr/bin/env python3
"""Writes torch-bf16-linear.safetensors, the checkpoint of
safetensors-torch.mlir, with PyTorch and the Python `safetensors` package:
what a user's training run saves. Run once by hand; its output is committed
(the test machines have neither package):

  npytool.py gen-linear --n 5 --k 10 --batch-shape 3 --world-size 4 \
      --dtype bf16 --bias --seed 29 --out-dir DIR
  python torch_checkpoint.py DIR OUT.safetensors

It read DIR/w.npy and DIR/b.npy (bf16 bit patterns, descr '<V2') into
torch.bfloat16 tensors and saved them with safetensors.torch.save_file
(safetensors 0.8.0, torch 2.15.0) as linear.weight and linear.bias, with
the metadata {"format": "pt"} that transformers writes.
"""
import struct
import sys

import torch
from safetensors.torch import save_file


def read_bf16_npy(path):
    with open(path, "rb") as f:
        data = f.read()
    assert data[:6] == b"\x93NUMPY", path
    header_len = struct.unpack("<H", data[8:10])[0]
    header = eval(data[10:10 + header_len].decode("latin1"))  # noqa: S307
    assert header["descr"] in ("<V2", "|V2", "<u2"), header
    payload = bytearray(data[10 + header_len:])
    return torch.frombuffer(payload, dtype=torch.bfloat16).reshape(
        header["shape"]).clone()


def main():
    src, out = sys.argv[1], sys.argv[2]
    tensors = {
        "linear.weight": read_bf16_npy(src + "/w.npy"),
        "linear.bias": read_bf16_npy(src + "/b.npy"),
    }
    save_file(tensors, out, metadata={"format": "pt"})


if __name__ == "__main__":
    main()
