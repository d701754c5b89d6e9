# -*- Python -*-
# lit configuration for shardlin's FileCheck tests (in the manner of
# mlir/examples/standalone).

import os
import platform
import stat
import tempfile

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "SHARDLIN"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "Inputs", "Unit"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.shardlin_obj_root, "test")

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%shlibext", config.llvm_shlib_ext))
config.substitutions.append(("%shardlin_src", config.shardlin_src_root))

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()

tool_dirs = [config.shardlin_tools_dir, config.llvm_tools_dir]
tools = ["shardlin-opt", "shardlin-run", "shardlin-exec", "mlir-opt", "mlir-translate"]
llvm_config.add_tool_substitutions(
    [ToolSubst(t, unresolved="ignore") for t in tools], tool_dirs)
llvm_config.with_environment("PATH", config.shardlin_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

# Optional features the tests can REQUIRE.
if config.shardlin_have_mpi:
    config.available_features.add("mpi")
# "x86_64": this machine (and so the JIT's target) is x86-64, whose CPU names
# (x86-64-v2, ...) the --jit-cpu tests give.
if platform.machine().lower() in ("x86_64", "amd64"):
    config.available_features.add("x86_64")
# "cuda"/"nccl": the GPU backends are built in. "gpu": a CUDA device is also
# usable now, as `shardlin-exec --gpus` reports it ("gpu: N device(s):
# ..." or "gpu: none (why)"); GPU tests REQUIRE it, and tests of the no-GPU
# errors use `%if gpu %{ ... %} %else %{ ... %}`.
if getattr(config, "shardlin_have_cuda", False):
    config.available_features.add("cuda")
    if config.shardlin_have_nccl:
        config.available_features.add("nccl")
    import re
    import subprocess

    exe = os.path.join(config.shardlin_tools_dir, "shardlin-exec")
    try:
        version = subprocess.run([exe, "--gpus"], capture_output=True,
                                 text=True, timeout=120).stdout
    except (OSError, subprocess.SubprocessError):
        version = ""
    match = re.search(r"^\s*gpu: (\d+) devices?:", version, re.MULTILINE)
    if match and int(match.group(1)) > 0:
        config.available_features.add("gpu")
        # "gpus-N": at least N devices (one per nccl rank without mpirun).
        for n in (2, 4, 8):
            if int(match.group(1)) >= n:
                config.available_features.add("gpus-%d" % n)

# Tests that make a character device of their own (a copy of the null device,
# never the system's) need the right to mknod: root outside a restricted
# container.
def _can_mknod():
    with tempfile.TemporaryDirectory() as d:
        try:
            os.mknod(os.path.join(d, "null"), 0o600 | stat.S_IFCHR, os.makedev(1, 3))
            return True
        except OSError:
            return False


if _can_mknod():
    config.available_features.add("mknod")
