"""Ctrl-C during a threads run, and the mpi backend under mpirun."""
import os
import shutil
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import shardlin
from conftest import ROOT, assert_close, linear_module, random, reference


def chain_module(layers: int, n: int, rows: int) -> str:
    """`layers` row-wise linears in a row, all with the same weight: a long
    run with a collective per layer."""
    w = (f"!shardlin.sharded<tensor<{n}x{n}xf32>, "
         f"#shardlin.chunk<dim = 1, placements = [0, 1]>>")
    body = [f"func.func @main(%x: tensor<{rows}x{n}xf32>, %w: {w}, "
            f"%b: tensor<{n}xf32>) -> tensor<{rows}x{n}xf32> {{"]
    prev = "%x"
    for i in range(layers):
        body.append(f"  %y{i} = shardlin.linear {prev}, %w, %b : "
                    f"(tensor<{rows}x{n}xf32>, {w}, tensor<{n}xf32>) -> "
                    f"tensor<{rows}x{n}xf32>")
        prev = f"%y{i}"
    body.append(f"  return {prev} : tensor<{rows}x{n}xf32>\n}}")
    return "\n".join(body) + "\n"


def test_keyboard_interrupt_stops_a_threads_run(rng):
    n, rows = 256, 256
    program = shardlin.compile(chain_module(400, n, rows), strategy="activations")
    xs = [random(rng, (rows, n), "f32") for _ in range(2)]
    w = random(rng, (n, n), "f32") / n
    b = random(rng, (n,), "f32")
    start = time.perf_counter()
    program.run(xs, w, b)
    full = time.perf_counter() - start
    assert full > 0.2, f"the chain ran in {full:.3f} s: too short to interrupt"

    timer = threading.Timer(full / 10, os.kill, (os.getpid(), signal.SIGINT))
    start = time.perf_counter()
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        program.run(xs, w, b)
    stopped = time.perf_counter() - start
    timer.join()
    # Stopped at the next collective, well before the end.
    assert stopped < full * 0.75, f"interrupted run took {stopped:.3f} s of {full:.3f} s"
    # Python's SIGINT handler is back, and the next run works.
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    small = shardlin.compile(linear_module("f32"))
    xs4 = [random(rng, (5, 19), "f32") for _ in range(4)]
    w4, b4 = random(rng, (11, 19), "f32"), random(rng, (11,), "f32")
    assert_close(small.run(xs4, w4, b4), reference(xs4[0], w4, b4), "f32")


MPI_SCRIPT = r"""
import sys
import numpy as np
import shardlin
sys.path.insert(0, sys.argv[1])
from conftest import assert_close, linear_module, random, reference
program = shardlin.compile(linear_module("f64", placements=(1, 0)))
rng = np.random.default_rng(7)
xs = [random(rng, (5, 19), "f64") for _ in range(2)]
w, b = random(rng, (11, 19), "f64"), random(rng, (11,), "f64")
(y,), = program.run(xs, w, b, backend="mpi", per_rank=True)
rank = program.last_run_info.ranks[0]
assert_close(y, reference(xs[rank], w, b), "f64", f"rank {rank}")
print(f"rank {rank} ok", flush=True)
"""


def test_mpi_backend_under_mpirun(tmp_path):
    mpirun = os.environ.get("SHARDLIN_MPIEXEC") or shutil.which("mpirun")
    if not mpirun:
        pytest.skip("no mpirun")
    # return-sharded.mlir runs on 3 ranks: run the linear on 2 and it on 3.
    script = tmp_path / "mpi_run.py"
    script.write_text(MPI_SCRIPT)
    env = dict(os.environ)
    cmd = [mpirun, "--allow-run-as-root", "--oversubscribe", "-np", "2",
           "-x", "PYTHONPATH", sys.executable, str(script),
           str(ROOT / "python/tests")]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    # mpirun forwards each process's output as it comes: lines of two
    # processes may share a line.
    assert out.stdout.count("rank 0 ok") == 1 and out.stdout.count("rank 1 ok") == 1, out.stdout
    # A sharded result assembled on every process (3 ranks).
    script3 = tmp_path / "mpi_ret.py"
    script3.write_text(
        "import sys\nimport numpy as np\nimport shardlin\n"
        "ret = shardlin.compile(sys.argv[1])\n"
        "g = np.random.default_rng(8).uniform(-1, 1, (10, 7)).astype(np.float32)\n"
        "np.testing.assert_array_equal(ret.run(g, backend='mpi'), g)\n"
        "print('assembled ok', flush=True)\n")
    cmd = [mpirun, "--allow-run-as-root", "--oversubscribe", "-np", "3",
           "-x", "PYTHONPATH", sys.executable, str(script3),
           str(ROOT / "test/shardlin-run/return-sharded.mlir")]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.count("assembled ok") == 3
