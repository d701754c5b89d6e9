"""shardlin.torch.parallelize: a PyTorch module's tensor-parallel forward and
backward, compiled by shardlin (docs/python.md, "PyTorch").

For each input signature (shape and dtype of x) the model is exported by
torch-mlir and annotated from the plan in the IR (_export.py), then

  - forward: `--shardlin-externalize-parameters` moves every parameter blob
    into a function argument named by its state-dict name
    (`shardlin.parameter`), and shardlin.compile compiles `@main` (the
    upstream form is imported on the way);
  - backward, on the first backward call: the same, then
    `--shardlin-import-shard` and `--shardlin-generate-backward=
    recompute=always functions=main`, and shardlin.compile compiles
    `@main_backward(x, params..., dy) -> (dx, dparams...)`.

The passes run in process (`_shardlin.transform`, the extension's pipeline
runner over shardlin-opt's registered passes). Each call passes the
parameters' current values (the module's state dict, or a safetensors file)
as the program's arguments, so an optimizer's updates are seen without a
recompile; the backward's sharded gradients come back assembled from every
rank's chunks, a replicated bias's summed over the ranks, and autograd puts
them into the original parameters' `.grad`.
"""
from __future__ import annotations

import copy
import math
import os
import tempfile
import warnings
import weakref
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np
import torch

from .. import _BF16, CompileError, Program, _shardlin
from .. import compile as _compile
from . import _export

__all__ = ["parallelize", "ParallelModule"]

# Only f16, bf16, f32 and f64 tensors run; the pass's file may hold others
# (an exporter's integer glue), which a program cannot take as arguments.
_TORCH_DTYPES = {"f16": torch.float16, "bf16": torch.bfloat16,
                 "f32": torch.float32, "f64": torch.float64}


def _transform(text: str, pipeline: str) -> str:
    out, diagnostics, error = _shardlin.transform(text, "<shardlin.torch>",
                                                  pipeline)
    if out is None:
        raise CompileError(error, [tuple(d) for d in diagnostics])
    return out


def _to_host(t: torch.Tensor) -> Any:
    """A tensor as the program takes it, without a copy on the CPU: its
    NumPy view (the extension reads NumPy arrays through NumPy's C API,
    about 6 us cheaper per tensor than a torch tensor's DLPack export); bf16,
    which NumPy lacks, as the uint16 view of its bits (what the extension
    takes for a bf16 argument)."""
    if t.requires_grad:
        t = t.detach()
    if t.device.type != "cpu":
        t = t.cpu()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().view(np.uint16)
    return t.numpy()


def _to_torch(a: np.ndarray) -> torch.Tensor:
    """A result array as a tensor over the same memory (bf16 through its
    uint16 view: NumPy has no bf16 for torch.from_numpy)."""
    if a.dtype == _BF16:  # (dtype.name is a slow Python property)
        return torch.from_numpy(a.view(np.uint16)).view(torch.bfloat16)
    return torch.from_numpy(a)


def _lowering_options(options: Mapping[str, Any]) -> str:
    parts = []
    for key, value in options.items():
        if isinstance(value, bool):
            value = "true" if value else "false"
        parts.append(f"{key.replace('_', '-')}={value}")
    return " ".join(parts)


