"""Inputs and checks for backward-run.mlir, with the Python standard library
only: writes random inputs as .npy files and compares the runtime's
gradients with float64 formulas of the derivatives (docs/training.md).

  backward_run.py gen DIR      writes DIR/x.npy, dy.npy (f32), x16.npy,
                               dy16.npy (f16), 4 x 8
  backward_run.py check DIR    reads DIR/gelu_tanh.npy, relu.npy,
                               gelu_erf16.npy and checks each element
"""
import ast
import math
import random
import struct
import sys


def write(path, values, shape, dtype):
    code = {"f4": "<f4", "f2": "<f2"}[dtype]
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        code, ", ".join(map(str, shape)))
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    fmt = "f" if dtype == "f4" else "e"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)))
        f.write(header.encode())
        f.write(struct.pack("<%d%s" % (len(values), fmt), *values))


def read(path):
    data = open(path, "rb").read()
    n = struct.unpack("<H", data[8:10])[0]
    header = ast.literal_eval(data[10:10 + n].decode())
    fmt = "f" if header["descr"] == "<f4" else "e"
    count = 1
    for d in header["shape"]:
        count *= d
    size = 4 if fmt == "f" else 2
    return list(struct.unpack("<%d%s" % (count, fmt),
                              data[10 + n:10 + n + count * size]))


def f16(v):
    return struct.unpack("<e", struct.pack("<e", v))[0]


def gen(d):
    random.seed(3)
    x = [random.uniform(-3, 3) for _ in range(32)]
    dy = [random.uniform(-1, 1) for _ in range(32)]
    write(d + "/x.npy", x, (4, 8), "f4")
    write(d + "/dy.npy", dy, (4, 8), "f4")
    write(d + "/x16.npy", [f16(v) for v in x], (4, 8), "f2")
    write(d + "/dy16.npy", [f16(v) for v in dy], (4, 8), "f2")


def check(d):
    c, k = 0.7978845608028654, 0.044715
    s = f16(0.70710678)  # the f16 constant as the forward has it

    def gelu_tanh(v, g):
        t = math.tanh(c * (v + k * v ** 3))
        return g * (0.5 * (1 + t) + 0.5 * v * (1 - t * t) * c *
                    (1 + 3 * k * v * v))

    def relu(v, g):
        return g if v > 0 else 0.0

    def gelu_erf(v, g):
        return g * (0.5 * (1 + math.erf(v * s)) +
                    0.5 * v * 2 / math.sqrt(math.pi) *
                    math.exp(-(v * s) ** 2) * s)

    # f32: a few f32 roundings through the chain; f16: one rounding of the
    # stored result (2^-11) and the inputs' own.
    cases = [("gelu_tanh", "x", "dy", gelu_tanh, 1e-5),
             ("relu", "x", "dy", relu, 0.0),
             ("gelu_erf16", "x16", "dy16", gelu_erf, 2.0 ** -11)]
    ok = True
    for name, x, dy, formula, bound in cases:
        got = read("%s/%s.npy" % (d, name))
        xs, dys = read("%s/%s.npy" % (d, x)), read("%s/%s.npy" % (d, dy))
        worst = 0.0
        for g, v, gy in zip(got, xs, dys):
            want = formula(v, gy)
            worst = max(worst, abs(g - want) / max(abs(want), 1e-3))
        print("%s: max relative error %.1e (bound %.1e)" % (name, worst, bound))
        ok = ok and worst <= bound
    print("ok" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    if sys.argv[1] == "gen":
        gen(sys.argv[2])
    else:
        sys.exit(check(sys.argv[2]))
