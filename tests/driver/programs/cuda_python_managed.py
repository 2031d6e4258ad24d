"""Managed memory through the driver API with cuda-python: cuMemAllocManaged read and written by
the host (NumPy over the pointer) and by a kernel (vadd from the PTX image given on the command
line), coherent after cuCtxSynchronize; only the host's changed pages between launches; prefetch
(both ABIs), advice, pointer attributes, and the documented errors. Prints PASS or FAIL lines."""
import ctypes
import sys

import numpy as np
from cuda.bindings import driver as d

from driver_checks import check, finish, report


def floats(address, count):
    return np.frombuffer((ctypes.c_float * count).from_address(address), dtype=np.float32)


def vadd(kernel, a, b, c, n, stream=0):
    types = (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int)
    check(d.cuLaunchKernel(kernel, (n + 127) // 128, 1, 1, 128, 1, 1, 0, stream, ((a, b, c, n), types), 0),
          "cuLaunchKernel")


image = open(sys.argv[1], "rb").read() + b"\0"
check(d.cuInit(0), "cuInit")
dev = check(d.cuDeviceGet(0), "cuDeviceGet")
ctx = check(d.cuDevicePrimaryCtxRetain(dev), "cuDevicePrimaryCtxRetain")
check(d.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
DA = d.CUdevice_attribute
report("CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY 1, CONCURRENT_MANAGED_ACCESS 0",
       check(d.cuDeviceGetAttribute(DA.CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY, dev), "attribute") == 1
       and check(d.cuDeviceGetAttribute(DA.CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS, dev), "attribute") == 0)
kernel = check(d.cuModuleGetFunction(check(d.cuModuleLoadData(image), "cuModuleLoadData"), b"vadd"),
               "cuModuleGetFunction")

n = 1 << 18                                       # 1 MiB per array
ptr = int(check(d.cuMemAllocManaged(3 * 4 * n, d.CUmemAttach_flags.CU_MEM_ATTACH_GLOBAL), "cuMemAllocManaged"))
a, b, c = (floats(ptr + i * 4 * n, n) for i in range(3))
a[:] = np.arange(n)
b[:] = 2 * np.arange(n)
vadd(kernel, ptr, ptr + 4 * n, ptr + 8 * n, n)
check(d.cuCtxSynchronize(), "cuCtxSynchronize")
report("a kernel reads the host's writes, the host the kernel's", bool(np.array_equal(c, a + b)))

a[7] = 1000
b[n - 1] = -5
vadd(kernel, ptr, ptr + 4 * n, ptr + 8 * n, n)
check(d.cuCtxSynchronize(), "cuCtxSynchronize")
report("two changed elements reach the next kernel", c[7] == 1014 and c[n - 1] == n - 6 and c[8] == 24)

stream = check(d.cuStreamCreate(0), "cuStreamCreate")
device = d.CUmemLocation()
device.type = d.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE
device.id = 0
a[:] = 1
check(d.cuMemPrefetchAsync(ptr, 3 * 4 * n, device, 0, stream), "cuMemPrefetchAsync")
check(d.cuMemAdvise(ptr, 4 * n, d.CUmem_advise.CU_MEM_ADVISE_SET_READ_MOSTLY, device), "cuMemAdvise")
vadd(kernel, ptr, ptr + 4 * n, ptr + 8 * n, n, stream)
check(d.cuStreamSynchronize(stream), "cuStreamSynchronize")
report("prefetched, then a kernel in the stream", c[0] == 1 and c[3] == 7)

A = d.CUpointer_attribute
attr = lambda which, p: check(d.cuPointerGetAttribute(which, p), f"cuPointerGetAttribute({which.name})")
report("CU_POINTER_ATTRIBUTE_IS_MANAGED and both pointers",
       attr(A.CU_POINTER_ATTRIBUTE_IS_MANAGED, ptr + 64) == 1
       and int(attr(A.CU_POINTER_ATTRIBUTE_DEVICE_POINTER, ptr + 64)) == ptr + 64
       and int(attr(A.CU_POINTER_ATTRIBUTE_HOST_POINTER, ptr + 64)) == ptr + 64)

plain = int(check(d.cuMemAlloc(64), "cuMemAlloc"))
report("CU_POINTER_ATTRIBUTE_IS_MANAGED is 0 for cuMemAlloc memory", attr(A.CU_POINTER_ATTRIBUTE_IS_MANAGED, plain) == 0)
err, _ = d.cuMemAllocManaged(0, d.CUmemAttach_flags.CU_MEM_ATTACH_GLOBAL)
report("cuMemAllocManaged of 0 bytes is CUDA_ERROR_INVALID_VALUE", err == d.CUresult.CUDA_ERROR_INVALID_VALUE)
err, _ = d.cuMemAllocManaged(64, 0)
report("cuMemAllocManaged with flags 0 is CUDA_ERROR_INVALID_VALUE", err == d.CUresult.CUDA_ERROR_INVALID_VALUE)
err, = d.cuMemPrefetchAsync(plain, 64, device, 0, stream)
report("prefetching cuMemAlloc memory is CUDA_ERROR_INVALID_VALUE", err == d.CUresult.CUDA_ERROR_INVALID_VALUE)
check(d.cuMemFree(plain), "cuMemFree")
check(d.cuMemFree(ptr), "cuMemFree(managed)")
err, = d.cuMemFree(ptr)
report("a second cuMemFree of managed memory is CUDA_ERROR_INVALID_VALUE", err == d.CUresult.CUDA_ERROR_INVALID_VALUE)
check(d.cuStreamDestroy(stream), "cuStreamDestroy")
finish("managed memory")