class _Signature:
    """The programs of one input signature: the forward, compiled at once,
    and the backward, compiled on first use."""

    def __init__(self, owner: "ParallelModule", x: torch.Tensor):
        # A weak reference: the module holds its signatures, and a cycle
        # would keep their programs alive until a garbage collection (at
        # exit, after the extension's teardown: nanobind reports leaks).
        self._owner = weakref.ref(owner)
        self.shape = tuple(x.shape)
        self.forward = self._compile(x, owner.act, backward=False)
        self.names = self._parameter_names(self.forward)
        self._example = x.detach().clone()
        self._backward: Optional[Program] = None

    def _compile(self, x: torch.Tensor, act: str, backward: bool) -> Program:
        o = self._owner()
        model = o._export_model()
        module = _export.export_annotated(
            model, x.detach().to(o._dtype) if o._dtype else x.detach(),
            o.plan, act=act, offsets=o.offsets, hidden=o.hidden,
            world=o.world_size)
        text = str(module)
        with tempfile.TemporaryDirectory(prefix="shardlin-torch-") as tmp:
            path = os.path.join(tmp, "parameters.safetensors")
            passes = [f"shardlin-externalize-parameters{{file={path} "
                      f"min-elements={o._min_elements}}}"]
            if backward:
                options = _lowering_options(o.options)
                passes += ["shardlin-import-shard",
                           "shardlin-generate-backward{recompute=always "
                           f"functions=main {options}}}"]
            text = _transform(text, ", ".join(passes))
            # Constants the pass moved that are no state-dict entry: their
            # values, from its file.
            if os.path.exists(path) and not o._extras:
                from safetensors.numpy import load_file
                o._extras = {k: v for k, v in load_file(path).items()
                             if k not in o._state_names}
        entry = "main_backward" if backward else "main"
        return _compile(text, world_size=o.world_size, entry=entry,
                        **o.options)

    @staticmethod
    def _parameter_names(program: Program) -> List[str]:
        args = program.arguments
        if not args or args[0]["parameter"]:
            raise ValueError("shardlin.torch: the exported @main does not take "
                             "the input first")
        return [a["parameter"] for a in args[1:]]

    @property
    def backward(self) -> Program:
        if self._backward is None:
            # The backward of a replicated input or result is refused by the
            # generator (docs/training.md): the gradients are the same
            # whatever the layout, so they come from the sequence-split form.
            # The sequence split first (what the generator takes for any
            # plan); where that fails (an attention's B x S x H input split
            # on its batch), the replicated form, which the generator takes
            # for attention (replicated -> replicated linears).
            errors = []
            for act in ("sequence", "replicated"):
                try:
                    backward = self._compile(self._example, act,
                                             backward=True)
                    break
                except CompileError as e:
                    errors.append(e)
            else:
                raise _backward_refused(self._owner(), errors) from None
            # (x, the parameters, dy): the forward's arguments, then dy.
            names = self._parameter_names(backward)
            if names != self.names + [""]:
                raise ValueError(f"shardlin.torch: the backward takes the "
                                 f"parameters {names}, the forward {self.names}")
            self._backward = backward
        return self._backward


def _backward_refused(owner: "ParallelModule",
                      errors: Sequence[CompileError]) -> CompileError:
    """The refusals of the backward (x split on rows, then replicated), said
    as what they mean to the caller: the forward runs, its backward is not
    made; every diagnostic kept, the first error's op named."""
    diagnostics = [d for e in errors for d in e.diagnostics]
    first = next((m for _, sev, m in diagnostics if sev == "error"), "")
    what = type(owner.module).__name__
    if "cannot differentiate 'shardlin.attention'" in first:
        why = ("its attention (shardlin.attention, docs/attention.md) has no "
               "generated backward in this build")
    else:
        why = ("generating or compiling the backward failed, with x split "
               "on its rows and with x replicated")
    said = "".join(" " + str(e) for e in errors if not e.diagnostics)
    return CompileError(
        f"shardlin.torch: cannot generate the backward of {what}: {why}. "
        f"The forward runs (under torch.no_grad(), or with inputs and "
        f"parameters that need no gradient); the compiler said:{said}",
        diagnostics)


class _ParallelFunction(torch.autograd.Function):
    """The TP program as an autograd node: forward runs @main, backward
    @main_backward; the gradients of the parameters given as inputs reach
    their `.grad` through autograd."""

    @staticmethod
    def forward(ctx, owner, signature, x, *params):
        ctx.owner, ctx.signature = owner, signature
        ctx.save_for_backward(x, *params)
        y = owner._run(signature.forward, [x, *params])
        return y[0].to(x.device)

    @staticmethod
    def backward(ctx, dy):
        x, *params = ctx.saved_tensors
        grads = ctx.owner._run(ctx.signature.backward,
                               [x, *params, dy.to(x.dtype)])
        out = [None, None]
        for needed, g, like in zip(ctx.needs_input_grad[2:], grads,
                                   [x, *params]):
            out.append(g.to(device=like.device, dtype=like.dtype)
                       if needed else None)
        return tuple(out)


