"""Memory pools through the driver API with cuda-python: cuMemAllocAsync from the default pool,
cuMemPoolCreate/cuMemAllocFromPoolAsync, attributes, trimming, the device's current pool, the
session's memory budget (the server runs with --session-memory 4M), and the documented errors.
Prints PASS or FAIL lines."""
from cuda.bindings import driver as d

from driver_checks import check, finish, report

A = d.CUmemPool_attribute
MiB = 1 << 20


def attr(pool, which):
    return int(check(d.cuMemPoolGetAttribute(pool, which), f"cuMemPoolGetAttribute({which.name})"))


check(d.cuInit(0), "cuInit")
dev = check(d.cuDeviceGet(0), "cuDeviceGet")
ctx = check(d.cuDevicePrimaryCtxRetain(dev), "cuDevicePrimaryCtxRetain")
check(d.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
supported = check(d.cuDeviceGetAttribute(d.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, dev),
                  "cuDeviceGetAttribute")
report("CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED is 1", supported == 1)
stream = check(d.cuStreamCreate(0), "cuStreamCreate")
default = check(d.cuDeviceGetDefaultMemPool(dev), "cuDeviceGetDefaultMemPool")
current = check(d.cuDeviceGetMemPool(dev), "cuDeviceGetMemPool")
report("the default pool is current", int(default) == int(current))

# a round trip through pool memory
ptr = check(d.cuMemAllocAsync(MiB, stream), "cuMemAllocAsync")
check(d.cuMemsetD32Async(ptr, 0x01020304, MiB // 4, stream), "cuMemsetD32Async")
out = bytearray(16)
check(d.cuMemcpyDtoHAsync(out, ptr, 16, stream), "cuMemcpyDtoHAsync")
check(d.cuStreamSynchronize(stream), "cuStreamSynchronize")
report("pool memory holds a memset", bytes(out) == bytes([4, 3, 2, 1]) * 4)
report("CU_MEMPOOL_ATTR_USED_MEM_CURRENT counts it", attr(default, A.CU_MEMPOOL_ATTR_USED_MEM_CURRENT) >= MiB)

# freed memory goes back to the server under a release threshold of 0 (the default) ...
check(d.cuMemFreeAsync(ptr, stream), "cuMemFreeAsync")
check(d.cuStreamSynchronize(stream), "cuStreamSynchronize")
report("a threshold of 0 keeps nothing after a synchronisation",
       attr(default, A.CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT) == 0)

# ... and the session's budget (4 MiB) bounds pools as it bounds cuMemAlloc
blocks = []
while True:
    err, p = d.cuMemAllocAsync(MiB, stream)
    if err != d.CUresult.CUDA_SUCCESS:
        break
    blocks.append(p)
report("the session budget ends pool allocations with CUDA_ERROR_OUT_OF_MEMORY",
       err == d.CUresult.CUDA_ERROR_OUT_OF_MEMORY and 1 <= len(blocks) <= 4)
for p in blocks:
    check(d.cuMemFreeAsync(p, stream), "cuMemFreeAsync")
check(d.cuStreamSynchronize(stream), "cuStreamSynchronize")

# an explicit pool, its attributes, trimming, and the device's current pool
props = d.CUmemPoolProps()
props.allocType = d.CUmemAllocationType.CU_MEM_ALLOCATION_TYPE_PINNED
props.location.type = d.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE
props.location.id = 0
pool = check(d.cuMemPoolCreate(props), "cuMemPoolCreate")
threshold = d.cuuint64_t(2 * MiB)
check(d.cuMemPoolSetAttribute(pool, A.CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, threshold), "cuMemPoolSetAttribute")
report("the release threshold reads back", attr(pool, A.CU_MEMPOOL_ATTR_RELEASE_THRESHOLD) == 2 * MiB)
p = check(d.cuMemAllocFromPoolAsync(MiB, pool, stream), "cuMemAllocFromPoolAsync")
check(d.cuMemFreeAsync(p, stream), "cuMemFreeAsync")
check(d.cuStreamSynchronize(stream), "cuStreamSynchronize")
report("memory under the threshold stays reserved", attr(pool, A.CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT) >= MiB)
q = check(d.cuMemAllocFromPoolAsync(MiB, pool, stream), "cuMemAllocFromPoolAsync")
report("a later allocation reuses it", attr(pool, A.CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH) < 2 * MiB)
check(d.cuMemFreeAsync(q, stream), "cuMemFreeAsync")
check(d.cuMemPoolTrimTo(pool, 0), "cuMemPoolTrimTo")
report("cuMemPoolTrimTo(0) releases it", attr(pool, A.CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT) == 0)
check(d.cuDeviceSetMemPool(dev, pool), "cuDeviceSetMemPool")
report("cuDeviceSetMemPool makes it current", int(check(d.cuDeviceGetMemPool(dev), "cuDeviceGetMemPool")) == int(pool))
check(d.cuMemPoolDestroy(pool), "cuMemPoolDestroy")
report("destroying it makes the default pool current again",
       int(check(d.cuDeviceGetMemPool(dev), "cuDeviceGetMemPool")) == int(default))

# the documented errors
err, _ = d.cuMemAllocFromPoolAsync(MiB, pool, stream)
report("a destroyed pool is CUDA_ERROR_INVALID_VALUE", err == d.CUresult.CUDA_ERROR_INVALID_VALUE)
props.location.id = 7
err, _ = d.cuMemPoolCreate(props)
report("a pool on a device that does not exist is refused", err in (d.CUresult.CUDA_ERROR_INVALID_DEVICE,
                                                                     d.CUresult.CUDA_ERROR_INVALID_VALUE))
err, = d.cuMemPoolSetAttribute(default, A.CU_MEMPOOL_ATTR_USED_MEM_HIGH, d.cuuint64_t(5))
report("a non-zero high-water mark is CUDA_ERROR_INVALID_VALUE", err == d.CUresult.CUDA_ERROR_INVALID_VALUE)
check(d.cuStreamDestroy(stream), "cuStreamDestroy")
finish("memory pools")
