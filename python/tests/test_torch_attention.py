"""shardlin.torch.parallelize of attention layers with the head-aligned
styles (docs/python.md, "Attention"): q, k and v colwise_heads, o
rowwise_heads, at a W that divides neither the heads nor the features.

Forward against the unsharded module on random x (B = 2, S = 5) and random
parameters, max |got - ref| / max |ref|: float64 within 1e-10 (seen about
3e-16), float32 within 1e-5 (seen about 2e-7; the reference is PyTorch's
own float32 run; the softmax and sums over at most H = 32 features). The
backward (shardlin-generate-backward's adjoint of shardlin.attention) is
checked the same way: dx and every parameter's gradient."""
import copy

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torch_mlir")
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import shardlin.torch as st  # noqa: E402

BOUND = {torch.float64: 1e-10, torch.float32: 1e-5}
PLAN = {"q": "colwise_heads", "k": "colwise_heads", "v": "colwise_heads",
        "o": "rowwise_heads"}


class Attention(nn.Module):
    """GPT-2's attention (kv_heads=None: q, k, v, o with biases, causal
    SDPA), or Llama's grouped-query form without rope (kv_heads < heads:
    k and v of kv_heads heads, repeated to the query heads with
    repeat_interleave, no biases)."""

    def __init__(self, heads, head_dim, kv_heads=None, with_attr=True):
        super().__init__()
        h = heads * head_dim
        self.heads, self.kv_heads = heads, kv_heads or heads
        self.d = head_dim
        if with_attr:
            self.head_dim = head_dim
        bias = kv_heads is None
        self.q = nn.Linear(h, h, bias=bias)
        self.k = nn.Linear(h, self.kv_heads * head_dim, bias=bias)
        self.v = nn.Linear(h, self.kv_heads * head_dim, bias=bias)
        self.o = nn.Linear(h, h, bias=bias)

    def forward(self, x):
        b, s, h = x.shape
        q = self.q(x).view(b, s, self.heads, self.d).transpose(1, 2)
        k, v = (f(x).view(b, s, self.kv_heads, self.d).transpose(1, 2)
                for f in (self.k, self.v))
        g = self.heads // self.kv_heads
        if g > 1:
            k = k.repeat_interleave(g, dim=1)
            v = v.repeat_interleave(g, dim=1)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.o(y.transpose(1, 2).reshape(b, s, h))


def rel_err(got, ref):
    got, ref = got.double(), ref.double()
    assert got.shape == ref.shape, (got.shape, ref.shape)
    return ((got - ref).abs().max() / ref.abs().max()).item()


def bounds_of(tp):
    """Each sharded parameter's chunk boundaries, by name."""
    return {a["parameter"]: a["chunks"]["bounds"] or None
            for a in tp.program.arguments if a["sharded"]}


def check_forward(model, world, dtype, **kw):
    torch.manual_seed(11 * world)
    model = model.to(dtype)
    ref = copy.deepcopy(model)
    h = model.q.in_features
    x = torch.randn(2, 5, h, dtype=dtype)
    tp = st.parallelize(model, PLAN, world, (x,), **kw)
    with torch.no_grad():
        y = tp(x)
        y_ref = ref(x)
    assert y.dtype == dtype
    err = rel_err(y, y_ref)
    assert err <= BOUND[dtype], f"forward: {err:.3e} > {BOUND[dtype]}"
    assert tp.program.collectives
    return tp


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_gpt2_attention_7_heads_on_3_ranks(dtype):
    """7 heads of 4 over 3 ranks: whole heads 3, 3, 1 (the chunk rule on
    heads); the plain chunk rule on the 28 features would cut heads."""
    tp = check_forward(Attention(7, 4), 3, dtype)
    assert tp.offsets == {n: [0, 12, 24, 28] for n in PLAN}
    assert tp.plan == {"q": "colwise", "k": "colwise", "v": "colwise",
                       "o": "rowwise"}
    b = bounds_of(tp)
    assert b["q.weight"] == b["k.bias"] == b["o.weight"] == [0, 12, 24, 28], b


