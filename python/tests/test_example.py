"""examples/python/compile_and_run.py runs and checks itself."""
import subprocess
import sys

from conftest import ROOT


def test_compile_and_run_example():
    out = subprocess.run([sys.executable, str(ROOT / "examples/python/compile_and_run.py")],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "4 ranks match the float64 reference" in out.stdout
    assert "refused: status 1 (invalid argument)" in out.stdout
