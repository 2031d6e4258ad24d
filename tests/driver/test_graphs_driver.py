"""CUDA graphs through cuda-python's driver bindings (tests/driver/programs/cuda_python_graphs.py)
on a real emu server: capture, explicit graphs, exec changes, host functions and capture errors,
and what a graph launch costs: one call to the server per launch, the kernels replayed there."""
from __future__ import annotations

import subprocess
import sys

import pytest

from .driver_support import EXAMPLES, PROGRAMS, environment

KERNELS = 10


def test_graphs_through_cuda_python(driver_dir, server):
    pytest.importorskip("cuda.bindings.driver", reason="cuda-python not installed (pip install cuda-python)")
    proc = subprocess.run([sys.executable, str(PROGRAMS / "cuda_python_graphs.py"), str(EXAMPLES / "vector_add.ptx"),
                           str(KERNELS)], capture_output=True, text=True, env=environment(driver_dir, server),
                          timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert not [line for line in lines if line.startswith("FAIL")], proc.stdout + proc.stderr
    assert lines[-1] == "PASS graphs through cuda-python"
    facts = dict(line.rsplit(" ", 1) for line in lines if not line.startswith(("PASS", "FAIL")))
    assert facts["captured nodes"] == str(KERNELS + 2)           # the memset, the kernels, the copy
    # two launches of the captured graph: two calls, every kernel replayed by the server, none sent alone
    assert facts["calls.graph_launch"] == "2"
    assert facts["calls.launch"] == "0"
    assert facts["kernels"] == str(2 * KERNELS)
