"""The driver API of two devices through cuda-python on the cricket libcuda.so.1, against a server
with two emu devices: peer access as documented (cuDeviceCanAccessPeer 1, the link's attributes,
enabling twice CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED, disabling what is not enabled
CUDA_ERROR_PEER_ACCESS_NOT_ENABLED, the same device CUDA_ERROR_INVALID_DEVICE) and a kernel on
device 0 reading device 1's memory once access is enabled; cuMemcpyPeer between the devices, PCI
bus ids and stream priorities. Needs the `cuda` extra (cuda-python)."""
from __future__ import annotations


import pytest

from .cuda_python_support import run_program

pytest.importorskip("cuda.bindings.driver", reason="cuda-python not installed (pip install -e '.[cuda]')")

# dst[i] = 2 * src[i] for i < n
TWICE_PTX = r"""
.version 7.5
.target sm_75
.address_size 64
.visible .entry twice(.param .u64 dst, .param .u64 src, .param .u32 n)
{
    .reg .pred %p;
    .reg .b32 %r<7>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [dst];
    ld.param.u64 %rd2, [src];
    ld.param.u32 %r1, [n];
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mov.u32 %r4, %tid.x;
    mad.lo.s32 %r5, %r2, %r3, %r4;
    setp.ge.u32 %p, %r5, %r1;
    @%p bra DONE;
    mul.wide.u32 %rd5, %r5, 4;
    add.s64 %rd6, %rd2, %rd5;
    ld.global.u32 %r6, [%rd6];
    shl.b32 %r6, %r6, 1;
    add.s64 %rd7, %rd1, %rd5;
    st.global.u32 [%rd7], %r6;
DONE:
    ret;
}
"""

PROGRAM = r"""
import ctypes, json, sys
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
call("cuDeviceCanAccessPeer", dev[0], dev[0])
A = d.CUdevice_P2PAttribute
for a in (A.CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED, A.CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED):
    call("cuDeviceGetP2PAttribute", a, dev[0], dev[1])
call("cuCtxSetCurrent", ctx[1])
n = 4096
theirs = call("cuMemAlloc", n)
call("cuMemcpyHtoD", theirs, bytes(range(256)) * (n // 256), n)
call("cuCtxSetCurrent", ctx[0])
call("cuCtxDisablePeerAccess", ctx[1])
call("cuCtxEnablePeerAccess", ctx[1], 0)
call("cuCtxEnablePeerAccess", ctx[1], 0)
call("cuCtxEnablePeerAccess", ctx[0], 0)
mine = call("cuMemAlloc", n)
kernel = call("cuModuleGetFunction", call("cuModuleLoadData", sys.argv[1].encode() + b"\0"), b"twice")
args = ((int(mine), int(theirs), n // 4), (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint))
call("cuLaunchKernel", kernel, n // 4 // 128, 1, 1, 128, 1, 1, 0, 0, args, 0)
call("cuCtxSynchronize")
got = bytearray(n)
call("cuMemcpyDtoH", got, mine, n)
want = [2 * w for w in memoryview(bytes(range(256)) * (n // 256)).cast("I")]
out["twice"] = list(memoryview(bytes(got)).cast("I")) == [w & 0xFFFFFFFF for w in want]
call("cuCtxDisablePeerAccess", ctx[1])
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
def two_device_server(start_server):
    return start_server(["emu=devices=2,memory=256M"])


def test_driver_peers_copies_bus_ids_and_priorities(driver_dir, two_device_server):
    out = run_program(PROGRAM, driver_dir, two_device_server.address, TWICE_PTX)
    assert out["cuDeviceGetCount"] == [["CUDA_SUCCESS", 2]]
    assert out["cuDeviceCanAccessPeer"] == [["CUDA_SUCCESS", 1], ["CUDA_SUCCESS", 0]]   # a device and itself: 0
    assert out["cuDeviceGetP2PAttribute"] == [["CUDA_SUCCESS", 1], ["CUDA_SUCCESS", 1]]
    assert [r[0] for r in out["cuCtxEnablePeerAccess"]] == ["CUDA_SUCCESS", "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED",
                                                           "CUDA_ERROR_INVALID_DEVICE"]
    assert [r[0] for r in out["cuCtxDisablePeerAccess"]] == ["CUDA_ERROR_PEER_ACCESS_NOT_ENABLED", "CUDA_SUCCESS"]
    # the kernel on device 0 read device 1's memory
    assert out["cuLaunchKernel"] == [["CUDA_SUCCESS"]] and out["cuCtxSynchronize"] == [["CUDA_SUCCESS"]]
    assert out["twice"]
    assert out["cuMemcpyPeer"] == [["CUDA_SUCCESS"]] and out["same"]
    assert out["ranges"][0] != out["ranges"][1]            # each device its own address range
    assert out["found"] == [0, 1]
    least, greatest = out["cuCtxGetStreamPriorityRange"][0][1:]
    assert greatest < least
    # a priority past the greatest is clamped to it; the default stream has the least
    assert out["cuStreamGetPriority"] == [["CUDA_SUCCESS", greatest], ["CUDA_SUCCESS", least]]
