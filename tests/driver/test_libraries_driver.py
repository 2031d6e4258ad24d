"""The driver API's library calls through cuda-python on the cricket libcuda.so.1, against a real
server (emu): cuLibraryLoadData and cuLibraryLoadFromFile (PTX built by nvcc at test time),
cuLibraryGetKernelCount, cuLibraryEnumerateKernels, cuKernelGetName, cuLibraryGetGlobal, a launch
through cuKernelGetFunction, and the documented errors (an unknown kernel name
CUDA_ERROR_NOT_FOUND, a device that does not exist CUDA_ERROR_INVALID_DEVICE).
Needs the `cuda` extra (cuda-python)."""
from __future__ import annotations

from pathlib import Path

import pytest

from .cuda_python_support import PRELUDE, build_ptx, run_program

pytest.importorskip("cuda.bindings.driver", reason="cuda-python not installed (pip install -e '.[cuda]')")

KERNELS = Path(__file__).resolve().parents[2] / "examples" / "library_kernels.cu"

PROGRAM = PRELUDE + r"""
ok(d.cuCtxSetCurrent(ok(d.cuDevicePrimaryCtxRetain(dev))))
out = {}
lib = ok(d.cuLibraryLoadData(open(sys.argv[1], "rb").read() + b"\0", None, None, 0, None, None, 0))
from_file = ok(d.cuLibraryLoadFromFile(sys.argv[1].encode(), None, None, 0, None, None, 0))
count = ok(d.cuLibraryGetKernelCount(lib))
kernels = ok(d.cuLibraryEnumerateKernels(count, lib))
out["names"] = sorted(ok(d.cuKernelGetName(k)).decode() for k in kernels)
out["missing"] = d.cuLibraryGetKernel(from_file, b"no_such_kernel")[0].name
out["bad_device"] = d.cuKernelSetAttribute(
    d.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 0, kernels[0], 99)[0].name
offset, size = ok(d.cuLibraryGetGlobal(from_file, b"offset"))
value = np.array([1000], dtype=np.int32)
ok(d.cuMemcpyHtoD(offset, value.ctypes.data, 4))
fn = ok(d.cuKernelGetFunction(ok(d.cuLibraryGetKernel(from_file, b"add_offset"))))
n = 64
y = ok(d.cuMemAlloc(4 * n))
ok(d.cuMemsetD32(y, 5, n))
args = [np.array([int(y)], dtype=np.uint64), np.array([n], dtype=np.int32)]
params = np.array([a.ctypes.data for a in args], dtype=np.uint64)
ok(d.cuLaunchKernel(fn, 1, 1, 1, n, 1, 1, 0, 0, params.ctypes.data, 0))
host = np.empty(n, dtype=np.int32)
ok(d.cuMemcpyDtoH(host.ctypes.data, y, 4 * n))
out["size"] = int(size)
out["added"] = bool((host == 1005).all())
ok(d.cuLibraryUnload(lib))
ok(d.cuLibraryUnload(from_file))
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def ptx(tmp_path_factory) -> Path:
    return build_ptx(tmp_path_factory, KERNELS, "-rdc=true")


@pytest.mark.nvcc
def test_library_kernels_are_counted_named_and_launched(driver_dir, server, ptx):
    out = run_program(PROGRAM, driver_dir, server.address, str(ptx))
    assert out["names"] == ["add_offset", "scale"]
    assert out["missing"] == "CUDA_ERROR_NOT_FOUND"
    assert out["bad_device"] == "CUDA_ERROR_INVALID_DEVICE"
    assert out["size"] == 4 and out["added"]