class ParallelModule(torch.nn.Module):
    """The tensor-parallel version of a module (shardlin.torch.parallelize):
    calling it runs the compiled program on `world_size` ranks of
    `backend`; its parameters are the original module's (`.module`)."""

    def __init__(self, model: torch.nn.Module, plan: Mapping[str, str],
                 world_size: int, *, backend: str, act: str,
                 offsets: Optional[Mapping[str, Sequence[int]]],
                 hidden: Optional[str], dtype: Optional[torch.dtype],
                 parameters: Optional[str], options: Dict[str, Any]):
        super().__init__()
        self.module = model
        self.plan = dict(plan)
        self.world_size = int(world_size)
        self.backend = backend
        self.act = act
        self.offsets = {k: list(v) for k, v in (offsets or {}).items()}
        self.hidden = hidden
        self.options = options
        self._dtype = dtype
        self._file = None
        if parameters is not None:
            from safetensors.torch import load_file
            self._file = load_file(os.fspath(parameters))
        self._state_names = set(model.state_dict().keys())
        # Each state-dict name's module and attribute, read at every call
        # (model.state_dict() itself costs tens of microseconds a call).
        self._owners = {}
        for prefix, sub in model.named_modules():
            for leaf, _ in list(sub.named_parameters(recurse=False)) + list(
                    sub.named_buffers(recurse=False)):
                name = f"{prefix}.{leaf}" if prefix else leaf
                self._owners.setdefault(name, (sub, leaf))
        sizes = [t.numel() for t in model.state_dict().values()
                 if t.numel() >= 2]
        # Every named tensor becomes an argument (the exporter's hook names
        # tensors of 2 elements or more), without the pass's default floor
        # of 16 elements.
        self._min_elements = min([16] + sizes)
        self._extras: Dict[str, np.ndarray] = {}
        self._signatures: Dict[Tuple, _Signature] = {}

    # -- compiling -----------------------------------------------------------

    def _export_model(self) -> torch.nn.Module:
        if self._dtype is None:
            return self.module
        return copy.deepcopy(self.module).to(self._dtype)

    def _signature(self, x: torch.Tensor) -> _Signature:
        dtype = self._dtype or x.dtype
        key = (tuple(x.shape), dtype)
        sig = self._signatures.get(key)
        if sig is None:
            sig = _Signature(self, x.to(dtype))
            self._signatures[key] = sig
            self._check_parameters(sig)
        return sig

    def _check_parameters(self, sig: _Signature) -> None:
        missing = [n for n, p in self.module.named_parameters()
                   if p.requires_grad and n not in sig.names]
        if missing:
            warnings.warn(f"shardlin.torch: the program does not take the "
                          f"parameters {missing} (unused by the forward, or "
                          f"of one element, which the exporter inlines): "
                          f"they get no gradient and their updates are not "
                          f"seen", stacklevel=3)

    @property
    def program(self) -> Program:
        """The forward program of the most recent input signature."""
        if not self._signatures:
            raise ValueError("not compiled yet: call the module once")
        return next(reversed(self._signatures.values())).forward

    def backward_program(self, x: torch.Tensor) -> Program:
        """The backward program for inputs like `x` (compiled if need be)."""
        return self._signature(x).backward

    # -- running ---------------------------------------------------------------

    def _tensors(self, names: Sequence[str]) -> List[torch.Tensor]:
        """The arguments after x, by name: the module's parameters and
        buffers as they are now (so an optimizer's updates, and parameters
        replaced by assignment, are seen), or the file's."""
        if self._file is not None:
            state = self._file
        else:
            state = None
        out = []
        for name in names:
            if state is not None and name in state:
                t = state[name]
            elif state is None and name in self._owners:
                owner, leaf = self._owners[name]
                t = getattr(owner, leaf)
            elif name in self._extras:
                t = torch.from_numpy(self._extras[name])
            else:
                raise KeyError(f"shardlin.torch: no tensor '{name}' in the "
                               f"{'file' if state is not None else 'module'}")
            out.append(t.to(self._dtype) if self._dtype else t)
        return out

    def _run(self, program: Program, args: Sequence[torch.Tensor]):
        results = program.run(*[_to_host(a) for a in args],
                              world_size=self.world_size,
                              backend=self.backend)
        if not isinstance(results, tuple):
            results = (results,)
        return [_to_torch(r) for r in results]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not isinstance(x, torch.Tensor):
            raise TypeError(f"expected a torch.Tensor, got {type(x).__name__}")
        sig = self._signature(x)
        params = self._tensors(sig.names)
        if self._dtype is not None:
            x = x.to(self._dtype)
        if torch.is_grad_enabled() and (
                x.requires_grad or any(p.requires_grad for p in params)):
            return _ParallelFunction.apply(self, sig, x, *params)
        # Nothing to differentiate: the forward alone, without autograd's
        # node (the call path's cost, python/bench/call_overhead.py --torch).
        y = self._run(sig.forward, [x, *params])[0]
        return y if x.device.type == "cpu" else y.to(x.device)

    def extra_repr(self) -> str:
        return (f"plan={self.plan}, world_size={self.world_size}, "
                f"backend={self.backend!r}, act={self.act!r}")


