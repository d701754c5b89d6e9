"""shardlin from Python: compile a module and run it on W ranks (docs/python.md).

    import numpy as np, shardlin
    program = shardlin.compile("examples/quickstart/linear.mlir")
    y = program.run(x_per_rank, w, b, per_rank=True)   # each rank's results

The compile is shardlin-run's (lib/Execution/RunModule), in process; the run is
the runtime's in-memory run (runtime/include/shardlin/runtime/exec/Execute.h).
"""
from __future__ import annotations

import builtins
import os
from typing import Any, List, Optional, Sequence, Tuple

import ml_dtypes
import numpy as np

from . import _blas

_blas.choose_kernels()  # before _shardlin loads OpenBLAS (_blas.py says why)
from . import _shardlin  # noqa: E402

__all__ = ["compile", "Program", "CompileError", "RuntimeError",
           "InvalidArgumentError", "STATUS", "blas_kernels"]

_BF16 = np.dtype(ml_dtypes.bfloat16)
_DTYPES = {"f16": np.dtype(np.float16), "bf16": _BF16,
           "f32": np.dtype(np.float32), "f64": np.dtype(np.float64)}

#: The runtime's status codes (shardlin_status in shardlin-c/Runtime.h).
STATUS = {"ok": 0, "invalid argument": 1, "deadline exceeded": 2,
          "aborted": 3, "I/O error": 4, "unavailable": 5, "internal": 6,
          "not found": 7, "resource exhausted": 8}


class CompileError(Exception):
    """A compile failed. ``diagnostics`` holds every located message, as
    (location, severity, message) tuples ("file:line:col", "error", "...")."""

    def __init__(self, message: str, diagnostics: List[Tuple[str, str, str]]):
        self.diagnostics = diagnostics
        lines = [message] if message else []
        lines += [f"{loc + ': ' if loc else ''}{sev}: {msg}"
                  for loc, sev, msg in diagnostics]
        super().__init__("\n".join(lines) or "compile failed")


class RuntimeError(builtins.RuntimeError):
    """A run failed: ``status`` is the runtime's status code (STATUS),
    ``status_name`` its name, ``message`` the root cause's message."""

    def __new__(cls, status: int = 6, message: str = ""):
        if cls is RuntimeError and status == 1:
            cls = InvalidArgumentError
        return super().__new__(cls, status, message)

    def __init__(self, status: int = 6, message: str = ""):
        self.status = int(status)
        self.status_name = _shardlin.status_name(self.status)
        self.message = message
        super().__init__(f"{self.status_name}: {message}")

    def __str__(self) -> str:
        return f"{self.status_name}: {self.message}"


class InvalidArgumentError(RuntimeError, ValueError):
    """The runtime refused the inputs (status 1, invalid argument): a wrong
    shape, element type or number of arrays."""


_shardlin._set_runtime_error(RuntimeError)


