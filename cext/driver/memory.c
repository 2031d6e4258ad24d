/* The driver's stream-ordered memory and memory pools, forwarded to cricket.client.mempool (which
 * shares its pools with the runtime face). Structs are read here, so Python sees numbers. */
#include <stdint.h>

#include "driver.h"

#define U(x) ((uint64_t)(uintptr_t)(x))
#define I(x) ((uint64_t)(int64_t)(x))
#define FWD(name, ...) cricket_drv_forward(name, (const uint64_t[]){ __VA_ARGS__ }, \
                                           (int)(sizeof((const uint64_t[]){ __VA_ARGS__ }) / sizeof(uint64_t)))

/* A free after the client shut down (a destructor at exit): the server frees the session's memory
 * when its connection closes, so it succeeds, as NVIDIA's driver lets it until the process ends. */
static CUresult released(CUresult rc) { return rc == CUDA_ERROR_DEINITIALIZED ? CUDA_SUCCESS : rc; }

/* ------------------------------------------------------------------ stream-ordered allocation */

CRICKET_DRV_EXPORT CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{ return FWD("cuMemAllocAsync", U(dptr), bytesize, U(hStream)); }
CRICKET_DRV_EXPORT CUresult cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{ return FWD("cuMemAllocAsync", U(dptr), bytesize, U(hStream)); }
CRICKET_DRV_EXPORT CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream)
{ return released(FWD("cuMemFreeAsync", dptr, U(hStream))); }
CRICKET_DRV_EXPORT CUresult cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream hStream)
{ return released(FWD("cuMemFreeAsync", dptr, U(hStream))); }
CRICKET_DRV_EXPORT CUresult cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool,
                                                    CUstream hStream)
{ return FWD("cuMemAllocFromPoolAsync", U(dptr), bytesize, U(pool), U(hStream)); }
CRICKET_DRV_EXPORT CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool,
                                                         CUstream hStream)
{ return FWD("cuMemAllocFromPoolAsync", U(dptr), bytesize, U(pool), U(hStream)); }

/* ------------------------------------------------------------------ pools */

CRICKET_DRV_EXPORT CUresult cuMemPoolCreate(CUmemoryPool *pool, const CUmemPoolProps *p)
{
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    return FWD("cuMemPoolCreate", U(pool), (uint64_t)p->allocType, (uint64_t)p->handleTypes,
               (uint64_t)p->location.type, I(p->location.id), p->maxSize);
}
CRICKET_DRV_EXPORT CUresult cuMemPoolDestroy(CUmemoryPool pool)
{ return released(FWD("cuMemPoolDestroy", U(pool))); }
CRICKET_DRV_EXPORT CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t minBytesToKeep)
{ return FWD("cuMemPoolTrimTo", U(pool), minBytesToKeep); }
CRICKET_DRV_EXPORT CUresult cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void *value)
{ return FWD("cuMemPoolSetAttribute", U(pool), (uint64_t)attr, U(value)); }
CRICKET_DRV_EXPORT CUresult cuMemPoolGetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void *value)
{ return FWD("cuMemPoolGetAttribute", U(pool), (uint64_t)attr, U(value)); }
CRICKET_DRV_EXPORT CUresult cuMemPoolSetAccess(CUmemoryPool pool, const CUmemAccessDesc *map, size_t count)
{ return FWD("cuMemPoolSetAccess", U(pool), U(map), count); }
CRICKET_DRV_EXPORT CUresult cuMemPoolGetAccess(CUmemAccess_flags *flags, CUmemoryPool memPool, CUmemLocation *location)
{
    if (!location)
        return CUDA_ERROR_INVALID_VALUE;
    return FWD("cuMemPoolGetAccess", U(flags), U(memPool), (uint64_t)location->type, I(location->id));
}

CRICKET_DRV_EXPORT CUresult cuDeviceGetDefaultMemPool(CUmemoryPool *pool_out, CUdevice dev)
{ return FWD("cuDeviceGetDefaultMemPool", U(pool_out), I(dev)); }
CRICKET_DRV_EXPORT CUresult cuDeviceGetMemPool(CUmemoryPool *pool, CUdevice dev)
{ return FWD("cuDeviceGetMemPool", U(pool), I(dev)); }
CRICKET_DRV_EXPORT CUresult cuDeviceSetMemPool(CUdevice dev, CUmemoryPool pool)
{ return FWD("cuDeviceSetMemPool", I(dev), U(pool)); }

