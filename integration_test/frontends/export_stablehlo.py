#!/usr/bin/env python3
"""Exports the StableHLO corpus: JAX functions lowered to StableHLO, legalized
to linalg by IREE's StableHLO input pipeline, annotated with upstream shard
ops from a plan, with float64 references. Runs in the frontend venv
(scripts/frontend-venv.sh: jax, jaxlib and iree-base-compiler are pinned in
requirements.txt beside this file).

  "$(bash scripts/frontend-venv.sh)/bin/python" \\
      integration_test/frontends/export_stablehlo.py [--check] [--only NAME ...]

The path of a module: `jax.jit(f).lower(*args).as_text()` (StableHLO), then
`iree-opt --iree-stablehlo-input-transformation-pipeline`, which writes
linalg, tensor, arith and math on tensors (no IREE dialect for these
functions). JAX passes parameters as function arguments, so the plan
annotates arguments: a weight split along its output features (colwise, with
its bias) or its input features (rowwise); x and the result are replicated or
split along their first dim (sequence). The annotations are inserted with
the MLIR Python API of the exporter's package (export.py's Annotator), not by
editing text.

Each case writes NAME.mlir, NAME.x.npy, NAME.<param>.npy (global values: the
runner passes them whole and shardlin-run gives each rank its chunk),
NAME.ref.npy (float64, from the stored values), NAME.own.npy (JAX's own run in
the dtype, which sets the bf16 bound) and its entry in stablehlo/cases.json,
which run_case.py --corpus reads. --check re-exports into a temporary
directory and compares (the float64 arrays to rounding, everything else byte
for byte).
"""
import argparse
import json
import os
import subprocess
import sys

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np

jax.config.update("jax_enable_x64", True)
jax.config.update("jax_platforms", "cpu")

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "stablehlo")
sys.path.insert(0, HERE)
from export import (Annotator, chunk_offsets, compare_corpus,  # noqa: E402
                    write_corpus)
from torch_mlir import ir  # noqa: E402

W = 4
DTYPES = {"f32": np.float32, "bf16": ml_dtypes.bfloat16}


def linear(x, w, b=None):
    y = jnp.einsum("...k,nk->...n", x, w)
    return y if b is None else y + b


def mlp(x, w1, b1, w2, b2, approximate=True):
    return linear(jax.nn.gelu(linear(x, w1, b1), approximate=approximate),
                  w2, b2)


def mlp_exact(x, w1, b1, w2, b2):
    return mlp(x, w1, b1, w2, b2, approximate=False)


def rmsnorm(x, g, eps=1e-6):
    return x * jax.lax.rsqrt(jnp.mean(x * x, axis=-1, keepdims=True) + eps) * g


def rmsnorm_swiglu(x, g, wg, wu, wd):
    n = rmsnorm(x, g)
    return linear(jax.nn.silu(linear(n, wg)) * linear(n, wu), wd)


def layernorm_mlp(x, g, beta, w1, b1, w2, b2, eps=1e-5):
    mu = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.mean((x - mu) ** 2, axis=-1, keepdims=True)
    n = (x - mu) / jnp.sqrt(var + eps) * g + beta
    return x + mlp(n, w1, b1, w2, b2)


def linear_bf16(x, w):
    # bf16 operands, f32 accumulation, bf16 result (JAX's mixed precision).
    return jnp.einsum("sk,nk->sn", x, w,
                      preferred_element_type=jnp.float32).astype(x.dtype)


# name, function, x's shape, the parameters (name, shape) in argument order,
# the plan, the activation layout, the dtype, chunk offsets, run under MPI.
H, F, FU = 16, 38, 24


def cases():
    mlp_params = [("fc1.weight", (F, H)), ("fc1.bias", (F,)),
                  ("fc2.weight", (H, F)), ("fc2.bias", (H,))]
    offs = [0, 10, 10, 24, 38]
    uneven = {"fc1": offs, "fc2": offs}
    return [
        dict(name="mlp_tanh", fn=mlp, shape=(6, H), params=mlp_params,
             plan={"fc1": "colwise", "fc2": "rowwise"}, act="replicated",
             dtype="f32", offsets=uneven, mpi=True),
        dict(name="mlp3d_gelu", fn=mlp_exact, shape=(2, 3, H),
             params=mlp_params, plan={"fc1": "colwise", "fc2": "rowwise"},
             act="replicated", dtype="f32", offsets=uneven, mpi=False),
        dict(name="mlp_tanh_seq", fn=mlp, shape=(10, H), params=mlp_params,
             plan={"fc1": "colwise", "fc2": "rowwise"}, act="sequence",
             dtype="f32", offsets=uneven, mpi=True),
        dict(name="rmsnorm_swiglu", fn=rmsnorm_swiglu, shape=(6, H),
             params=[("norm.weight", (H,)), ("gate.weight", (FU, H)),
                     ("up.weight", (FU, H)), ("down.weight", (H, FU))],
             plan={"gate": "colwise", "up": "colwise", "down": "rowwise"},
             act="replicated", dtype="f32", offsets={}, mpi=False),
        dict(name="layernorm_mlp_seq", fn=layernorm_mlp, shape=(10, H),
             params=[("norm.weight", (H,)), ("norm.bias", (H,))] + mlp_params,
             plan={"fc1": "colwise", "fc2": "rowwise"}, act="sequence",
             dtype="f32", offsets=uneven, mpi=False),
        dict(name="linear_bf16", fn=linear_bf16, shape=(6, H),
             params=[("fc.weight", (FU, H))], plan={"fc": "colwise"},
             act="replicated", dtype="bf16", offsets={}, mpi=False),
    ]


