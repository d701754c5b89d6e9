"""Type stubs of shardlin.torch (python/shardlin/torch/): tensor-parallel
forward and backward of a PyTorch module through shardlin (docs/python.md,
"PyTorch")."""
import os
from typing import Any, Mapping, Optional, Sequence, Tuple, Union

import torch

from .. import Program

STYLES: Tuple[str, ...]
ACTIVATIONS: Tuple[str, ...]

class ParallelModule(torch.nn.Module):
    module: torch.nn.Module
    plan: dict
    world_size: int
    backend: str
    act: str
    def forward(self, x: torch.Tensor) -> torch.Tensor: ...
    def __call__(self, x: torch.Tensor) -> torch.Tensor: ...
    @property
    def program(self) -> Program: ...
    def backward_program(self, x: torch.Tensor) -> Program: ...

def parallelize(model: torch.nn.Module, plan: Mapping[str, str],
                world_size: int,
                example_inputs: Union[torch.Tensor, Tuple[torch.Tensor]], *,
                backend: str = "threads", act: str = "replicated",
                offsets: Optional[Mapping[str, Sequence[int]]] = None,
                hidden: Optional[str] = None,
                dtype: Optional[torch.dtype] = None,
                parameters: Optional[Union[str, "os.PathLike[str]"]] = None,
                **options: Any) -> ParallelModule: ...

def export_annotated(model: torch.nn.Module, x: torch.Tensor,
                     plan: Mapping[str, str], *, act: str = "replicated",
                     offsets: Optional[Mapping[str, Sequence[int]]] = None,
                     hidden: Optional[str] = None, world: int) -> Any: ...