#: The head-aligned styles (attention's q, k, v and o): colwise / rowwise
#: with chunk boundaries on whole heads (docs/python.md, "Attention").
HEAD_STYLES = {"colwise_heads": "colwise", "rowwise_heads": "rowwise"}


def _check_plan(model: torch.nn.Module, plan: Mapping[str, str]) -> None:
    if not plan:
        raise ValueError("plan: empty (name at least one nn.Linear)")
    modules = dict(model.named_modules())
    styles = _export.STYLES + tuple(HEAD_STYLES)
    for name, style in plan.items():
        if style not in styles:
            raise ValueError(f"plan['{name}']: '{style}' is not a linear's "
                             f"style ({', '.join(styles)})")
        m = modules.get(name)
        if not isinstance(m, torch.nn.Linear):
            raise ValueError(f"plan['{name}']: "
                             + ("no such submodule" if m is None else
                                f"a {type(m).__name__}, not an nn.Linear"))


def _model_head_dim(model: torch.nn.Module, names: Sequence[str]) -> int:
    """head_dim as the model states it: a `head_dim` attribute of the
    module that holds a head-aligned linear, or of one above it (GPT-2's
    and Llama's attention modules in transformers have one)."""
    for name in names:
        parts = name.split(".")[:-1]
        while True:
            holder = model.get_submodule(".".join(parts))
            d = getattr(holder, "head_dim", None)
            if isinstance(d, int) and d > 0:
                return d
            if not parts:
                break
            parts.pop()
    raise ValueError(
        f"head_dim: the plan's head-aligned styles ({', '.join(names)}) need "
        f"the head size: pass head_dim= (the module holding them has no "
        f"integer head_dim attribute)")


def _head_aligned(model: torch.nn.Module, plan: Mapping[str, str],
                  world: int, head_dim: Optional[int],
                  offsets: Mapping[str, Sequence[int]]
                  ) -> Tuple[Dict[str, str], Dict[str, List[int]]]:
    """The plan with its head-aligned styles resolved: colwise_heads splits
    an nn.Linear's out features, rowwise_heads its in features, each at
    whole heads of head_dim features. The chunk rule is applied to head
    groups: with n heads in a linear and G the gcd of every head-aligned
    linear's head count (the kv heads of a grouped-query attention, else
    the heads), rank r holds the groups chunk_offsets(G, W)[r:r+2] of n / G
    heads each, so that q's heads, their k and v heads and o's inputs land
    on the same rank for any W (ceil(G / W) groups per rank; some ranks
    none when W > G). Explicit offsets must fall on head boundaries."""
    heads = [n for n, s in plan.items() if s in HEAD_STYLES]
    resolved = {n: HEAD_STYLES.get(s, s) for n, s in plan.items()}
    out = {k: list(v) for k, v in offsets.items()}
    if not heads:
        if head_dim is not None:
            raise ValueError("head_dim: given, but the plan has no "
                             "head-aligned style (colwise_heads, "
                             "rowwise_heads)")
        return resolved, out
    d = int(head_dim) if head_dim is not None else _model_head_dim(model,
                                                                   heads)
    if d < 1:
        raise ValueError(f"head_dim: {head_dim} (at least 1)")
    modules = dict(model.named_modules())
    counts = {}
    for name in heads:
        m = modules[name]
        colwise = resolved[name] == "colwise"
        size = m.out_features if colwise else m.in_features
        if size % d:
            raise ValueError(
                f"plan['{name}']: {plan[name]} needs whole heads, but its "
                f"{size} {'out' if colwise else 'in'} features are not a "
                f"multiple of head_dim {d}")
        counts[name] = size // d
    groups = math.gcd(*counts.values())
    for name in heads:
        if name in out:
            bad = [o for o in out[name] if o % d]
            if bad:
                raise ValueError(f"offsets['{name}']: {bad} fall inside a "
                                 f"head (head_dim {d})")
            continue
        per_group = counts[name] // groups * d
        out[name] = [per_group * b
                     for b in _export.chunk_offsets(groups, world)]
    return resolved, out


