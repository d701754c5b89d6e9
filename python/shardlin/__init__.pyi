import builtins
import os
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from . import _shardlin

STATUS: Dict[str, int]

class CompileError(Exception):
    diagnostics: List[Tuple[str, str, str]]
    def __init__(self, message: str, diagnostics: List[Tuple[str, str, str]]) -> None: ...

class RuntimeError(builtins.RuntimeError):
    status: int
    status_name: str
    message: str
    def __init__(self, status: int = ..., message: str = ...) -> None: ...

class InvalidArgumentError(RuntimeError, ValueError): ...

class Program:
    last_run_info: Optional[_shardlin.RunInfo]
    @property
    def name(self) -> str: ...
    @property
    def text(self) -> str: ...
    @property
    def world_size(self) -> int: ...
    @property
    def arguments(self) -> List[Dict[str, Any]]: ...
    @property
    def results(self) -> List[Dict[str, Any]]: ...
    @property
    def collectives(self) -> List[Dict[str, Any]]: ...
    @property
    def warnings(self) -> List[Tuple[str, str, str]]: ...
    @property
    def jit(self) -> bool: ...
    def explain(self) -> str: ...
    def run(self, *args: Any, world_size: Optional[int] = ...,
            backend: str = ..., grid: Optional[str] = ...,
            per_rank: bool = ..., device: int = ..., timeout: float = ...,
            blas_threads: int = ..., check_replicated: bool = ...) -> Any: ...

def compile(module: Union[str, "os.PathLike[str]"], *,
            world_size: Optional[int] = ..., entry: str = ...,
            strategy: Optional[str] = ..., jit: bool = ..., jit_cpu: str = ...,
            grid: Optional[str] = ..., **lowering: Any) -> Program: ...

def blas_kernels() -> str: ...
