"""OpenBLAS's kernels in a Python process (shardlin/_blas.py): the package
sets OPENBLAS_CORETYPE before the extension loads OpenBLAS, and OpenBLAS
then runs the kernels it names."""
import os
import subprocess
import sys

from shardlin import _blas

AVX512 = {"avx512f", "avx512bw", "avx512dq", "avx512vl", "avx2", "fma"}


def test_rules():
    intel = lambda flags: {"vendor": "GenuineIntel", "flags": set(flags)}
    assert _blas.suggested_core_type(intel(AVX512)) == "SkylakeX"
    assert _blas.suggested_core_type(intel({"avx2", "fma", "avx512f"})) == "Haswell"
    assert _blas.suggested_core_type(intel({"avx2"})) is None
    assert _blas.suggested_core_type(intel({"sse3"})) is None
    assert _blas.suggested_core_type(
        {"vendor": "AuthenticAMD", "flags": AVX512}) is None
    assert _blas.suggested_core_type(None) is None


def test_the_users_choice_is_kept():
    env = {"OPENBLAS_CORETYPE": "Prescott"}
    assert _blas.choose_kernels(env) is None
    assert env == {"OPENBLAS_CORETYPE": "Prescott"}
    env = {"SHARDLIN_BLAS_CORETYPE": "keep"}
    assert _blas.choose_kernels(env) is None
    assert "OPENBLAS_CORETYPE" not in env


def test_already_loaded_openblas_is_left_alone():
    # This process imported shardlin, so OpenBLAS is mapped: setting the
    # variable now would change nothing.
    env = {}
    assert _blas.choose_kernels(env) is None
    assert env == {}


def _import_in_child(extra_env):
    env = {k: v for k, v in os.environ.items()
           if k not in ("OPENBLAS_CORETYPE", "SHARDLIN_BLAS_CORETYPE")}
    env.update(extra_env)
    code = ("import os, shardlin; "
            "print(os.environ.get('OPENBLAS_CORETYPE', '-'), "
            "shardlin.blas_kernels())")
    out = subprocess.run([sys.executable, "-c", code], env=env, check=True,
                         capture_output=True, text=True).stdout.split()
    return out[0], out[1]


def test_openblas_runs_the_kernels_set():
    expected = _blas.suggested_core_type(_blas._cpu()) or "-"
    set_to, in_use = _import_in_child({})
    assert set_to == expected
    if set_to != "-":
        assert in_use.lower() == set_to.lower(), (set_to, in_use)
    kept_to, _ = _import_in_child({"SHARDLIN_BLAS_CORETYPE": "keep"})
    assert kept_to == "-"
    forced, in_use = _import_in_child({"OPENBLAS_CORETYPE": "Haswell"}) \
        if {"avx2", "fma"} <= (_blas._cpu() or {}).get("flags", set()) \
        else ("Haswell", "Haswell")
    assert (forced, in_use.lower()) == ("Haswell", "haswell")
