/* The runtime API's stream-ordered memory and memory pools (cricket/client/mempool.py), forwarded
 * as words: structs are read here, so Python sees their fields as numbers. */
#include <stddef.h>
#include <stdint.h>
#include "shim.h"
#include "forward_call.h"

/* ------------------------------------------------------------------ stream-ordered allocation */

CRICKET_EXPORT cudaError_t cudaMallocAsync(void **devPtr, size_t size, cudaStream_t hStream)
{ FORWARD(U(devPtr), size, U(hStream)); }
CRICKET_EXPORT cudaError_t cudaMallocAsync_ptsz(void **devPtr, size_t size, cudaStream_t hStream)
{ CALL_AS("cudaMallocAsync", U(devPtr), size, PT(hStream)); }
CRICKET_EXPORT cudaError_t cudaFreeAsync(void *devPtr, cudaStream_t hStream)
{ FORWARD(U(devPtr), U(hStream)); }
CRICKET_EXPORT cudaError_t cudaFreeAsync_ptsz(void *devPtr, cudaStream_t hStream)
{ CALL_AS("cudaFreeAsync", U(devPtr), PT(hStream)); }
CRICKET_EXPORT cudaError_t cudaMallocFromPoolAsync(void **ptr, size_t size, cudaMemPool_t memPool, cudaStream_t stream)
{ FORWARD(U(ptr), size, U(memPool), U(stream)); }
CRICKET_EXPORT cudaError_t cudaMallocFromPoolAsync_ptsz(void **ptr, size_t size, cudaMemPool_t memPool,
                                                        cudaStream_t stream)
{ CALL_AS("cudaMallocFromPoolAsync", U(ptr), size, U(memPool), PT(stream)); }

/* ------------------------------------------------------------------ pools */

CRICKET_EXPORT cudaError_t cudaMemPoolCreate(cudaMemPool_t *memPool, const struct cudaMemPoolProps *poolProps)
{
    if (!poolProps)
        return cudaErrorInvalidValue;
    FORWARD(U(memPool), (uint64_t)poolProps->allocType, (uint64_t)poolProps->handleTypes,
            (uint64_t)poolProps->location.type, (uint64_t)(int64_t)poolProps->location.id, poolProps->maxSize);
}
CRICKET_EXPORT cudaError_t cudaMemPoolDestroy(cudaMemPool_t memPool) { FORWARD(U(memPool)); }
CRICKET_EXPORT cudaError_t cudaMemPoolTrimTo(cudaMemPool_t memPool, size_t minBytesToKeep)
{ FORWARD(U(memPool), minBytesToKeep); }
CRICKET_EXPORT cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t memPool, enum cudaMemPoolAttr attr, void *value)
{ FORWARD(U(memPool), (uint64_t)attr, U(value)); }
CRICKET_EXPORT cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t memPool, enum cudaMemPoolAttr attr, void *value)
{ FORWARD(U(memPool), (uint64_t)attr, U(value)); }
CRICKET_EXPORT cudaError_t cudaMemPoolSetAccess(cudaMemPool_t memPool, const struct cudaMemAccessDesc *descList,
                                                size_t count)
{ FORWARD(U(memPool), U(descList), count); }
CRICKET_EXPORT cudaError_t cudaMemPoolGetAccess(enum cudaMemAccessFlags *flags, cudaMemPool_t memPool,
                                                struct cudaMemLocation *location)
{
    if (!location)
        return cudaErrorInvalidValue;
    FORWARD(U(flags), U(memPool), (uint64_t)location->type, (uint64_t)(int64_t)location->id);
}

CRICKET_EXPORT cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t *memPool, int device)
{ FORWARD(U(memPool), (uint64_t)(int64_t)device); }
CRICKET_EXPORT cudaError_t cudaDeviceGetMemPool(cudaMemPool_t *memPool, int device)
{ FORWARD(U(memPool), (uint64_t)(int64_t)device); }
CRICKET_EXPORT cudaError_t cudaDeviceSetMemPool(int device, cudaMemPool_t memPool)
{ FORWARD((uint64_t)(int64_t)device, U(memPool)); }

