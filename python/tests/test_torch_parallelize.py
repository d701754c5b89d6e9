"""shardlin.torch.parallelize (docs/python.md, "PyTorch"): the TP program's
forward and every gradient against the unsharded PyTorch module.

Bounds (max |got - ref| / max |ref|, per tensor): float64 modules 1e-10,
float32 modules 1e-5 (the program rounds each stored tensor once, the
reference is PyTorch's own float32 run; K <= 38 additions). Inputs, output
gradients and parameters are random and non-zero. W = 3 and 4 over feature
counts neither divides (H = 22, F = 38: chunks of 13, 13, 12 and 10, 10, 10,
8), 7 rows split over the ranks for act="sequence"; explicit offsets give an
empty chunk, and 3 rows over 4 ranks an empty row block."""
import copy

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torch_mlir")
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import shardlin  # noqa: E402
from conftest import ROOT  # noqa: E402
import shardlin.torch as st  # noqa: E402

H, FF = 22, 38
BOUND = {torch.float64: 1e-10, torch.float32: 1e-5}


class Linear(nn.Module):
    def __init__(self, k, n, bias=True):
        super().__init__()
        self.fc = nn.Linear(k, n, bias=bias)

    def forward(self, x):
        return self.fc(x)


class MLP(nn.Module):
    """GPT-2's MLP: fc1, GELU (exact), fc2."""

    def __init__(self, h, f):
        super().__init__()
        self.fc1 = nn.Linear(h, f)
        self.fc2 = nn.Linear(f, h)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x)))


class SwiGLU(nn.Module):
    """Llama's MLP: down(silu(gate(x)) * up(x)), no biases."""

    def __init__(self, h, f):
        super().__init__()
        self.gate = nn.Linear(h, f, bias=False)
        self.up = nn.Linear(h, f, bias=False)
        self.down = nn.Linear(f, h, bias=False)

    def forward(self, x):
        return self.down(F.silu(self.gate(x)) * self.up(x))


MLP_PLAN = {"fc1": "colwise", "fc2": "rowwise"}
SWIGLU_PLAN = {"gate": "colwise", "up": "colwise", "down": "rowwise"}


def rel_err(got, ref):
    got, ref = got.double(), ref.double()
    assert got.shape == ref.shape, (got.shape, ref.shape)
    return ((got - ref).abs().max() / ref.abs().max()).item()


def check_module(make, plan, world, dtype, act, rows=7, offsets=None,
                 hidden=None):
    """Forward and every gradient of the parallelized module against the
    unsharded one, on random x and dy."""
    torch.manual_seed(1000 * world + rows)
    model = make().to(dtype)
    ref_model = copy.deepcopy(model)
    x = torch.randn(rows, model_in(model), dtype=dtype)
    tp = st.parallelize(model, plan, world, (x,), act=act, offsets=offsets,
                        hidden=hidden)
    xs = x.clone().requires_grad_(True)
    y = tp(xs)
    xr = x.clone().requires_grad_(True)
    y_ref = ref_model(xr)
    bound = BOUND[dtype]
    assert y.dtype == dtype
    err = rel_err(y, y_ref)
    assert err <= bound, f"forward: {err:.3e} > {bound}"
    dy = torch.randn_like(y_ref)
    (y * dy).sum().backward()
    (y_ref * dy).sum().backward()
    err = rel_err(xs.grad, xr.grad)
    assert err <= bound, f"dx: {err:.3e} > {bound}"
    ref_params = dict(ref_model.named_parameters())
    for name, p in model.named_parameters():
        assert p.grad is not None, f"{name} got no gradient"
        err = rel_err(p.grad, ref_params[name].grad)
        assert err <= bound, f"d{name}: {err:.3e} > {bound}"
    return tp


def model_in(model):
    first = next(m for m in model.modules() if isinstance(m, nn.Linear))
    return first.in_features


@pytest.mark.parametrize("world", [3, 4])
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("style", ["colwise", "rowwise"])
def test_linear(world, dtype, style):
    # colwise splits the 38 out features, rowwise the 38 in features.
    make = ((lambda: Linear(H, FF)) if style == "colwise"
            else (lambda: Linear(FF, H)))
    check_module(make, {"fc": style}, world, dtype, act="sequence")


@pytest.mark.parametrize("world", [3, 4])
@pytest.mark.parametrize("act", ["sequence", "replicated"])
def test_mlp(world, act):
    check_module(lambda: MLP(H, FF), MLP_PLAN, world, torch.float64, act)


@pytest.mark.parametrize("world", [3, 4])
def test_mlp_f32(world):
    check_module(lambda: MLP(H, FF), MLP_PLAN, world, torch.float32,
                 "sequence")