CRICKET_DRV_EXPORT CUresult cuMemGetDefaultMemPool(CUmemoryPool *pool_out, CUmemLocation *location,
                                                   CUmemAllocationType type)
{
    if (!location)
        return CUDA_ERROR_INVALID_VALUE;
    return FWD("cuMemGetDefaultMemPool", U(pool_out), (uint64_t)location->type, I(location->id), (uint64_t)type);
}
CRICKET_DRV_EXPORT CUresult cuMemGetMemPool(CUmemoryPool *pool, CUmemLocation *location, CUmemAllocationType type)
{
    if (!location)
        return CUDA_ERROR_INVALID_VALUE;
    return FWD("cuMemGetMemPool", U(pool), (uint64_t)location->type, I(location->id), (uint64_t)type);
}
CRICKET_DRV_EXPORT CUresult cuMemSetMemPool(CUmemLocation *location, CUmemAllocationType type, CUmemoryPool pool)
{
    if (!location)
        return CUDA_ERROR_INVALID_VALUE;
    return FWD("cuMemSetMemPool", (uint64_t)location->type, I(location->id), (uint64_t)type, U(pool));
}

/* ------------------------------------------------------------------ managed memory (cricket/client/managed.py) */

#define LOCATION_OF_DEVICE(dev) ((dev) == CU_DEVICE_CPU ? (uint64_t)CU_MEM_LOCATION_TYPE_HOST \
                                                        : (uint64_t)CU_MEM_LOCATION_TYPE_DEVICE), I(dev)

CRICKET_DRV_EXPORT CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags)
{ return FWD("cuMemAllocManaged", U(dptr), bytesize, flags); }
CRICKET_DRV_EXPORT CUresult cuMemPrefetchAsync_v2(CUdeviceptr devPtr, size_t count, CUmemLocation location,
                                                  unsigned int flags, CUstream hStream)
{ return FWD("cuMemPrefetchAsync", devPtr, count, (uint64_t)location.type, I(location.id), flags, U(hStream)); }
CRICKET_DRV_EXPORT CUresult cuMemPrefetchAsync_v2_ptsz(CUdeviceptr devPtr, size_t count, CUmemLocation location,
                                                       unsigned int flags, CUstream hStream)
{ return FWD("cuMemPrefetchAsync", devPtr, count, (uint64_t)location.type, I(location.id), flags, U(hStream)); }
/* the CUDA 8 ABI: a device ordinal, CU_DEVICE_CPU for the host */
CRICKET_DRV_EXPORT CUresult cuMemPrefetchAsync(CUdeviceptr devPtr, size_t count, CUdevice dstDevice, CUstream hStream)
{ return FWD("cuMemPrefetchAsync", devPtr, count, LOCATION_OF_DEVICE(dstDevice), 0, U(hStream)); }
CRICKET_DRV_EXPORT CUresult cuMemPrefetchAsync_ptsz(CUdeviceptr devPtr, size_t count, CUdevice dstDevice,
                                                    CUstream hStream)
{ return FWD("cuMemPrefetchAsync", devPtr, count, LOCATION_OF_DEVICE(dstDevice), 0, U(hStream)); }
CRICKET_DRV_EXPORT CUresult cuMemAdvise_v2(CUdeviceptr devPtr, size_t count, CUmem_advise advice, CUmemLocation location)
{ return FWD("cuMemAdvise", devPtr, count, (uint64_t)advice, (uint64_t)location.type, I(location.id)); }
CRICKET_DRV_EXPORT CUresult cuMemAdvise(CUdeviceptr devPtr, size_t count, CUmem_advise advice, CUdevice device)
{ return FWD("cuMemAdvise", devPtr, count, (uint64_t)advice, LOCATION_OF_DEVICE(device)); }
CRICKET_DRV_EXPORT CUresult cuLibraryGetManaged(CUdeviceptr *dptr, size_t *bytes, CUlibrary library, const char *name)
{ return FWD("cuLibraryGetManaged", U(dptr), U(bytes), U(library), U(name)); }

/* ------------------------------------------------------------------ IPC (cricket/client/ipc.py): handles by address */

