"""cuLaunchCooperativeKernel through cuda-python on the cricket libcuda.so.1, against a real server
(emu): a kernel with grid.sync() (PTX built by nvcc at test time) sees the other blocks' writes
after the barrier; CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH is 1; a grid of one block more than the
device holds resident fails with CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE and launches nothing.
Needs the `cuda` extra (cuda-python)."""
from __future__ import annotations

from pathlib import Path

import pytest

from .cuda_python_support import PRELUDE, build_ptx, run_program

pytest.importorskip("cuda.bindings.driver", reason="cuda-python not installed (pip install -e '.[cuda]')")

KERNEL = Path(__file__).resolve().parent / "programs" / "grid_sync_kernel.cu"

PROGRAM = PRELUDE + r"""
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
    return build_ptx(tmp_path_factory, KERNEL)


@pytest.mark.nvcc
def test_cooperative_launch_synchronises_the_grid_and_refuses_too_many_blocks(driver_dir, server, ptx):
    out = run_program(PROGRAM, driver_dir, server.address, str(ptx))
    assert out["attribute"] == 1
    assert out["too_large"] == "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE" and out["untouched"]
    assert out["blocks"] > 1 and out["right"]
