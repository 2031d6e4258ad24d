"""Memory pools and stream-ordered allocation through the driver API (cuMemAllocAsync,
cuMemPoolCreate, attributes, trimming, the current pool, the session's memory budget): cuda-python
on the cricket libcuda.so.1 against a real emu server started with --session-memory. The runtime-API
twins run in examples/stream_ordered_memory.cu (static cudart: test_examples_static.py; shared:
tests/client_runtime/test_memory_examples.py)."""
from __future__ import annotations

import subprocess
import sys

import pytest

from .test_driver_end_to_end import PROGRAMS, environment


@pytest.fixture(scope="module")
def budget_server():
    from cricket.client.local_server import LocalServer
    local = LocalServer(["emu"], extra_args=["--session-memory", "4M"])
    try:
        yield local
    finally:
        local.stop()


def test_driver_api_memory_pools(driver_dir, budget_server):
    pytest.importorskip("cuda.bindings.driver", reason="cuda-python not installed (pip install cuda-python)")
    proc = subprocess.run([sys.executable, str(PROGRAMS / "cuda_python_mempool.py")],
                          capture_output=True, text=True, env=environment(driver_dir, budget_server), timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "FAIL" not in proc.stdout and "PASS: memory pools" in proc.stdout, proc.stdout
    assert proc.stdout.count("PASS") == 16