def test_head_dim_keyword():
    """head_dim= where the module has no head_dim attribute; 5 heads of 2
    on 4 ranks: 2, 2, 1, 0 heads (an empty chunk)."""
    tp = check_forward(Attention(5, 2, with_attr=False), 4, torch.float64,
                       head_dim=2)
    assert tp.offsets["q"] == [0, 4, 8, 10, 10]


def test_grouped_query_attention():
    """8 query heads, 4 kv heads (groups of 2) on 3 ranks: the chunk rule on
    the 4 groups (ceil(4 / 3) = 2 a rank) gives 2, 2, 0 groups, so q gets
    4, 4, 0 heads and k and v their 2, 2, 0 heads (rank 2 holds none); o's
    in features follow q."""
    tp = check_forward(Attention(8, 4, kv_heads=4), 3, torch.float64)
    assert tp.offsets["q"] == tp.offsets["o"] == [0, 16, 32, 32]
    assert tp.offsets["k"] == tp.offsets["v"] == [0, 8, 16, 16]


@pytest.mark.parametrize("kv_heads,dtype", [(None, torch.float64),
                                             (4, torch.float64),
                                             (None, torch.float32)])
def test_attention_backward(kv_heads, dtype):
    """loss.backward() through the generated backward (its x replicated:
    the generator's form for attention): dx and every parameter's gradient
    against the unsharded module's, GPT-2's 7 heads and the grouped-query
    8 / 4 heads on 3 ranks. k's bias gets no gradient, analytically: it adds
    q . b_k to every score of a query's row, which the softmax cancels; its
    reference is rounding noise (about 1e-16), so it is checked absolutely,
    against the scale of q's bias gradient, within the same bound."""
    heads = 7 if kv_heads is None else 8
    torch.manual_seed(5 + heads)
    model = Attention(heads, 4, kv_heads=kv_heads).to(dtype)
    ref = copy.deepcopy(model)
    x = torch.randn(2, 5, heads * 4, dtype=dtype)
    tp = st.parallelize(model, PLAN, 3, (x,))
    xs = x.clone().requires_grad_(True)
    y = tp(xs)
    xr = x.clone().requires_grad_(True)
    y_ref = ref(xr)
    bound = BOUND[dtype]
    assert rel_err(y, y_ref) <= bound
    dy = torch.randn_like(y_ref)
    (y * dy).sum().backward()
    (y_ref * dy).sum().backward()
    err = rel_err(xs.grad, xr.grad)
    assert err <= bound, f"dx: {err:.3e} > {bound}"
    ref_params = dict(ref.named_parameters())
    for name, p in model.named_parameters():
        assert p.grad is not None, f"{name} got no gradient"
        want = ref_params[name].grad
        if name == "k.bias":
            scale = ref_params["q.bias"].grad.abs().max()
            err = ((p.grad - want).abs().max() / scale).item()
        else:
            err = rel_err(p.grad, want)
        assert err <= bound, f"d{name}: {err:.3e} > {bound}"
    assert tp.backward_program(x).collectives


def test_head_plan_errors():
    model = Attention(7, 4, with_attr=False)
    x = torch.randn(2, 5, 28)
    with pytest.raises(ValueError, match="pass head_dim="):
        st.parallelize(model, PLAN, 3, (x,))
    with pytest.raises(ValueError, match="not a multiple of head_dim 8"):
        st.parallelize(model, PLAN, 3, (x,), head_dim=8)
    with pytest.raises(ValueError, match=r"\[10, 18\] fall inside a head"):
        st.parallelize(model, PLAN, 3, (x,), head_dim=4,
                       offsets={"q": [0, 10, 18, 28]})
    with pytest.raises(ValueError, match="no head-aligned style"):
        st.parallelize(model, {"q": "colwise"}, 3, (x,), head_dim=4)
