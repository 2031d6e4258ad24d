"""Mapped pinned memory through the driver API (cuMemHostAlloc with CU_MEMHOSTALLOC_DEVICEMAP,
cuMemHostRegister with CU_MEMHOSTREGISTER_DEVICEMAP, cuMemHostGetDevicePointer, cuMemHostGetFlags,
pointer attributes): cuda-python on the cricket libcuda.so.1 against a real emu server. The
runtime-API twins run in examples/mapped_memory.cu (test_examples_static.py, test_client_examples.py)."""
from __future__ import annotations

import subprocess
import sys

import pytest

from .driver_support import PROGRAMS, environment

pytestmark = pytest.mark.nvcc


def test_driver_api_mapped_memory_is_coherent_with_kernels(driver_dir, server, vadd_ptx):
    pytest.importorskip("cuda.bindings.driver", reason="cuda-python not installed (pip install cuda-python)")
    proc = subprocess.run([sys.executable, str(PROGRAMS / "cuda_python_mapped.py"), str(vadd_ptx)],
                          capture_output=True, text=True, env=environment(driver_dir, server), timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "FAIL" not in proc.stdout and "PASS: mapped memory" in proc.stdout, proc.stdout
    assert proc.stdout.count("PASS") == 7
