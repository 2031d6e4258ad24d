"""The driver's virtual memory management with cuda-python: two physical allocations mapped side by
side into one reserved range, used by a kernel (vadd from the PTX image given on the command line)
and copies across their boundary, their bytes kept through unmapping and mapping elsewhere,
access flags, references, and the documented errors. Prints PASS or FAIL lines."""
import ctypes
import sys

import numpy as np
from cuda.bindings import driver as d

from driver_checks import check, finish, report

image = open(sys.argv[1], "rb").read() + b"\0"
check(d.cuInit(0), "cuInit")
dev = check(d.cuDeviceGet(0), "cuDeviceGet")
ctx = check(d.cuDevicePrimaryCtxRetain(dev), "cuDevicePrimaryCtxRetain")
check(d.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
report("CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED is 1", check(d.cuDeviceGetAttribute(
    d.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, dev), "attribute") == 1)
kernel = check(d.cuModuleGetFunction(check(d.cuModuleLoadData(image), "cuModuleLoadData"), b"vadd"),
               "cuModuleGetFunction")

prop = d.CUmemAllocationProp()
prop.type = d.CUmemAllocationType.CU_MEM_ALLOCATION_TYPE_PINNED
prop.location.type = d.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE
prop.location.id = 0
gran = int(check(d.cuMemGetAllocationGranularity(
    prop, d.CUmemAllocationGranularity_flags.CU_MEM_ALLOC_GRANULARITY_MINIMUM), "cuMemGetAllocationGranularity"))
report("the granularity is a power of two of at least 64 KiB", gran >= 1 << 16 and gran & (gran - 1) == 0)

first = check(d.cuMemCreate(gran, prop, 0), "cuMemCreate")
second = check(d.cuMemCreate(gran, prop, 0), "cuMemCreate")
base = int(check(d.cuMemAddressReserve(3 * gran, 0, 0, 0), "cuMemAddressReserve"))
report("the reservation is aligned to the granularity", base % gran == 0)
check(d.cuMemMap(base, gran, 0, first, 0), "cuMemMap(first)")
check(d.cuMemMap(base + gran, gran, 0, second, 0), "cuMemMap(second)")
access = d.CUmemAccessDesc()
access.location = prop.location
access.flags = d.CUmemAccess_flags.CU_MEM_ACCESS_FLAGS_PROT_READWRITE
check(d.cuMemSetAccess(base, 2 * gran, [access], 1), "cuMemSetAccess")
report("cuMemGetAccess reads read-write", int(check(d.cuMemGetAccess(prop.location, base + gran), "cuMemGetAccess"))
       == int(d.CUmemAccess_flags.CU_MEM_ACCESS_FLAGS_PROT_READWRITE))

# a kernel over the two physical allocations as one range: c = a + b with a, b, c thirds of it
n = 2 * gran // 4 // 3
a, b, c = base, base + 4 * n, base + 8 * n
values = np.arange(2 * gran // 4, dtype=np.float32)
check(d.cuMemcpyHtoD(base, values, 2 * gran), "cuMemcpyHtoD")
types = (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int)
check(d.cuLaunchKernel(kernel, (n + 127) // 128, 1, 1, 128, 1, 1, 0, 0, ((a, b, c, n), types), 0), "cuLaunchKernel")
check(d.cuCtxSynchronize(), "cuCtxSynchronize")
out = np.empty(n, dtype=np.float32)
check(d.cuMemcpyDtoH(out, c, 4 * n), "cuMemcpyDtoH")
report("a kernel reads and writes across the two mappings", bool(np.array_equal(out, values[:n] + values[n:2 * n])))

# unmapped, the second allocation keeps its bytes; mapped at the start, they are there
tail = np.empty(16, dtype=np.float32)
check(d.cuMemcpyDtoH(tail, base + 2 * gran - 64, 64), "cuMemcpyDtoH")
check(d.cuMemUnmap(base, 2 * gran), "cuMemUnmap")
check(d.cuMemMap(base + gran, gran, 0, first, 0), "cuMemMap(first, moved)")
check(d.cuMemMap(base, gran, 0, second, 0), "cuMemMap(second, moved)")
moved = np.empty(16, dtype=np.float32)
check(d.cuMemcpyDtoH(moved, base + gran - 64, 64), "cuMemcpyDtoH")
report("a physical allocation's bytes survive unmapping and mapping elsewhere", bool(np.array_equal(moved, tail)))

retained = check(d.cuMemRetainAllocationHandle(base + 100), "cuMemRetainAllocationHandle")
report("cuMemRetainAllocationHandle names the allocation mapped there", int(retained) == int(second))
check(d.cuMemRelease(retained), "cuMemRelease(retained)")

# the documented errors
err, _ = d.cuMemCreate(gran + 1, prop, 0)
report("a size that is not a multiple of the granularity is CUDA_ERROR_INVALID_VALUE",
       err == d.CUresult.CUDA_ERROR_INVALID_VALUE)
third = check(d.cuMemCreate(gran, prop, 0), "cuMemCreate")
err, = d.cuMemMap(base, gran, 0, third, 0)
report("mapping over a mapped range is refused", err != d.CUresult.CUDA_SUCCESS)
err, = d.cuMemMap(base + 2 * gran, gran, gran, third, 0)
report("a non-zero offset is CUDA_ERROR_INVALID_VALUE", err == d.CUresult.CUDA_ERROR_INVALID_VALUE)
bad = d.CUmemAllocationProp()
bad.type = d.CUmemAllocationType.CU_MEM_ALLOCATION_TYPE_PINNED
bad.location.type = d.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE
bad.location.id = 9
err, _ = d.cuMemCreate(gran, bad, 0)
report("a device that does not exist is CUDA_ERROR_INVALID_DEVICE", err == d.CUresult.CUDA_ERROR_INVALID_DEVICE)

for h in (first, second, third):
    check(d.cuMemRelease(h), "cuMemRelease")        # the mapped two go when they are unmapped
check(d.cuMemUnmap(base, 2 * gran), "cuMemUnmap")
check(d.cuMemAddressFree(base, 3 * gran), "cuMemAddressFree")
err, = d.cuMemRelease(first)
report("releasing a released handle is CUDA_ERROR_INVALID_VALUE", err == d.CUresult.CUDA_ERROR_INVALID_VALUE)
finish("virtual memory management")