@pytest.mark.parametrize("world", [3, 4])
def test_swiglu(world):
    check_module(lambda: SwiGLU(H, FF), SWIGLU_PLAN, world, torch.float64,
                 "sequence")


def test_uneven_empty_chunks():
    """Explicit offsets with an empty chunk (rank 1), and fewer rows than
    ranks for the sequence split (rank 3 gets none)."""
    offs = [0, 10, 10, 24, 38]
    tp = check_module(lambda: MLP(H, FF), MLP_PLAN, 4, torch.float64,
                      "sequence", rows=3, offsets={"fc1": offs, "fc2": offs})
    chunks = [a["chunks"] for a in tp.program.arguments if a["sharded"]]
    assert any(c["bounds"] == offs for c in chunks), chunks


def test_sees_parameter_updates():
    """The parameters are passed at each call: an in-place update (what an
    optimizer does) changes the next output, with no recompile."""
    torch.manual_seed(5)
    model = MLP(H, FF).double()
    x = torch.randn(5, H, dtype=torch.float64)
    tp = st.parallelize(model, MLP_PLAN, 3, x, act="sequence")
    program = tp.program
    with torch.no_grad():
        model.fc1.weight.mul_(0.5)
        model.fc2.bias.add_(1.0)
        y = tp(x)
        assert rel_err(y, model(x)) <= 1e-10
    assert tp.program is program


def test_safetensors_parameters(tmp_path):
    """Parameters from a safetensors file by state-dict name, instead of the
    module's."""
    from safetensors.torch import save_file
    torch.manual_seed(6)
    model = MLP(H, FF).double()
    other = MLP(H, FF).double()
    save_file({k: v.contiguous() for k, v in other.state_dict().items()},
              str(tmp_path / "p.safetensors"))
    x = torch.randn(6, H, dtype=torch.float64)
    tp = st.parallelize(model, MLP_PLAN, 4, x, act="replicated",
                        parameters=tmp_path / "p.safetensors")
    with torch.no_grad():
        assert rel_err(tp(x), other(x)) <= 1e-10


def test_new_input_shape_compiles_again():
    torch.manual_seed(7)
    model = MLP(H, FF).double()
    tp = st.parallelize(model, MLP_PLAN, 3, torch.randn(4, H).double(),
                        act="sequence")
    x = torch.randn(9, H, dtype=torch.float64)
    with torch.no_grad():
        assert rel_err(tp(x), model(x)) <= 1e-10


def test_bad_plans():
    model = MLP(H, FF)
    x = torch.randn(4, H)
    with pytest.raises(ValueError, match="'diagonal' is not a linear's style"):
        st.parallelize(model, {"fc1": "diagonal"}, 2, x)
    with pytest.raises(ValueError, match="no such submodule"):
        st.parallelize(model, {"fc3": "colwise"}, 2, x)
    with pytest.raises(ValueError, match="act: 'tensor'"):
        st.parallelize(model, MLP_PLAN, 2, x, act="tensor")
    with pytest.raises(ValueError, match="hidden: 'middle'"):
        st.parallelize(model, MLP_PLAN, 2, x, hidden="middle")
    with pytest.raises(ValueError, match="one input"):
        st.parallelize(model, MLP_PLAN, 2, (x, x))


def test_bad_offsets_are_compile_errors():
    """Chunk boundaries that do not cover the features: the compiler's
    located diagnostic, as shardlin.CompileError."""
    model = Linear(H, FF)
    x = torch.randn(4, H)
    with pytest.raises(shardlin.CompileError) as e:
        st.parallelize(model, {"fc": "colwise"}, 2, x,
                       offsets={"fc": [0, 5, 30]})
    assert e.value.diagnostics, str(e.value)


def test_jit_beside_torch_mlir():
    """jit=True in a process that has loaded torch_mlir (this module's
    import): the compiled code links against the extension's runtime
    without making any of its symbols global (docs/python.md, "Limits"), so
    neither torch_mlir's own LLVM nor the JIT is disturbed: the JIT's
    results match the plan's on every rank (the same kernels, so to within
    1e-6 relative), and torch-mlir exports and compiles after it."""
    path = ROOT / "examples/quickstart/linear.mlir"
    jit = shardlin.compile(path, jit=True)
    plan = shardlin.compile(path)
    assert jit.jit and not plan.jit
    rng = np.random.default_rng(9)
    args = [rng.uniform(-1, 1, a["global_shape"] if a["sharded"]
                        else a["shape"]).astype(np.float32)
            for a in plan.arguments]
    got = jit.run(*args, per_rank=True)
    want = plan.run(*args, per_rank=True)
    assert len(got) == len(want) == plan.world_size
    for r, ((y,), (y_plan,)) in enumerate(zip(got, want)):
        assert np.abs(y_plan).max() > 0
        err = np.abs(y.astype(np.float64) - y_plan).max() / np.abs(y_plan).max()
        assert err <= 1e-6, f"rank {r}: {err:.3e}"
    check_module(lambda: MLP(H, FF), MLP_PLAN, 3, torch.float64, "sequence")