CRICKET_EXPORT cudaError_t cudaMemGetDefaultMemPool(cudaMemPool_t *memPool, struct cudaMemLocation *location,
                                                    enum cudaMemAllocationType type)
{
    if (!location)
        return cudaErrorInvalidValue;
    FORWARD(U(memPool), (uint64_t)location->type, (uint64_t)(int64_t)location->id, (uint64_t)type);
}
CRICKET_EXPORT cudaError_t cudaMemGetMemPool(cudaMemPool_t *memPool, struct cudaMemLocation *location,
                                             enum cudaMemAllocationType type)
{
    if (!location)
        return cudaErrorInvalidValue;
    FORWARD(U(memPool), (uint64_t)location->type, (uint64_t)(int64_t)location->id, (uint64_t)type);
}
CRICKET_EXPORT cudaError_t cudaMemSetMemPool(struct cudaMemLocation *location, enum cudaMemAllocationType type,
                                             cudaMemPool_t memPool)
{
    if (!location)
        return cudaErrorInvalidValue;
    FORWARD((uint64_t)location->type, (uint64_t)(int64_t)location->id, (uint64_t)type, U(memPool));
}

/* ------------------------------------------------------------------ managed memory (cricket/client/managed.py) */

CRICKET_EXPORT cudaError_t cudaMallocManaged(void **devPtr, size_t size, unsigned int flags)
{ FORWARD(U(devPtr), size, flags); }
CRICKET_EXPORT cudaError_t cudaMemPrefetchAsync(const void *devPtr, size_t count, struct cudaMemLocation location,
                                                unsigned int flags, cudaStream_t stream)
{ FORWARD(U(devPtr), count, (uint64_t)location.type, (uint64_t)(int64_t)location.id, flags, U(stream)); }
CRICKET_EXPORT cudaError_t cudaMemPrefetchAsync_ptsz(const void *devPtr, size_t count, struct cudaMemLocation location,
                                                     unsigned int flags, cudaStream_t stream)
{ CALL_AS("cudaMemPrefetchAsync", U(devPtr), count, (uint64_t)location.type, (uint64_t)(int64_t)location.id, flags,
          PT(stream)); }
CRICKET_EXPORT cudaError_t cudaMemAdvise(const void *devPtr, size_t count, enum cudaMemoryAdvise advice,
                                         struct cudaMemLocation location)
{ FORWARD(U(devPtr), count, (uint64_t)advice, (uint64_t)location.type, (uint64_t)(int64_t)location.id); }

/* ------------------------------------------------------------------ IPC (cricket/client/ipc.py): handles by address */

CRICKET_EXPORT cudaError_t cudaIpcGetMemHandle(cudaIpcMemHandle_t *handle, void *devPtr)
{ FORWARD(U(handle), U(devPtr)); }
CRICKET_EXPORT cudaError_t cudaIpcOpenMemHandle(void **devPtr, cudaIpcMemHandle_t handle, unsigned int flags)
{ FORWARD(U(devPtr), U(&handle), flags); }
CRICKET_EXPORT cudaError_t cudaIpcCloseMemHandle(void *devPtr) { FORWARD(U(devPtr)); }
CRICKET_EXPORT cudaError_t cudaIpcGetEventHandle(cudaIpcEventHandle_t *handle, cudaEvent_t event)
{ FORWARD(U(handle), U(event)); }
CRICKET_EXPORT cudaError_t cudaIpcOpenEventHandle(cudaEvent_t *event, cudaIpcEventHandle_t handle)
{ FORWARD(U(event), U(&handle)); }

/* managed memory's stream association (declared after the IPC block; cricket/client/managed.py) */
CRICKET_EXPORT cudaError_t cudaStreamAttachMemAsync(cudaStream_t stream, void *devPtr, size_t length, unsigned int flags)
{ FORWARD(U(stream), U(devPtr), length, flags); }
CRICKET_EXPORT cudaError_t cudaStreamAttachMemAsync_ptsz(cudaStream_t stream, void *devPtr, size_t length,
                                                         unsigned int flags)
{ CALL_AS("cudaStreamAttachMemAsync", PT(stream), U(devPtr), length, flags); }