def iree_opt():
    return os.path.join(os.path.dirname(sys.executable), "iree-opt")


def to_linalg(stablehlo):
    """IREE's StableHLO input pipeline: StableHLO (+ CHLO) to linalg."""
    p = subprocess.run([iree_opt(), "--iree-stablehlo-input-transformation-pipeline",
                        "-", "-o", "-"], input=stablehlo, capture_output=True,
                       text=True)
    if p.returncode != 0:
        raise SystemExit("iree-opt failed:\n" + p.stderr)
    return p.stdout


def annotate(module, c):
    """The plan's shard ops on the function's arguments and result."""
    a = Annotator(module, W)
    names = ["x"] + [n for n, _ in c["params"]]
    shapes = [c["shape"]] + [s for _, s in c["params"]]
    layouts = {}
    for prefix, style in c["plan"].items():
        n, k = dict(c["params"])[prefix + ".weight"]
        dim, size = (0, n) if style == "colwise" else (1, k)
        offs = c["offsets"].get(prefix) or chunk_offsets(size, W)
        layouts[prefix + ".weight"] = (dim, offs)
        if style == "colwise" and prefix + ".bias" in names:
            layouts[prefix + ".bias"] = (0, offs)
    rows = c["shape"][0]
    act = (0, chunk_offsets(rows, W)) if c["act"] == "sequence" else (None, None)
    layouts["x"] = act
    first = next(op for op in a.ops() if op.operation.name != "shard.sharding")
    for i, name in enumerate(names):
        dim, offs = layouts.get(name, (None, None))
        arg = a.block.arguments[i]
        assert list(arg.type.shape) == list(shapes[i]), (name, arg.type)
        a.shard(arg, a.sharding(dim, offs), ir.InsertionPoint(first))
    ret = a.ops()[-1]
    a.shard(ret.operands[0], a.sharding(*act), ir.InsertionPoint(ret))


def export_case(c, out_dir):
    name, dtype = c["name"], DTYPES[c["dtype"]]
    rng = np.random.default_rng(sum(map(ord, name)))
    values = [rng.standard_normal(c["shape"]).astype(dtype)]
    for pname, shape in c["params"]:
        scale = 1.0 if pname.startswith("norm.") else shape[-1] ** -0.5
        values.append((rng.standard_normal(shape) * scale
                       + (1.0 if pname == "norm.weight" else 0.0)).astype(dtype))
    text = jax.jit(c["fn"]).lower(*values).as_text()
    with ir.Context() as ctx:
        ctx.allow_unregistered_dialects = True
        module = ir.Module.parse(to_linalg(text))
        annotate(module, c)
        body = str(module)
    with open(os.path.join(out_dir, name + ".mlir"), "w") as f:
        f.write(f"// {name}: JAX -> StableHLO -> linalg (IREE's input pipeline),"
                " exported by integration_test/frontends/export_stablehlo.py,"
                f" annotated from the plan {json.dumps(c['plan'], sort_keys=True)}.\n")
        f.write(body)
    files = [name + ".x.npy"] + [f"{name}.{p}.npy" for p, _ in c["params"]]
    for f, v in zip(files, values):
        np.save(os.path.join(out_dir, f), v)
    ref = np.asarray(jax.jit(c["fn"])(*[v.astype(np.float64) for v in values]))
    np.save(os.path.join(out_dir, name + ".ref.npy"), ref)
    own = np.asarray(jax.jit(c["fn"])(*values)).astype(np.float64)
    np.save(os.path.join(out_dir, name + ".own.npy"), own)
    meta = {k: c[k] for k in ("dtype", "act", "mpi", "plan", "offsets")}
    meta.update(world_size=W, shape=list(c["shape"]), args=files[1:],
                own=name + ".own.npy", trainable=False, hidden=None)
    return meta


def export_all(out_dir, only=None):
    from importlib.metadata import version
    write_corpus(out_dir, cases(), export_case,
                 {"jax": jax.__version__,
                  "iree-base-compiler": version("iree-base-compiler")}, only)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--check", action="store_true")
    p.add_argument("--out", default=CORPUS)
    p.add_argument("--only", nargs="*")
    args = p.parse_args()
    if args.check:
        return compare_corpus(CORPUS, export_all, "StableHLO corpus",
                              "export_stablehlo.py",
                              results=(".ref.npy", ".own.npy"))
    export_all(args.out, args.only)
    return 0


if __name__ == "__main__":
    sys.exit(main())