CRICKET_DRV_EXPORT CUresult cuIpcGetMemHandle(CUipcMemHandle *pHandle, CUdeviceptr dptr)
{ return FWD("cuIpcGetMemHandle", U(pHandle), dptr); }
CRICKET_DRV_EXPORT CUresult cuIpcOpenMemHandle_v2(CUdeviceptr *pdptr, CUipcMemHandle handle, unsigned int Flags)
{ return FWD("cuIpcOpenMemHandle", U(pdptr), U(&handle), Flags); }
CRICKET_DRV_EXPORT CUresult cuIpcOpenMemHandle(CUdeviceptr *pdptr, CUipcMemHandle handle, unsigned int Flags)
{ return FWD("cuIpcOpenMemHandle", U(pdptr), U(&handle), Flags); }
CRICKET_DRV_EXPORT CUresult cuIpcCloseMemHandle(CUdeviceptr dptr)
{ return released(FWD("cuIpcCloseMemHandle", dptr)); }
CRICKET_DRV_EXPORT CUresult cuIpcGetEventHandle(CUipcEventHandle *pHandle, CUevent event)
{ return FWD("cuIpcGetEventHandle", U(pHandle), U(event)); }
CRICKET_DRV_EXPORT CUresult cuIpcOpenEventHandle(CUevent *phEvent, CUipcEventHandle handle)
{ return FWD("cuIpcOpenEventHandle", U(phEvent), U(&handle)); }

/* ------------------------------------------------------------------ virtual memory management (cricket/client/vmm.py) */

#define PROP_WORDS(p) (uint64_t)(p)->type, (uint64_t)(p)->location.type, I((p)->location.id), \
                      (uint64_t)(p)->requestedHandleTypes

CRICKET_DRV_EXPORT CUresult cuMemGetAllocationGranularity(size_t *granularity, const CUmemAllocationProp *prop,
                                                          CUmemAllocationGranularity_flags option)
{
    if (!prop)
        return CUDA_ERROR_INVALID_VALUE;
    return FWD("cuMemGetAllocationGranularity", U(granularity), PROP_WORDS(prop), (uint64_t)option);
}
CRICKET_DRV_EXPORT CUresult cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size, const CUmemAllocationProp *prop,
                                        unsigned long long flags)
{
    if (!prop)
        return CUDA_ERROR_INVALID_VALUE;
    return FWD("cuMemCreate", U(handle), size, PROP_WORDS(prop), flags);
}
CRICKET_DRV_EXPORT CUresult cuMemRelease(CUmemGenericAllocationHandle handle)
{ return released(FWD("cuMemRelease", handle)); }
CRICKET_DRV_EXPORT CUresult cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t alignment, CUdeviceptr addr,
                                                unsigned long long flags)
{ return FWD("cuMemAddressReserve", U(ptr), size, alignment, addr, flags); }
CRICKET_DRV_EXPORT CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size)
{ return released(FWD("cuMemAddressFree", ptr, size)); }
CRICKET_DRV_EXPORT CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
                                     unsigned long long flags)
{ return FWD("cuMemMap", ptr, size, offset, handle, flags); }
CRICKET_DRV_EXPORT CUresult cuMemUnmap(CUdeviceptr ptr, size_t size)
{ return released(FWD("cuMemUnmap", ptr, size)); }
CRICKET_DRV_EXPORT CUresult cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc, size_t count)
{ return FWD("cuMemSetAccess", ptr, size, U(desc), count); }
CRICKET_DRV_EXPORT CUresult cuMemGetAccess(unsigned long long *flags, const CUmemLocation *location, CUdeviceptr ptr)
{
    if (!location)
        return CUDA_ERROR_INVALID_VALUE;
    return FWD("cuMemGetAccess", U(flags), (uint64_t)location->type, I(location->id), ptr);
}
CRICKET_DRV_EXPORT CUresult cuMemRetainAllocationHandle(CUmemGenericAllocationHandle *handle, void *addr)
{ return FWD("cuMemRetainAllocationHandle", U(handle), U(addr)); }
CRICKET_DRV_EXPORT CUresult cuStreamAttachMemAsync(CUstream hStream, CUdeviceptr dptr, size_t length, unsigned int flags)
{ return FWD("cuStreamAttachMemAsync", U(hStream), dptr, length, flags); }
CRICKET_DRV_EXPORT CUresult cuStreamAttachMemAsync_ptsz(CUstream hStream, CUdeviceptr dptr, size_t length,
                                                        unsigned int flags)
{ return FWD("cuStreamAttachMemAsync", U(hStream), dptr, length, flags); }
