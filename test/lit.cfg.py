# -*- Python -*-
# lit configuration for shardlin's FileCheck tests (in the manner of
# mlir/examples/standalone).

import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "SHARDLIN"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.shardlin_obj_root, "test")

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%shlibext", config.llvm_shlib_ext))
config.substitutions.append(("%shardlin_src", config.shardlin_src_root))

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()

tool_dirs = [config.shardlin_tools_dir, config.llvm_tools_dir]
tools = ["shardlin-opt", "shardlin-run", "shardlin-exec", "mlir-opt"]
llvm_config.add_tool_substitutions(
    [ToolSubst(t, unresolved="ignore") for t in tools], tool_dirs)
llvm_config.with_environment("PATH", config.shardlin_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

# Optional features the tests can REQUIRE.
if config.shardlin_have_mpi:
    config.available_features.add("mpi")