def parallelize(model: torch.nn.Module, plan: Mapping[str, str],
                world_size: int, example_inputs: Any, *,
                backend: str = "threads", act: str = "replicated",
                offsets: Optional[Mapping[str, Sequence[int]]] = None,
                hidden: Optional[str] = None,
                dtype: Optional[torch.dtype] = None,
                parameters: "Optional[str | os.PathLike[str]]" = None,
                head_dim: Optional[int] = None,
                **options: Any) -> ParallelModule:
    """Compiles `model` for `world_size` ranks from a tensor-parallel plan
    and returns a module whose forward (and backward) runs the program.

    plan: {"fc1": "colwise", "fc2": "rowwise"}: each named nn.Linear split on
      its out features (colwise) or its in features (rowwise), as DTensor's
      ColwiseParallel / RowwiseParallel; offsets: {"fc1": [0, ..., N]} the
      chunk boundaries (default: ceil(size / world_size) per rank; uneven
      and empty chunks are allowed). "colwise_heads" / "rowwise_heads" are
      the same splits at whole heads (attention's q, k, v colwise_heads and
      o rowwise_heads): the heads' size is head_dim= or the model's
      `head_dim` attribute, and the chunk rule applies to heads (to kv-head
      groups for grouped-query attention), so any W works for any head
      count.
    act: "replicated" (x and the result whole on every rank) or "sequence"
      (both split on dim 0, as DTensor's SequenceParallel).
    example_inputs: x, or a one-element tuple (x); the module has one input
      and one result. Other input shapes compile again on first use.
    backend: the runtime's ("threads", "mpi" under mpirun, ...).
    dtype: the dtype the program computes in (default: the model's); the
      parameters and x are cast to it each call.
    parameters: a safetensors file holding the parameters by state-dict
      name, used instead of the module's (frozen: no gradients reach it).
    options: shardlin.compile's lowering options (strategy, latency_us, ...),
      also given to the backward's generator.
    """
    if act not in _export.ACTIVATIONS:
        raise ValueError(f"act: '{act}' is not one of "
                         f"{', '.join(_export.ACTIVATIONS)}")
    if hidden not in (None, "none", "out", "in", "both"):
        raise ValueError(f"hidden: '{hidden}' is not one of none, out, in, "
                         f"both")
    if int(world_size) < 1:
        raise ValueError(f"world_size: {world_size} (at least 1)")
    if isinstance(example_inputs, (tuple, list)):
        if len(example_inputs) != 1:
            raise ValueError(f"example_inputs: {len(example_inputs)} inputs; "
                             f"shardlin.torch takes modules of one input")
        example_inputs = example_inputs[0]
    if not isinstance(example_inputs, torch.Tensor):
        raise TypeError("example_inputs: expected a torch.Tensor (or a "
                        "tuple of one)")
    _check_plan(model, plan)
    plan, offsets = _head_aligned(model, plan, int(world_size), head_dim,
                                  offsets or {})
    tp = ParallelModule(model, plan, world_size, backend=backend, act=act,
                        offsets=offsets, hidden=hidden, dtype=dtype,
                        parameters=parameters, options=options)
    tp._signature(example_inputs)
    return tp
