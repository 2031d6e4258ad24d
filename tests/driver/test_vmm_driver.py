"""The driver's virtual memory management (cuMemCreate, cuMemAddressReserve, cuMemMap, cuMemSetAccess,
cuMemUnmap, cuMemRelease, cuMemRetainAllocationHandle, cuMemAddressFree,
cuMemGetAllocationGranularity): cuda-python on the cricket libcuda.so.1 against a real emu server,
with a kernel and copies across two mapped physical allocations and the documented errors."""
from __future__ import annotations

import subprocess
import sys

import pytest

from .test_driver_end_to_end import PROGRAMS, environment

pytestmark = pytest.mark.nvcc


@pytest.fixture(scope="module")
def vadd_ptx(tmp_path_factory):
    out = tmp_path_factory.mktemp("vmm") / "vadd.ptx"
    subprocess.run(["nvcc", "-ptx", "-arch=sm_75", "-o", str(out), str(PROGRAMS / "vadd_kernel.cu")], check=True)
    return out


def test_driver_api_virtual_memory_management(driver_dir, server, vadd_ptx):
    pytest.importorskip("cuda.bindings.driver", reason="cuda-python not installed (pip install cuda-python)")
    proc = subprocess.run([sys.executable, str(PROGRAMS / "cuda_python_vmm.py"), str(vadd_ptx)],
                          capture_output=True, text=True, env=environment(driver_dir, server), timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "FAIL" not in proc.stdout and "PASS: virtual memory management" in proc.stdout, proc.stdout
    assert proc.stdout.count("PASS") == 13
