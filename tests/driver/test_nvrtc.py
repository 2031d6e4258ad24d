"""NVRTC (pip nvidia-cuda-nvrtc) with the cricket libcuda.so.1 in front: it calls cuInit and asks
for its own export table da9151d3, which the library refuses (slots returning 0 would break
nvrtcGetCUBIN); compiling to PTX and to a cubin still works. Needs cuda-python and the NVRTC wheel."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytest.importorskip("cuda.bindings.nvrtc", reason="cuda-python not installed")

PROGRAM = r"""
import sys
from cuda.bindings import nvrtc
try:
    err, prog = nvrtc.nvrtcCreateProgram(b'extern "C" __global__ void k(float *x) { x[threadIdx.x] *= 2.0f; }',
                                         b"k.cu", 0, [], [])
except Exception as exc:              # the NVRTC library itself is missing
    print("no-nvrtc", exc)
    sys.exit(0)
print("compile", nvrtc.nvrtcCompileProgram(prog, 1, [b"--gpu-architecture=sm_75"])[0].name)
err, size = nvrtc.nvrtcGetCUBINSize(prog)
cubin = b" " * size
print("cubin", nvrtc.nvrtcGetCUBIN(prog, cubin)[0].name, cubin[:4] == b"\x7fELF")
err, size = nvrtc.nvrtcGetPTXSize(prog)
ptx = b" " * size
print("ptx", nvrtc.nvrtcGetPTX(prog, ptx)[0].name, b".entry k" in ptx)
"""


def test_nvrtc_compiles_with_its_table_refused(driver_dir):
    env = {k: v for k, v in os.environ.items() if not k.startswith("CRICKET_DRIVER_")}
    env.update(LD_LIBRARY_PATH=str(driver_dir), CRICKET_LOG="INFO")
    proc = subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    if proc.stdout.startswith("no-nvrtc"):
        pytest.skip("NVRTC library not installed (pip install nvidia-cuda-nvrtc)")
    assert proc.stdout.splitlines() == ["compile NVRTC_SUCCESS", "cubin NVRTC_SUCCESS True", "ptx NVRTC_SUCCESS True"]
    assert "da9151d3-3ae6-cc41-a5c0-4f26d533e328}: unknown table, refused" in proc.stderr
