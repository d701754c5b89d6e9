"""OpenBLAS's kernel set for this CPU, chosen before the extension loads it.

Debian 12's OpenBLAS (0.3.21, DYNAMIC_ARCH) picks its kernels once, when it
is loaded, and falls back to its Prescott (SSE3) kernels on a CPU model it
does not know: about a quarter of the SkylakeX kernels' sgemm speed
(docs/performance.md, "OpenBLAS's kernels"). OPENBLAS_CORETYPE overrides the
choice, but only in the environment OpenBLAS is loaded with. The command
line tools re-execute themselves with it set (reexecForBlasKernels); a
Python process cannot, so the package sets it before ``import _shardlin``
loads OpenBLAS, from the CPU's own flags:

- an Intel CPU with AVX-512 F/BW/DQ/VL: SkylakeX (CooperLake's and
  SapphireRapids' sgemm/dgemm are SkylakeX's; the runtime calls only those);
- an Intel CPU with AVX2 and FMA: Haswell;
- anything else (AMD's Zen families, which OpenBLAS names itself): left to
  OpenBLAS.

A user's own OPENBLAS_CORETYPE is kept, SHARDLIN_BLAS_CORETYPE=keep keeps
OpenBLAS's choice, and nothing is set when OpenBLAS is already loaded in the
process (the variable would have no effect). ``shardlin.blas_kernels()``
names the kernels in use.
"""
from __future__ import annotations

import os
from typing import Dict, Optional, Set


def _cpu() -> Optional[Dict[str, object]]:
    """The first processor's vendor and flags from /proc/cpuinfo."""
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
            text = f.read(1 << 16)
    except OSError:
        return None
    vendor, flags = "", set()  # type: str, Set[str]
    for line in text.splitlines():
        key, _, value = line.partition(":")
        key = key.strip()
        if key == "vendor_id" and not vendor:
            vendor = value.strip()
        elif key == "flags" and not flags:
            flags = set(value.split())
        if vendor and flags:
            break
    return {"vendor": vendor, "flags": flags}


def suggested_core_type(cpu: Optional[Dict[str, object]]) -> Optional[str]:
    """The OPENBLAS_CORETYPE to load OpenBLAS with, or None for its own."""
    if not cpu or cpu.get("vendor") != "GenuineIntel":
        return None
    flags = cpu.get("flags") or set()
    if {"avx512f", "avx512bw", "avx512dq", "avx512vl"} <= flags:  # type: ignore[operator]
        return "SkylakeX"
    if {"avx2", "fma"} <= flags:  # type: ignore[operator]
        return "Haswell"
    return None


def _openblas_loaded() -> bool:
    try:
        with open("/proc/self/maps", encoding="ascii", errors="replace") as f:
            return any("libopenblas" in line for line in f)
    except OSError:
        return False


def choose_kernels(environ=os.environ) -> Optional[str]:
    """Sets OPENBLAS_CORETYPE in ``environ`` where the rules above say so;
    returns what it set (None when it left the choice alone)."""
    if "OPENBLAS_CORETYPE" in environ:
        return None
    if environ.get("SHARDLIN_BLAS_CORETYPE") == "keep":
        return None
    if _openblas_loaded():
        return None
    core = suggested_core_type(_cpu())
    if core:
        environ["OPENBLAS_CORETYPE"] = core
    return core
