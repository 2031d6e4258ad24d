"""The driver API of two devices through cuda-python on the cricket libcuda.so.1, against a server
with two emu devices: peers as documented for devices that cannot access each other
(cuDeviceCanAccessPeer 0, cuCtxEnablePeerAccess CUDA_ERROR_PEER_ACCESS_UNSUPPORTED, disabling
CUDA_ERROR_PEER_ACCESS_NOT_ENABLED, the same device CUDA_ERROR_INVALID_DEVICE), cuMemcpyPeer
between the devices, PCI bus ids and stream priorities. Needs the `cuda` extra (cuda-python)."""
from __future__ import annotations


import pytest

from .cuda_python_support import run_program

pytest.importorskip("cuda.bindings.driver", reason="cuda-python not installed (pip install -e '.[cuda]')")

PROGRAM = r"""
import json
from cuda.bindings import driver as d
out = {}
def call(name, *args):
    err, *values = (lambda r: r if isinstance(r, tuple) else (r,))(getattr(d, name)(*args))
    out.setdefault(name, []).append([err.name, *[v if isinstance(v, (int, bytes)) else int(v) for v in values]])
    return values[0] if values else None
call("cuInit", 0)
call("cuDeviceGetCount")
dev = [call("cuDeviceGet", i) for i in (0, 1)]
ctx = [call("cuDevicePrimaryCtxRetain", dv) for dv in dev]
call("cuDeviceCanAccessPeer", dev[0], dev[1])
call("cuDeviceGetP2PAttribute", d.CUdevice_P2PAttribute.CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED, dev[0], dev[1])
call("cuCtxSetCurrent", ctx[0])
call("cuCtxEnablePeerAccess", ctx[1], 0)
call("cuCtxEnablePeerAccess", ctx[0], 0)
call("cuCtxDisablePeerAccess", ctx[1])
n = 4096
src = call("cuMemAlloc", n)
data = bytes(range(256)) * (n // 256)
call("cuMemcpyHtoD", src, data, n)
call("cuCtxSetCurrent", ctx[1])
dst = call("cuMemAlloc", n)
call("cuMemcpyPeer", dst, ctx[1], src, ctx[0], n)
back = bytearray(n)
call("cuMemcpyDtoH", back, dst, n)
out["same"] = bytes(back) == data
out["ranges"] = [int(src) >> 37, int(dst) >> 37]
ids = [call("cuDeviceGetPCIBusId", 32, dv) for dv in dev]
out["found"] = [int(call("cuDeviceGetByPCIBusId", i)) for i in ids]
call("cuCtxGetStreamPriorityRange")
s = call("cuStreamCreateWithPriority", 0, -100)
call("cuStreamGetPriority", s)
call("cuStreamGetPriority", 0)
print(json.dumps(out, default=lambda b: b.decode(errors="replace")))
"""


@pytest.fixture(scope="module")
def two_device_server():
    from cricket.client.local_server import LocalServer
    local = LocalServer(["emu=devices=2,memory=256M"])
    try:
        yield local
    finally:
        local.stop()


def test_driver_peers_copies_bus_ids_and_priorities(driver_dir, two_device_server):
    out = run_program(PROGRAM, driver_dir, two_device_server.address)
    assert out["cuDeviceGetCount"] == [["CUDA_SUCCESS", 2]]
    assert out["cuDeviceCanAccessPeer"] == [["CUDA_SUCCESS", 0]]
    assert out["cuDeviceGetP2PAttribute"] == [["CUDA_SUCCESS", 0]]
    assert [r[0] for r in out["cuCtxEnablePeerAccess"]] == ["CUDA_ERROR_PEER_ACCESS_UNSUPPORTED",
                                                           "CUDA_ERROR_INVALID_DEVICE"]
    assert out["cuCtxDisablePeerAccess"] == [["CUDA_ERROR_PEER_ACCESS_NOT_ENABLED"]]
    assert out["cuMemcpyPeer"] == [["CUDA_SUCCESS"]] and out["same"]
    assert out["ranges"][0] != out["ranges"][1]            # each device its own address range
    assert out["found"] == [0, 1]
    least, greatest = out["cuCtxGetStreamPriorityRange"][0][1:]
    assert greatest < least
    # a priority past the greatest is clamped to it; the default stream has the least
    assert out["cuStreamGetPriority"] == [["CUDA_SUCCESS", greatest], ["CUDA_SUCCESS", least]]