class Program:
    """A compiled entry: ``text`` (the runtime's program text, what
    ``shardlin-run --emit-program`` writes), ``collectives``, ``explain()``,
    ``arguments``/``results`` (their types and chunk specs), ``run()``."""

    def __init__(self, handle: Any, world_size: Optional[int]):
        self._handle = handle
        self._world_size = world_size
        self._result_dtypes = [_DTYPES[r["dtype"]] for r in handle.results]
        # Only bf16 arguments and results need a view (the call path's
        # cost, python/bench/call_overhead.py).
        self._bf16_args = [a["dtype"] == "bf16" for a in handle.arguments]
        self._any_bf16_arg = any(self._bf16_args)
        self._any_bf16_result = _BF16 in self._result_dtypes
        # What a call passes besides the arguments, looked up once.
        self._run = _shardlin.run
        self._default_world = world_size or 0

    @property
    def last_run_info(self) -> Optional[Any]:
        """What the last successful run bound (the zero-copy rules,
        docs/python.md): .ranks (this process's), .arg_addresses[r][i] (the
        host address rank r read argument i from), .arg_copied[r][i]
        (whether a copy); None before the first."""
        return self._handle.last_run_info

    name = property(lambda self: self._handle.name)
    text = property(lambda self: self._handle.text,
                    doc="The program text (the runtime's form, ProgramText.h).")
    arguments = property(lambda self: self._handle.arguments)
    results = property(lambda self: self._handle.results)
    collectives = property(lambda self: self._handle.collectives,
                           doc="The collectives, in program order: dicts with "
                               "op, dtype, shape, strategy and location.")
    warnings = property(lambda self: self._handle.warnings)
    jit = property(lambda self: self._handle.jit)

    @property
    def world_size(self) -> int:
        """The ranks it runs on: compile's world_size, else the program's."""
        return self._world_size or self._handle.world_size or 1

    def explain(self) -> str:
        """The cost model's explanation: for each linear, the strategy chosen
        and every strategy's estimate (the lowering's explain=true)."""
        return "\n".join(f"{loc + ': ' if loc else ''}{msg}"
                         for loc, _, msg in self._handle.explanation)

    def __repr__(self) -> str:
        args = ", ".join(
            f"{a['dtype']}{list(a['global_shape'] if a['sharded'] else a['shape'])}"
            + (" sharded" if a["sharded"] else "") for a in self.arguments)
        return (f"<shardlin.Program @{self.name}({args}) on {self.world_size} "
                f"ranks, {len(self.collectives)} collectives"
                f"{', jit' if self.jit else ''}>")

    def run(self, *args: Any, world_size: Optional[int] = None,
            backend: str = "threads", grid: Optional[str] = None,
            per_rank: bool = False, device: int = -1,
            timeout: float = 300.0, blas_threads: int = 0,
            check_replicated: bool = True) -> Any:
        """Runs the program on ``world_size`` ranks of ``backend``.

        Each argument is an array (NumPy, or anything with ``__dlpack__`` in
        host memory) for every rank (a sharded argument: the global tensor,
        of which each rank takes its chunk), or a list with one array per
        rank. Returns the results (one array, or a tuple for several):
        assembled (a sharded result's global tensor; a plain one as rank 0
        has it), or with ``per_rank=True`` a list over ranks of each rank's
        results. Under ``backend="mpi"`` this process is one rank.
        """
        if grid is not None:
            raise ValueError(
                "grid: the Python package runs one replica; compile with "
                "shardlin.compile(..., grid=...) is refused at run time, use "
                "shardlin-run --grid (docs/python.md)")
        if self._any_bf16_arg:
            args = tuple(_convert(a) if bf16 else a
                         for a, bf16 in zip(args, self._bf16_args))
        # The arguments as the extension takes them, converted only where
        # they are not already (the call path's cost): nanobind converts
        # other integer and bool types itself. The extension returns the
        # results as run does (one array, a tuple, or per rank a list of
        # lists) and keeps what the run bound (last_run_info).
        results = self._run(
            self._handle, args, backend, world_size or self._default_world,
            device, timeout if type(timeout) is float else float(timeout),
            blas_threads, check_replicated, per_rank)
        if not self._any_bf16_result:
            return results
        if per_rank:
            return [self._typed(rank) for rank in results]
        if len(self._result_dtypes) == 1:
            return self._typed([results])[0]
        return tuple(self._typed(results))

    def _typed(self, arrays: Sequence[np.ndarray]) -> List[np.ndarray]:
        return [a.view(_BF16) if dt is _BF16 else a
                for a, dt in zip(arrays, self._result_dtypes)]


def _convert(a: Any) -> Any:
    """ml_dtypes.bfloat16 arrays go to the extension as their uint16 view
    (no copy): NumPy's buffer and DLPack exports do not carry bf16."""
    if isinstance(a, (list, tuple)):
        return [_convert(e) for e in a]
    if isinstance(a, np.ndarray) and a.dtype == _BF16:
        return a.view(np.uint16)
    return a


def compile(module: "str | os.PathLike[str]", *, world_size: Optional[int] = None,
            entry: str = "", strategy: Optional[str] = None, jit: bool = False,
            jit_cpu: str = "", grid: Optional[str] = None,
            **lowering: Any) -> Program:
    """Compiles ``module`` as ``shardlin-run`` does (the same pipeline, in
    process): MLIR text, or the path of a .mlir file (a ``str`` without a
    newline or ``{`` is a path). Keyword options are the lowering's
    (``strategy``, ``latency_us``, ``bandwidth_gbps``, ``gemm_gflops``,
    ``memory_cap_mib``, ``assumed_rows``, ``overlap_comm``, ``overlap_chunks``,
    ``fuse_blocks``): shardlin-run's flags with ``_`` for ``-``. Raises
    CompileError with every diagnostic."""
    if isinstance(module, os.PathLike) or (
            isinstance(module, str) and "\n" not in module and "{" not in module):
        text, path = "", os.fspath(module)
    elif isinstance(module, str):
        text, path = module, "<string>"
    else:
        raise TypeError(f"module: expected MLIR text or a path, got "
                        f"{type(module).__name__}")
    if strategy is not None:
        lowering["strategy"] = strategy
    known = set(_shardlin.lowering_options())
    parts = []
    for key, value in lowering.items():
        name = key.replace("_", "-")
        if name not in known:
            raise TypeError(f"compile() got an unknown option '{key}' (the "
                            f"lowering's: {', '.join(sorted(known))})")
        if isinstance(value, bool):
            value = "true" if value else "false"
        parts.append(f"{name}={value}")
    handle, diagnostics, error = _shardlin.compile(
        text, path, entry, bool(jit), jit_cpu, grid or "", " ".join(parts),
        int(world_size or 0))
    if handle is None:
        raise CompileError(error, [tuple(d) for d in diagnostics])
    return Program(handle, world_size)


def blas_kernels() -> str:
    """The OpenBLAS kernel set in use ("SkylakeX", "Haswell", "Zen", ...);
    the package sets OPENBLAS_CORETYPE before loading it (_blas.py)."""
    return _shardlin.blas_kernels()
