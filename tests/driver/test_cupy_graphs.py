"""CuPy's CUDA graphs (tests/driver/programs/cupy_graph.py): ``stream.begin_capture()`` and
``end_capture()`` on CuPy's embedded static cudart reach the driver face's capture; the graph runs
only at its launches, and each launch computes from the data as it is then (NumPy's reference)."""
from __future__ import annotations

import subprocess
import sys

import pytest

from .driver_support import PROGRAMS, environment


def test_cupy_graph_capture_and_launch(driver_dir, server):
    pytest.importorskip("cupy", reason="cupy-cuda13x not installed")
    env = environment(driver_dir, server, CUPY_COMPILE_WITH_PTX="1")
    proc = subprocess.run([sys.executable, str(PROGRAMS / "cupy_graph.py")], capture_output=True, text=True,
                          env=env, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    assert "Exception ignored" not in proc.stderr           # the graph's destructor at exit succeeds
    got = dict(line.split(" ", 1) for line in proc.stdout.splitlines())
    assert got == {"capturing": "True", "capturing_after": "False", "not_run_at_capture": "True",
                   "launch1": "True", "launch2": "True"}
