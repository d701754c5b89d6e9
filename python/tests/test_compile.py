"""shardlin.compile: the pipeline of shardlin-run, its diagnostics, Program."""
import pytest

import shardlin
from conftest import ROOT, linear_module


def test_compile_file_and_text_agree():
    path = ROOT / "examples/quickstart/linear.mlir"
    from_path = shardlin.compile(path)
    from_text = shardlin.compile(path.read_text())
    assert from_path.world_size == 4
    assert from_path.name == "main"
    # The program text differs only in the locations' file names.
    assert from_path.text.replace(str(path), "F") == from_text.text.replace("<string>", "F")
    assert "gemm" in from_path.text
    ops = [c["op"] for c in from_path.collectives]
    assert ops and set(ops) <= {"all_gather", "all_to_all", "reduce_scatter", "all_reduce"}
    assert "linear.mlir" in from_path.collectives[0]["location"]
    assert "sharded" in repr(from_path) and "4 ranks" in repr(from_path)


def test_strategy_and_explain():
    auto = shardlin.compile(linear_module("f32"))
    assert "lowered row-wise" in auto.explain()
    assert "activations: est." in auto.explain()
    forced = shardlin.compile(linear_module("f32"), strategy="gather-weight")
    assert "forced" in forced.explain()
    activations = shardlin.compile(linear_module("f32"), strategy="activations")
    assert "gather-weight" in forced.text and "gather-weight" not in activations.text
    assert ([c["op"] for c in forced.collectives]
            != [c["op"] for c in activations.collectives])


def test_syntax_error_is_located():
    with pytest.raises(shardlin.CompileError) as e:
        shardlin.compile("func.func @main() {\n  %y = shardlin.nope\n}\n")
    diags = e.value.diagnostics
    assert diags and all(len(d) == 3 for d in diags)
    loc, severity, message = diags[0]
    assert severity == "error" and loc.startswith("<string>:2:")
    assert "shardlin.nope" in message or "nope" in str(e.value)


def test_verifier_error_collects_every_message():
    bad = linear_module("f32").replace("tensor<5x11xf32> {", "tensor<5x12xf32> {", 1)
    with pytest.raises(shardlin.CompileError) as e:
        shardlin.compile(bad)
    assert any(sev == "error" for _, sev, _ in e.value.diagnostics)
    assert all(loc.startswith("<string>") for loc, _, _ in e.value.diagnostics)


def test_missing_file_and_bad_options():
    with pytest.raises(shardlin.CompileError, match="no-such.mlir"):
        shardlin.compile("no-such.mlir")
    with pytest.raises(TypeError, match="unknown option 'strategie'"):
        shardlin.compile(linear_module("f32"), strategie="auto")
    with pytest.raises(shardlin.CompileError, match="strategy"):
        shardlin.compile(linear_module("f32"), strategy="fastest")


def test_world_size_against_grid():
    path = ROOT / "test/shardlin-run/Inputs/upstream-linears.mlir"
    with pytest.raises(shardlin.CompileError, match="4"):
        shardlin.compile(path, entry="col_uneven", world_size=3)
    assert shardlin.compile(path, entry="col_uneven").world_size == 4
