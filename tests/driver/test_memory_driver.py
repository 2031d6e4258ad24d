"""Issue 18's memory through the driver API, with cuda-python on the cricket libcuda.so.1 against
real emu servers: memory pools and stream-ordered allocation (a server with --session-memory 4M, to
show pools count against it), managed memory, and virtual memory management. Each program prints a
PASS or FAIL line per check (tests/driver/programs/cuda_python_{mempool,managed,vmm}.py). The
runtime-API twins are examples/{stream_ordered_memory,managed_memory,vmm_growable}.cu (static cudart:
test_examples_static.py; shared: tests/client_runtime/test_memory_examples.py)."""
from __future__ import annotations

import subprocess
import sys

import pytest

from .driver_support import PROGRAMS, environment

pytestmark = pytest.mark.nvcc


@pytest.fixture(scope="module")
def budget_server(start_server):
    return start_server(["emu"], extra_args=["--session-memory", "4M"])


def _run(program: str, env: dict[str, str], *args: str) -> str:
    pytest.importorskip("cuda.bindings.driver", reason="cuda-python not installed (pip install cuda-python)")
    proc = subprocess.run([sys.executable, str(PROGRAMS / program), *args], capture_output=True, text=True,
                          env=env, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "FAIL" not in proc.stdout, proc.stdout
    return proc.stdout


def test_memory_pools_within_the_session_budget(driver_dir, budget_server):
    out = _run("cuda_python_mempool.py", environment(driver_dir, budget_server))
    assert out.count("PASS") == 16 and out.endswith("PASS: memory pools\n"), out


def test_managed_memory_is_coherent_with_kernels(driver_dir, server, vadd_ptx):
    out = _run("cuda_python_managed.py", environment(driver_dir, server), str(vadd_ptx))
    assert out.count("PASS") == 11 and out.endswith("PASS: managed memory\n"), out


def test_virtual_memory_management(driver_dir, server, vadd_ptx):
    out = _run("cuda_python_vmm.py", environment(driver_dir, server), str(vadd_ptx))
    assert out.count("PASS") == 13 and out.endswith("PASS: virtual memory management\n"), out
