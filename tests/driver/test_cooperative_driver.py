"""cuLaunchCooperativeKernel through cuda-python on the cricket libcuda.so.1, against a real server
(emu): a kernel with grid.sync() (PTX built by nvcc at test time) sees the other blocks' writes
after the barrier; CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH is 1; a grid of one block more than the
device holds resident fails with CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE and launches nothing.
Needs the `cuda` extra (cuda-python)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("cuda.bindings.driver", reason="cuda-python not installed (pip install -e '.[cuda]')")

KERNEL = Path(__file__).resolve().parent / "programs" / "grid_sync_kernel.cu"

PROGRAM = r"""
import ctypes, json, sys
import numpy as np
from cuda.bindings import driver as d
def ok(result):
    err, *values = result if isinstance(result, tuple) else (result,)
    assert err == d.CUresult.CUDA_SUCCESS, err
    return values[0] if len(values) == 1 else values
ok(d.cuInit(0))
dev = ok(d.cuDeviceGet(0))
ctx = ok(d.cuDevicePrimaryCtxRetain(dev))
ok(d.cuCtxSetCurrent(ctx))
out = {"attribute": ok(d.cuDeviceGetAttribute(d.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH, dev))}
mod = ok(d.cuModuleLoadData(open(sys.argv[1], "rb").read() + b"\0"))
fn = ok(d.cuModuleGetFunction(mod, b"shift_after_sync"))
sms = ok(d.cuDeviceGetAttribute(d.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev))
threads = 256
blocks = sms * ok(d.cuOccupancyMaxActiveBlocksPerMultiprocessor(fn, threads, 0))
n = blocks * threads
data, res = ok(d.cuMemAlloc(4 * n)), ok(d.cuMemAlloc(4 * n))
ok(d.cuMemsetD32(res, 0xFFFFFFFF, n))
count = np.array([n], dtype=np.int32)
ptrs = [np.array([int(data)], dtype=np.uint64), np.array([int(res)], dtype=np.uint64), count]
params = np.array([p.ctypes.data for p in ptrs], dtype=np.uint64)
err, = d.cuLaunchCooperativeKernel(fn, blocks + 1, 1, 1, threads, 1, 1, 0, 0, params.ctypes.data)
out["too_large"] = err.name
ok(d.cuCtxSynchronize())
host = np.empty(n, dtype=np.int32)
ok(d.cuMemcpyDtoH(host.ctypes.data, res, 4 * n))
out["untouched"] = bool((host == -1).all())
ok(d.cuLaunchCooperativeKernel(fn, blocks, 1, 1, threads, 1, 1, 0, 0, params.ctypes.data))
ok(d.cuCtxSynchronize())
ok(d.cuMemcpyDtoH(host.ctypes.data, res, 4 * n))
out["blocks"] = blocks
out["right"] = bool((host == (np.arange(n) + 1) % n).all())
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def ptx(tmp_path_factory) -> Path:
    if not shutil.which("nvcc"):
        pytest.skip("nvcc (CUDA 13) not found on PATH")
    out = tmp_path_factory.mktemp("coop") / "grid_sync.ptx"
    subprocess.run(["nvcc", "-ptx", "-arch=sm_75", "-o", str(out), str(KERNEL)], check=True)
    return out


@pytest.mark.nvcc
def test_cooperative_launch_synchronises_the_grid_and_refuses_too_many_blocks(driver_dir, server, ptx):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CRICKET_DRIVER_", "CUDA_PYTHON_"))}
    env.update(LD_LIBRARY_PATH=str(driver_dir), CRICKET_SERVER=server.address)
    proc = subprocess.run([sys.executable, "-c", PROGRAM, str(ptx)], capture_output=True, text=True, env=env,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.splitlines()[-1])
    assert out["attribute"] == 1
    assert out["too_large"] == "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE" and out["untouched"]
    assert out["blocks"] > 1 and out["right"]