def test_dtype_option():
    """dtype=torch.float64 on a float32 module: the program computes in
    float64 from the parameters' values (exact in float64), so the output is
    the float64 module's within 1e-10; the gradients reach the float32
    parameters (rounded once: within 2^-24 relative of float64's)."""
    torch.manual_seed(8)
    model = MLP(H, FF)
    ref = copy.deepcopy(model).double()
    x = torch.randn(7, H)
    tp = st.parallelize(model, MLP_PLAN, 3, x, act="sequence",
                        dtype=torch.float64)
    y = tp(x)
    assert y.dtype == torch.float64
    y_ref = ref(x.double())
    assert rel_err(y, y_ref) <= 1e-10
    dy = torch.randn_like(y_ref)
    (y * dy).sum().backward()
    (y_ref * dy).sum().backward()
    ref_params = dict(ref.named_parameters())
    for name, p in model.named_parameters():
        assert p.grad.dtype == torch.float32
        assert rel_err(p.grad, ref_params[name].grad) <= 2.0 ** -23, name


def test_hidden_stated():
    """The hidden activation's sharding stated at both places (hidden=
    "both"): the same forward and gradients."""
    check_module(lambda: MLP(H, FF), MLP_PLAN, 3, torch.float64, "sequence",
                 hidden="both")


@pytest.mark.parametrize("act", ["sequence", "replicated"])
def test_mlp_bf16(act):
    """A bfloat16 MLP (bf16 parameters, x and dy) at W = 3: the program runs
    in bf16 (its arguments are bf16, no cast), and its output and every
    gradient are compared with the float64 module on the same (exactly
    representable) values.

    Bound: 4 u relative to max |ref|, u = 2^-8 bf16's unit roundoff. The
    forward stores three bf16 tensors (fc1's output, the GELU's, the result)
    and the backward as many on its way (dy's products, the GELU's
    derivative's, each gradient), each rounded once to within u of its
    value; the sums (K <= 38) accumulate in f32. A rounding of the hidden
    tensor reaches the output through fc2's sum, whose cancellation can
    make it more than u of max |y|: 4 u leaves room for that, and is far
    below what a wrong chunk or a missing reduction gives (O(1)). Seen: at
    most 1.7 u over four seeds; PyTorch's own bf16 module against the same
    reference at most 1.4 u (checked below to stay within the bound too,
    so that the bound is one bf16 itself meets)."""
    u = 2.0 ** -8
    bound = 4 * u
    torch.manual_seed(42)
    model = MLP(H, FF).to(torch.bfloat16)
    ref = copy.deepcopy(model).double()
    plain = copy.deepcopy(model)
    x = torch.randn(7, H).to(torch.bfloat16)
    tp = st.parallelize(model, MLP_PLAN, 3, (x,), act=act)
    assert all(a["dtype"] == "bf16" for a in tp.program.arguments)
    assert tp.program.collectives
    xs = x.clone().requires_grad_(True)
    y = tp(xs)
    assert y.dtype == torch.bfloat16
    xr = x.double().requires_grad_(True)
    y_ref = ref(xr)
    xp = x.clone().requires_grad_(True)
    y_plain = plain(xp)
    dy = torch.randn(y_ref.shape).to(torch.bfloat16)
    (y * dy).sum().backward()
    (y_ref * dy.double()).sum().backward()
    (y_plain * dy).sum().backward()
    got = {"forward": (y, y_plain), "dx": (xs.grad, xp.grad)}
    want = {"forward": y_ref, "dx": xr.grad}
    ref_params = dict(ref.named_parameters())
    plain_params = dict(plain.named_parameters())
    for name, p in model.named_parameters():
        assert p.grad is not None and p.grad.dtype == torch.bfloat16, name
        got[name] = (p.grad, plain_params[name].grad)
        want[name] = ref_params[name].grad
    for name, (ours, torch_bf16) in got.items():
        err, torch_err = rel_err(ours, want[name]), rel_err(torch_bf16,
                                                            want[name])
        assert err <= bound, (f"{name}: {err / u:.2f} u > 4 u (PyTorch's "
                              f"bf16: {torch_err / u:.2f} u)")
        assert torch_err <= bound, name
