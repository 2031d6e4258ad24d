"""Mapped pinned memory through the driver API with cuda-python: cuMemHostAlloc with
CU_MEMHOSTALLOC_DEVICEMAP and cuMemHostRegister with CU_MEMHOSTREGISTER_DEVICEMAP, their flags and
device pointers, pointer attributes, and a kernel (vadd from the PTX image given on the command
line) reading and writing them. Prints PASS or FAIL lines."""
import ctypes
import sys

import numpy as np
from cuda.bindings import driver as d

from driver_checks import check, finish, report

DEVICEMAP, PORTABLE = 0x2, 0x1          # CU_MEMHOSTALLOC_* (CU_MEMHOSTREGISTER_DEVICEMAP is 0x2 too)


def floats(address, count):
    return np.frombuffer((ctypes.c_float * count).from_address(address), dtype=np.float32)


def vadd(kernel, a, b, c, n, extra=False):
    """The kernel's parameters as kernelParams, or packed in an ``extra`` buffer."""
    grid = (n + 127) // 128
    if not extra:
        types = (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int)
        args = ((int(a), int(b), int(c), n), types)
        check(d.cuLaunchKernel(kernel, grid, 1, 1, 128, 1, 1, 0, 0, args, 0), "cuLaunchKernel")
        return
    buf = (ctypes.c_uint64 * 4)(int(a), int(b), int(c), n)
    size = ctypes.c_size_t(28)
    params = (ctypes.c_void_p * 5)(1, ctypes.addressof(buf), 2, ctypes.addressof(size), 0)
    check(d.cuLaunchKernel(kernel, grid, 1, 1, 128, 1, 1, 0, 0, 0, ctypes.addressof(params)),
          "cuLaunchKernel(extra)")


image = open(sys.argv[1], "rb").read() + b"\0"
check(d.cuInit(0), "cuInit")
dev = check(d.cuDeviceGet(0), "cuDeviceGet")
can_map = check(d.cuDeviceGetAttribute(d.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY, dev),
                "cuDeviceGetAttribute")
report("the device can map host memory", can_map == 1)
ctx = check(d.cuDevicePrimaryCtxRetain(dev), "cuDevicePrimaryCtxRetain")
check(d.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
kernel = check(d.cuModuleGetFunction(check(d.cuModuleLoadData(image), "cuModuleLoadData"), b"vadd"),
               "cuModuleGetFunction")
n = 5000
nbytes = 4 * n

host = check(d.cuMemHostAlloc(3 * nbytes, DEVICEMAP | PORTABLE), "cuMemHostAlloc")
report("cuMemHostGetFlags returns the allocation's flags",
       check(d.cuMemHostGetFlags(host), "cuMemHostGetFlags") == DEVICEMAP | PORTABLE)
dptr = int(check(d.cuMemHostGetDevicePointer(host, 0), "cuMemHostGetDevicePointer"))
a, b, c = (floats(host + i * nbytes, n) for i in range(3))
a[:] = np.arange(n)
b[:] = 3 * np.arange(n)
c[:] = -1
vadd(kernel, dptr, dptr + nbytes, dptr + 2 * nbytes, n, extra=True)
check(d.cuCtxSynchronize(), "cuCtxSynchronize")
report("a kernel reads and writes cuMemHostAlloc'ed mapped memory", bool(np.array_equal(c, a + b)))
A = d.CUpointer_attribute
attr = lambda which, p: check(d.cuPointerGetAttribute(which, p), f"cuPointerGetAttribute({which.name})")
report("pointer attributes of mapped memory",
       int(attr(A.CU_POINTER_ATTRIBUTE_MEMORY_TYPE, host)) == int(d.CUmemorytype.CU_MEMORYTYPE_HOST)
       and int(attr(A.CU_POINTER_ATTRIBUTE_DEVICE_POINTER, host + 8)) == dptr + 8
       and int(attr(A.CU_POINTER_ATTRIBUTE_HOST_POINTER, dptr)) == host
       and attr(A.CU_POINTER_ATTRIBUTE_MAPPED, host) == 1)

registered = np.zeros(3 * n, dtype=np.float32)
check(d.cuMemHostRegister(registered.ctypes.data, 3 * nbytes, DEVICEMAP), "cuMemHostRegister")
report("registered memory reports CU_MEMHOSTREGISTER_DEVICEMAP",
       check(d.cuMemHostGetFlags(registered.ctypes.data), "cuMemHostGetFlags") & DEVICEMAP != 0)
rptr = int(check(d.cuMemHostGetDevicePointer(registered.ctypes.data, 0), "cuMemHostGetDevicePointer"))
registered[:n] = np.arange(n)
registered[n:2 * n] = 5
for extra in (False, True):             # two launches in a row: the second adds to the first's result
    vadd(kernel, rptr, rptr + nbytes, rptr, n, extra)
stream = check(d.cuStreamCreate(0), "cuStreamCreate")
event = check(d.cuEventCreate(0), "cuEventCreate")
check(d.cuEventRecord(event, 0), "cuEventRecord")
check(d.cuEventSynchronize(event), "cuEventSynchronize")
report("a kernel reads and writes cuMemHostRegister'ed mapped memory, twice",
       bool(np.array_equal(registered[:n], np.arange(n) + 10)))
check(d.cuMemHostUnregister(registered.ctypes.data), "cuMemHostUnregister")
check(d.cuMemFreeHost(host), "cuMemFreeHost")
check(d.cuDevicePrimaryCtxRelease(dev), "cuDevicePrimaryCtxRelease")
finish("mapped memory")
