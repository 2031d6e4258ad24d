/* The runtime-API functions cricket implements beyond registration: each one packs its arguments
 * as 64-bit integers (pointers as addresses, dim3 as two words: x | y << 32, then z) and calls the
 * generic entry `cricket_call` of cricket._cext.cudart_api with its own name (__func__). The Python
 * implementation registered under that name in cricket.client.runtime_api does the work.
 *
 * Prototypes come from the CUDA headers (cudart13_prototypes.h), so the compiler checks each
 * definition. Functions that fill a C struct (device properties, function attributes, launch
 * configurations) do the struct part here and ask Python for plain numbers. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cuda.h>          /* CUdevice_attribute: the numbers cudaDeviceAttr shares */
#include "shim.h"
#include "forward_call.h"

static int call_internal(const char *name, const uint64_t *args, int nargs)
{
    cricket_driver_link();
    int state = cricket_enter();
    if (state != 0)
        return cricket_after_client(name, args, state);
    return cricket_api.call(name, args, nargs);
}

/* ------------------------------------------------------------------ errors, devices */

CRICKET_EXPORT cudaError_t cudaGetDevice(int *device)
{
    uint64_t arg = U(device);
    cudaError_t rc = (cudaError_t)call_internal(__func__, &arg, 1);
    if (rc == cudaSuccess && device)
        cricket_note_device(*device);
    return rc;
}

CRICKET_EXPORT cudaError_t cudaSetDevice(int device)
{
    uint64_t arg = (uint64_t)(int64_t)device;
    cudaError_t rc = (cudaError_t)call_internal(__func__, &arg, 1);
    if (rc == cudaSuccess)
        cricket_note_device(device);
    return rc;
}

CRICKET_EXPORT cudaError_t cudaGetLastError(void) { FORWARD0(); }
CRICKET_EXPORT cudaError_t cudaPeekAtLastError(void) { FORWARD0(); }
CRICKET_EXPORT cudaError_t cudaGetDeviceCount(int *count) { FORWARD(U(count)); }
CRICKET_EXPORT cudaError_t cudaInitDevice(int device, unsigned int deviceFlags, unsigned int flags)
{ FORWARD((uint64_t)(int64_t)device, deviceFlags, flags); }
CRICKET_EXPORT cudaError_t cudaSetDeviceFlags(unsigned int flags) { FORWARD(flags); }
CRICKET_EXPORT cudaError_t cudaGetDeviceFlags(unsigned int *flags) { FORWARD(U(flags)); }
CRICKET_EXPORT cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device)
{ FORWARD(U(value), (uint64_t)attr, (uint64_t)(int64_t)device); }
CRICKET_EXPORT cudaError_t cudaDeviceSynchronize(void) { FORWARD0(); }
CRICKET_EXPORT cudaError_t cudaDeviceReset(void) { FORWARD0(); }
CRICKET_EXPORT cudaError_t cudaMemGetInfo(size_t *free, size_t *total) { FORWARD(U(free), U(total)); }
CRICKET_EXPORT cudaError_t cudaDriverGetVersion(int *driverVersion) { FORWARD(U(driverVersion)); }
CRICKET_EXPORT cudaError_t cudaDeviceGetStreamPriorityRange(int *leastPriority, int *greatestPriority)
{ FORWARD(U(leastPriority), U(greatestPriority)); }
CRICKET_EXPORT cudaError_t cudaDeviceSetCacheConfig(enum cudaFuncCache cacheConfig) { FORWARD((uint64_t)cacheConfig); }
CRICKET_EXPORT cudaError_t cudaDeviceGetCacheConfig(enum cudaFuncCache *pCacheConfig) { FORWARD(U(pCacheConfig)); }
CRICKET_EXPORT cudaError_t cudaDeviceSetSharedMemConfig(enum cudaSharedMemConfig config) { FORWARD((uint64_t)config); }
CRICKET_EXPORT cudaError_t cudaDeviceGetSharedMemConfig(enum cudaSharedMemConfig *pConfig) { FORWARD(U(pConfig)); }
CRICKET_EXPORT cudaError_t cudaProfilerStart(void) { FORWARD0(); }
CRICKET_EXPORT cudaError_t cudaProfilerStop(void) { FORWARD0(); }
CRICKET_EXPORT cudaError_t cudaDeviceGetLimit(size_t *pValue, enum cudaLimit limit) { FORWARD(U(pValue), (uint64_t)limit); }
CRICKET_EXPORT cudaError_t cudaDeviceSetLimit(enum cudaLimit limit, size_t value) { FORWARD((uint64_t)limit, value); }

/* cudaDeviceProp field <- device attribute: the one statement of which attribute fills each field
 * (cudaDeviceAttr numbers, the same as CUdevice_attribute; an array field lists one entry per
 * element). Fields with no attribute: name, uuid and totalGlobalMem come from the device identity;
 * luid and luidDeviceNodeMask are Windows-only and stay 0. */
#define FIELD(field, attr) { offsetof(struct cudaDeviceProp, field), sizeof(((struct cudaDeviceProp *)0)->field), (int)(attr) }
static const struct { size_t offset, size; int attribute; } PROP_FIELDS[] = {
    FIELD(sharedMemPerBlock, cudaDevAttrMaxSharedMemoryPerBlock),
    FIELD(regsPerBlock, cudaDevAttrMaxRegistersPerBlock),
    FIELD(warpSize, cudaDevAttrWarpSize),
    FIELD(memPitch, cudaDevAttrMaxPitch),
    FIELD(maxThreadsPerBlock, cudaDevAttrMaxThreadsPerBlock),
    FIELD(maxThreadsDim[0], cudaDevAttrMaxBlockDimX),
    FIELD(maxThreadsDim[1], cudaDevAttrMaxBlockDimY),
    FIELD(maxThreadsDim[2], cudaDevAttrMaxBlockDimZ),
    FIELD(maxGridSize[0], cudaDevAttrMaxGridDimX),
    FIELD(maxGridSize[1], cudaDevAttrMaxGridDimY),
    FIELD(maxGridSize[2], cudaDevAttrMaxGridDimZ),
    FIELD(totalConstMem, cudaDevAttrTotalConstantMemory),
    FIELD(major, cudaDevAttrComputeCapabilityMajor),
    FIELD(minor, cudaDevAttrComputeCapabilityMinor),
    FIELD(textureAlignment, cudaDevAttrTextureAlignment),
    FIELD(texturePitchAlignment, cudaDevAttrTexturePitchAlignment),
    FIELD(multiProcessorCount, cudaDevAttrMultiProcessorCount),
    FIELD(integrated, cudaDevAttrIntegrated),
    FIELD(canMapHostMemory, cudaDevAttrCanMapHostMemory),
    FIELD(maxTexture1D, cudaDevAttrMaxTexture1DWidth),
    FIELD(maxTexture1DMipmap, cudaDevAttrMaxTexture1DMipmappedWidth),
    FIELD(maxTexture2D[0], cudaDevAttrMaxTexture2DWidth),
    FIELD(maxTexture2D[1], cudaDevAttrMaxTexture2DHeight),
    FIELD(maxTexture2DMipmap[0], cudaDevAttrMaxTexture2DMipmappedWidth),
    FIELD(maxTexture2DMipmap[1], cudaDevAttrMaxTexture2DMipmappedHeight),
    FIELD(maxTexture2DLinear[0], cudaDevAttrMaxTexture2DLinearWidth),
    FIELD(maxTexture2DLinear[1], cudaDevAttrMaxTexture2DLinearHeight),
    FIELD(maxTexture2DLinear[2], cudaDevAttrMaxTexture2DLinearPitch),
    FIELD(maxTexture2DGather[0], cudaDevAttrMaxTexture2DGatherWidth),
    FIELD(maxTexture2DGather[1], cudaDevAttrMaxTexture2DGatherHeight),
    FIELD(maxTexture3D[0], cudaDevAttrMaxTexture3DWidth),
    FIELD(maxTexture3D[1], cudaDevAttrMaxTexture3DHeight),
    FIELD(maxTexture3D[2], cudaDevAttrMaxTexture3DDepth),
    FIELD(maxTexture3DAlt[0], cudaDevAttrMaxTexture3DWidthAlt),
    FIELD(maxTexture3DAlt[1], cudaDevAttrMaxTexture3DHeightAlt),
    FIELD(maxTexture3DAlt[2], cudaDevAttrMaxTexture3DDepthAlt),
    FIELD(maxTextureCubemap, cudaDevAttrMaxTextureCubemapWidth),
    FIELD(maxTexture1DLayered[0], cudaDevAttrMaxTexture1DLayeredWidth),
    FIELD(maxTexture1DLayered[1], cudaDevAttrMaxTexture1DLayeredLayers),
    FIELD(maxTexture2DLayered[0], cudaDevAttrMaxTexture2DLayeredWidth),
    FIELD(maxTexture2DLayered[1], cudaDevAttrMaxTexture2DLayeredHeight),
    FIELD(maxTexture2DLayered[2], cudaDevAttrMaxTexture2DLayeredLayers),
    FIELD(maxTextureCubemapLayered[0], cudaDevAttrMaxTextureCubemapLayeredWidth),
    FIELD(maxTextureCubemapLayered[1], cudaDevAttrMaxTextureCubemapLayeredLayers),
    FIELD(maxSurface1D, cudaDevAttrMaxSurface1DWidth),
    FIELD(maxSurface2D[0], cudaDevAttrMaxSurface2DWidth),
    FIELD(maxSurface2D[1], cudaDevAttrMaxSurface2DHeight),
    FIELD(maxSurface3D[0], cudaDevAttrMaxSurface3DWidth),
    FIELD(maxSurface3D[1], cudaDevAttrMaxSurface3DHeight),
    FIELD(maxSurface3D[2], cudaDevAttrMaxSurface3DDepth),
    FIELD(maxSurface1DLayered[0], cudaDevAttrMaxSurface1DLayeredWidth),
    FIELD(maxSurface1DLayered[1], cudaDevAttrMaxSurface1DLayeredLayers),
    FIELD(maxSurface2DLayered[0], cudaDevAttrMaxSurface2DLayeredWidth),
    FIELD(maxSurface2DLayered[1], cudaDevAttrMaxSurface2DLayeredHeight),
    FIELD(maxSurface2DLayered[2], cudaDevAttrMaxSurface2DLayeredLayers),
    FIELD(maxSurfaceCubemap, cudaDevAttrMaxSurfaceCubemapWidth),
    FIELD(maxSurfaceCubemapLayered[0], cudaDevAttrMaxSurfaceCubemapLayeredWidth),
    FIELD(maxSurfaceCubemapLayered[1], cudaDevAttrMaxSurfaceCubemapLayeredLayers),
    FIELD(surfaceAlignment, cudaDevAttrSurfaceAlignment),
    FIELD(concurrentKernels, cudaDevAttrConcurrentKernels),
    FIELD(ECCEnabled, cudaDevAttrEccEnabled),
    FIELD(pciBusID, cudaDevAttrPciBusId),
    FIELD(pciDeviceID, cudaDevAttrPciDeviceId),
    FIELD(pciDomainID, cudaDevAttrPciDomainId),
    FIELD(tccDriver, cudaDevAttrTccDriver),
    FIELD(asyncEngineCount, cudaDevAttrAsyncEngineCount),
    FIELD(unifiedAddressing, cudaDevAttrUnifiedAddressing),
    FIELD(memoryBusWidth, cudaDevAttrGlobalMemoryBusWidth),
    FIELD(l2CacheSize, cudaDevAttrL2CacheSize),
    FIELD(persistingL2CacheMaxSize, cudaDevAttrMaxPersistingL2CacheSize),
    FIELD(maxThreadsPerMultiProcessor, cudaDevAttrMaxThreadsPerMultiProcessor),
    FIELD(streamPrioritiesSupported, cudaDevAttrStreamPrioritiesSupported),
    FIELD(globalL1CacheSupported, cudaDevAttrGlobalL1CacheSupported),
    FIELD(localL1CacheSupported, cudaDevAttrLocalL1CacheSupported),
    FIELD(sharedMemPerMultiprocessor, cudaDevAttrMaxSharedMemoryPerMultiprocessor),
    FIELD(regsPerMultiprocessor, cudaDevAttrMaxRegistersPerMultiprocessor),
    FIELD(managedMemory, cudaDevAttrManagedMemory),
    FIELD(isMultiGpuBoard, cudaDevAttrIsMultiGpuBoard),
    FIELD(multiGpuBoardGroupID, cudaDevAttrMultiGpuBoardGroupID),
    FIELD(hostNativeAtomicSupported, cudaDevAttrHostNativeAtomicSupported),
    FIELD(pageableMemoryAccess, cudaDevAttrPageableMemoryAccess),
    FIELD(concurrentManagedAccess, cudaDevAttrConcurrentManagedAccess),
    FIELD(computePreemptionSupported, cudaDevAttrComputePreemptionSupported),
    FIELD(canUseHostPointerForRegisteredMem, cudaDevAttrCanUseHostPointerForRegisteredMem),
    FIELD(cooperativeLaunch, cudaDevAttrCooperativeLaunch),
    FIELD(sharedMemPerBlockOptin, cudaDevAttrMaxSharedMemoryPerBlockOptin),
    FIELD(pageableMemoryAccessUsesHostPageTables, cudaDevAttrPageableMemoryAccessUsesHostPageTables),
    FIELD(directManagedMemAccessFromHost, cudaDevAttrDirectManagedMemAccessFromHost),
    FIELD(maxBlocksPerMultiProcessor, cudaDevAttrMaxBlocksPerMultiprocessor),
    FIELD(accessPolicyMaxWindowSize, cudaDevAttrMaxAccessPolicyWindowSize),
    FIELD(reservedSharedMemPerBlock, cudaDevAttrReservedSharedMemoryPerBlock),
    FIELD(hostRegisterSupported, cudaDevAttrHostRegisterSupported),
    FIELD(sparseCudaArraySupported, cudaDevAttrSparseCudaArraySupported),
    FIELD(hostRegisterReadOnlySupported, cudaDevAttrHostRegisterReadOnlySupported),
    FIELD(timelineSemaphoreInteropSupported, cudaDevAttrTimelineSemaphoreInteropSupported),
    FIELD(memoryPoolsSupported, cudaDevAttrMemoryPoolsSupported),
    FIELD(gpuDirectRDMASupported, cudaDevAttrGPUDirectRDMASupported),
    FIELD(gpuDirectRDMAFlushWritesOptions, cudaDevAttrGPUDirectRDMAFlushWritesOptions),
    FIELD(gpuDirectRDMAWritesOrdering, cudaDevAttrGPUDirectRDMAWritesOrdering),
    FIELD(memoryPoolSupportedHandleTypes, cudaDevAttrMemoryPoolSupportedHandleTypes),
    FIELD(deferredMappingCudaArraySupported, cudaDevAttrDeferredMappingCudaArraySupported),
    FIELD(ipcEventSupported, cudaDevAttrIpcEventSupport),
    FIELD(clusterLaunch, cudaDevAttrClusterLaunch),
    FIELD(unifiedFunctionPointers, CU_DEVICE_ATTRIBUTE_UNIFIED_FUNCTION_POINTERS),
    FIELD(deviceNumaConfig, cudaDevAttrNumaConfig),
    FIELD(deviceNumaId, cudaDevAttrNumaId),
    FIELD(mpsEnabled, cudaDevAttrMpsEnabled),
    FIELD(hostNumaId, cudaDevAttrHostNumaId),
    FIELD(gpuPciDeviceID, cudaDevAttrGpuPciDeviceId),
    FIELD(gpuPciSubsystemID, cudaDevAttrGpuPciSubsystemId),
    FIELD(hostNumaMultinodeIpcSupported, cudaDevAttrHostNumaMultinodeIpcSupported),
};
#undef FIELD
#define ATTRIBUTE_COUNT CU_DEVICE_ATTRIBUTE_MAX

CRICKET_EXPORT cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device)
{
    if (!prop)
        return cudaErrorInvalidValue;
    memset(prop, 0, sizeof *prop);
    const uint64_t args[] = { (uint64_t)(int64_t)device, U(prop->name), sizeof prop->name,
                              U(prop->uuid.bytes), U(&prop->totalGlobalMem) };
    int err = call_internal("cricket_device_identity", args, 5);
    if (err != 0)
        return (cudaError_t)err;
    int32_t values[ATTRIBUTE_COUNT] = { 0 };
    const uint64_t attr_args[] = { (uint64_t)(int64_t)device, U(values), ATTRIBUTE_COUNT };
    err = call_internal("cricket_device_attributes", attr_args, 3);
    if (err != 0)
        return (cudaError_t)err;
    for (size_t i = 0; i < sizeof PROP_FIELDS / sizeof PROP_FIELDS[0]; i++) {
        char *field = (char *)prop + PROP_FIELDS[i].offset;
        int32_t v = values[PROP_FIELDS[i].attribute];
        if (PROP_FIELDS[i].size == sizeof(size_t)) {
            size_t wide = (size_t)(uint32_t)v;      /* byte counts and alignments: never negative */
            memcpy(field, &wide, sizeof wide);
        } else {
            memcpy(field, &v, sizeof v);
        }
    }
    return cudaSuccess;
}

/* ------------------------------------------------------------------ memory */

CRICKET_EXPORT cudaError_t cudaMalloc(void **devPtr, size_t size) { FORWARD(U(devPtr), size); }
CRICKET_EXPORT cudaError_t cudaMallocPitch(void **devPtr, size_t *pitch, size_t width, size_t height)
{ FORWARD(U(devPtr), U(pitch), width, height); }
CRICKET_EXPORT cudaError_t cudaFree(void *devPtr) { FORWARD(U(devPtr)); }
CRICKET_EXPORT cudaError_t cudaMallocHost(void **ptr, size_t size) { FORWARD(U(ptr), size); }
CRICKET_EXPORT cudaError_t cudaHostAlloc(void **pHost, size_t size, unsigned int flags) { FORWARD(U(pHost), size, flags); }
CRICKET_EXPORT cudaError_t cudaFreeHost(void *ptr) { FORWARD(U(ptr)); }
CRICKET_EXPORT cudaError_t cudaHostRegister(void *ptr, size_t size, unsigned int flags) { FORWARD(U(ptr), size, flags); }
CRICKET_EXPORT cudaError_t cudaHostUnregister(void *ptr) { FORWARD(U(ptr)); }
CRICKET_EXPORT cudaError_t cudaHostGetFlags(unsigned int *pFlags, void *pHost) { FORWARD(U(pFlags), U(pHost)); }
CRICKET_EXPORT cudaError_t cudaHostGetDevicePointer(void **pDevice, void *pHost, unsigned int flags)
{ FORWARD(U(pDevice), U(pHost), flags); }

/* ------------------------------------------------------------------ copies and memset */

CRICKET_EXPORT cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{ CALL_AS("cudaMemcpy", U(dst), U(src), count, (uint64_t)kind); }
CRICKET_EXPORT cudaError_t cudaMemcpy_ptds(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{ CALL_AS("cudaMemcpy_ptds", U(dst), U(src), count, (uint64_t)kind); }
CRICKET_EXPORT cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
                                           cudaStream_t stream)
{ CALL_AS("cudaMemcpyAsync", U(dst), U(src), count, (uint64_t)kind, U(stream)); }
CRICKET_EXPORT cudaError_t cudaMemcpyAsync_ptsz(void *dst, const void *src, size_t count,
                                                enum cudaMemcpyKind kind, cudaStream_t stream)
{ CALL_AS("cudaMemcpyAsync", U(dst), U(src), count, (uint64_t)kind, PT(stream)); }
CRICKET_EXPORT cudaError_t cudaMemcpy2D(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                                        size_t height, enum cudaMemcpyKind kind)
{ CALL_AS("cudaMemcpy2DAsync", U(dst), dpitch, U(src), spitch, width, height, (uint64_t)kind, 0, 1); }
CRICKET_EXPORT cudaError_t cudaMemcpy2D_ptds(void *dst, size_t dpitch, const void *src, size_t spitch,
                                             size_t width, size_t height, enum cudaMemcpyKind kind)
{ CALL_AS("cudaMemcpy2DAsync", U(dst), dpitch, U(src), spitch, width, height, (uint64_t)kind, PER_THREAD, 1); }
CRICKET_EXPORT cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src, size_t spitch,
                                             size_t width, size_t height, enum cudaMemcpyKind kind,
                                             cudaStream_t stream)
{ CALL_AS("cudaMemcpy2DAsync", U(dst), dpitch, U(src), spitch, width, height, (uint64_t)kind, U(stream), 0); }
CRICKET_EXPORT cudaError_t cudaMemcpy2DAsync_ptsz(void *dst, size_t dpitch, const void *src, size_t spitch,
                                                  size_t width, size_t height, enum cudaMemcpyKind kind,
                                                  cudaStream_t stream)
{ CALL_AS("cudaMemcpy2DAsync", U(dst), dpitch, U(src), spitch, width, height, (uint64_t)kind, PT(stream), 0); }
CRICKET_EXPORT cudaError_t cudaMemcpyToSymbol(const void *symbol, const void *src, size_t count, size_t offset,
                                              enum cudaMemcpyKind kind)
{ CALL_AS("cudaMemcpyToSymbolAsync", U(symbol), U(src), count, offset, (uint64_t)kind, 0, 1); }
CRICKET_EXPORT cudaError_t cudaMemcpyToSymbol_ptds(const void *symbol, const void *src, size_t count,
                                                   size_t offset, enum cudaMemcpyKind kind)
{ CALL_AS("cudaMemcpyToSymbolAsync", U(symbol), U(src), count, offset, (uint64_t)kind, PER_THREAD, 1); }
CRICKET_EXPORT cudaError_t cudaMemcpyToSymbolAsync(const void *symbol, const void *src, size_t count,
                                                   size_t offset, enum cudaMemcpyKind kind, cudaStream_t stream)
{ CALL_AS("cudaMemcpyToSymbolAsync", U(symbol), U(src), count, offset, (uint64_t)kind, U(stream), 0); }
CRICKET_EXPORT cudaError_t cudaMemcpyToSymbolAsync_ptsz(const void *symbol, const void *src, size_t count,
                                                        size_t offset, enum cudaMemcpyKind kind,
                                                        cudaStream_t stream)
{ CALL_AS("cudaMemcpyToSymbolAsync", U(symbol), U(src), count, offset, (uint64_t)kind, PT(stream), 0); }
CRICKET_EXPORT cudaError_t cudaMemcpyFromSymbol(void *dst, const void *symbol, size_t count, size_t offset,
                                                enum cudaMemcpyKind kind)
{ CALL_AS("cudaMemcpyFromSymbolAsync", U(dst), U(symbol), count, offset, (uint64_t)kind, 0, 1); }
CRICKET_EXPORT cudaError_t cudaMemcpyFromSymbol_ptds(void *dst, const void *symbol, size_t count, size_t offset,
                                                     enum cudaMemcpyKind kind)
{ CALL_AS("cudaMemcpyFromSymbolAsync", U(dst), U(symbol), count, offset, (uint64_t)kind, PER_THREAD, 1); }
CRICKET_EXPORT cudaError_t cudaMemcpyFromSymbolAsync(void *dst, const void *symbol, size_t count, size_t offset,
                                                     enum cudaMemcpyKind kind, cudaStream_t stream)
{ CALL_AS("cudaMemcpyFromSymbolAsync", U(dst), U(symbol), count, offset, (uint64_t)kind, U(stream), 0); }
CRICKET_EXPORT cudaError_t cudaMemcpyFromSymbolAsync_ptsz(void *dst, const void *symbol, size_t count,
                                                          size_t offset, enum cudaMemcpyKind kind,
                                                          cudaStream_t stream)
{ CALL_AS("cudaMemcpyFromSymbolAsync", U(dst), U(symbol), count, offset, (uint64_t)kind, PT(stream), 0); }
CRICKET_EXPORT cudaError_t cudaGetSymbolAddress(void **devPtr, const void *symbol) { FORWARD(U(devPtr), U(symbol)); }
CRICKET_EXPORT cudaError_t cudaGetSymbolSize(size_t *size, const void *symbol) { FORWARD(U(size), U(symbol)); }

CRICKET_EXPORT cudaError_t cudaMemset(void *devPtr, int value, size_t count)
{ CALL_AS("cudaMemsetAsync", U(devPtr), (uint64_t)(uint32_t)value, count, 0, 1); }
CRICKET_EXPORT cudaError_t cudaMemset_ptds(void *devPtr, int value, size_t count)
{ CALL_AS("cudaMemsetAsync", U(devPtr), (uint64_t)(uint32_t)value, count, PER_THREAD, 1); }
CRICKET_EXPORT cudaError_t cudaMemsetAsync(void *devPtr, int value, size_t count, cudaStream_t stream)
{ CALL_AS("cudaMemsetAsync", U(devPtr), (uint64_t)(uint32_t)value, count, U(stream), 0); }
CRICKET_EXPORT cudaError_t cudaMemsetAsync_ptsz(void *devPtr, int value, size_t count, cudaStream_t stream)
{ CALL_AS("cudaMemsetAsync", U(devPtr), (uint64_t)(uint32_t)value, count, PT(stream), 0); }

/* ------------------------------------------------------------------ streams and events */

CRICKET_EXPORT cudaError_t cudaStreamCreate(cudaStream_t *pStream) { CALL_AS("cudaStreamCreateWithPriority", U(pStream), 0, 0); }
CRICKET_EXPORT cudaError_t cudaStreamCreateWithFlags(cudaStream_t *pStream, unsigned int flags)
{ CALL_AS("cudaStreamCreateWithPriority", U(pStream), flags, 0); }
CRICKET_EXPORT cudaError_t cudaStreamCreateWithPriority(cudaStream_t *pStream, unsigned int flags, int priority)
{ FORWARD(U(pStream), flags, (uint64_t)(int64_t)priority); }
CRICKET_EXPORT cudaError_t cudaStreamDestroy(cudaStream_t stream) { FORWARD(U(stream)); }
CRICKET_EXPORT cudaError_t cudaStreamSynchronize(cudaStream_t stream) { CALL_AS("cudaStreamSynchronize", U(stream)); }
CRICKET_EXPORT cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t stream) { CALL_AS("cudaStreamSynchronize", PT(stream)); }
CRICKET_EXPORT cudaError_t cudaStreamQuery(cudaStream_t stream) { CALL_AS("cudaStreamQuery", U(stream)); }
CRICKET_EXPORT cudaError_t cudaStreamQuery_ptsz(cudaStream_t stream) { CALL_AS("cudaStreamQuery", PT(stream)); }
CRICKET_EXPORT cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags)
{ CALL_AS("cudaStreamWaitEvent", U(stream), U(event), flags); }
CRICKET_EXPORT cudaError_t cudaStreamWaitEvent_ptsz(cudaStream_t stream, cudaEvent_t event, unsigned int flags)
{ CALL_AS("cudaStreamWaitEvent", PT(stream), U(event), flags); }

CRICKET_EXPORT cudaError_t cudaEventCreate(cudaEvent_t *event) { CALL_AS("cudaEventCreateWithFlags", U(event), 0); }
CRICKET_EXPORT cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags) { FORWARD(U(event), flags); }
CRICKET_EXPORT cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) { CALL_AS("cudaEventRecord", U(event), U(stream)); }
CRICKET_EXPORT cudaError_t cudaEventRecord_ptsz(cudaEvent_t event, cudaStream_t stream) { CALL_AS("cudaEventRecord", U(event), PT(stream)); }
CRICKET_EXPORT cudaError_t cudaEventRecordWithFlags(cudaEvent_t event, cudaStream_t stream, unsigned int flags)
{ CALL_AS("cudaEventRecord", U(event), U(stream)); }
CRICKET_EXPORT cudaError_t cudaEventRecordWithFlags_ptsz(cudaEvent_t event, cudaStream_t stream, unsigned int flags)
{ CALL_AS("cudaEventRecord", U(event), PT(stream)); }
CRICKET_EXPORT cudaError_t cudaEventSynchronize(cudaEvent_t event) { FORWARD(U(event)); }
CRICKET_EXPORT cudaError_t cudaEventQuery(cudaEvent_t event) { FORWARD(U(event)); }
CRICKET_EXPORT cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{ FORWARD(U(ms), U(start), U(end)); }
CRICKET_EXPORT cudaError_t cudaEventDestroy(cudaEvent_t event) { FORWARD(U(event)); }

/* ------------------------------------------------------------------ launch */

/* nvcc's <<<>>> is Push, Pop, __cudaLaunchKernel in a row on one thread. The configuration stack is
 * that thread's and nothing else reads it, so it lives here: a launch reaches Python once, not
 * three times (bench/calls.py, "asynchronous empty launch, issue"). A Pop with nothing pushed
 * here goes to Python, whose own stack is empty: it fails and sets the thread's last error. */
#define CONFIG_STACK_DEPTH 32
struct call_config { dim3 grid, block; size_t shared; void *stream; };
static __thread struct call_config config_stack[CONFIG_STACK_DEPTH];
static __thread int config_depth;

CRICKET_EXPORT unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem,
                                                    struct CUstream_st *stream)
{
    if (cricket_enter() != 0)
        return 1;     /* non-zero: nvcc's code skips the launch */
    if (config_depth == CONFIG_STACK_DEPTH) {
        cricket_log(CRICKET_ERROR, "__cudaPushCallConfiguration: more than %d launches nested in "
                    "launch arguments; this launch is skipped", CONFIG_STACK_DEPTH);
        return 1;
    }
    config_stack[config_depth++] = (struct call_config){ gridDim, blockDim, sharedMem, stream };
    return 0;
}

CRICKET_EXPORT cudaError_t __cudaPopCallConfiguration(dim3 *gridDim, dim3 *blockDim, size_t *sharedMem,
                                                      void *stream)
{
    if (config_depth == 0 || !gridDim || !blockDim || !sharedMem || !stream)
        FORWARD(U(gridDim), U(blockDim), U(sharedMem), U(stream));
    const struct call_config *c = &config_stack[--config_depth];
    *gridDim = c->grid;
    *blockDim = c->block;
    *sharedMem = c->shared;
    *(void **)stream = c->stream;
    return cudaSuccess;
}
CRICKET_EXPORT cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *hostFun) { FORWARD(U(kernel), U(hostFun)); }
CRICKET_EXPORT cudaError_t cudaGetKernel(cudaKernel_t *kernelPtr, const void *entryFuncAddr)
{ CALL_AS("__cudaGetKernel", U(kernelPtr), U(entryFuncAddr)); }

CRICKET_EXPORT cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void **args,
                                              size_t sharedMem, cudaStream_t stream)
{ CALL_AS("cudaLaunchKernel", U(kernel), DIM(gridDim), DIM(blockDim), U(args), sharedMem, U(stream)); }
CRICKET_EXPORT cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void **args,
                                                   size_t sharedMem, cudaStream_t stream)
{ CALL_AS("cudaLaunchKernel", U(kernel), DIM(gridDim), DIM(blockDim), U(args), sharedMem, PT(stream)); }
CRICKET_EXPORT cudaError_t cudaLaunchKernel(const void *func, dim3 gridDim, dim3 blockDim, void **args,
                                            size_t sharedMem, cudaStream_t stream)
{ CALL_AS("cudaLaunchKernel", U(func), DIM(gridDim), DIM(blockDim), U(args), sharedMem, U(stream)); }
CRICKET_EXPORT cudaError_t cudaLaunchKernel_ptsz(const void *func, dim3 gridDim, dim3 blockDim, void **args,
                                                 size_t sharedMem, cudaStream_t stream)
{ CALL_AS("cudaLaunchKernel", U(func), DIM(gridDim), DIM(blockDim), U(args), sharedMem, PT(stream)); }

static cudaError_t launch_ex(const cudaLaunchConfig_t *config, const void *func, void **args, int per_thread)
{
    if (!config)
        return cudaErrorInvalidValue;
    /* The attributes are checked in Python (cricket.client.launch_attributes): hints are
     * accepted, what cricket cannot honour fails with cudaErrorNotSupported. */
    CALL_AS("cudaLaunchKernelExC", U(func), DIM(config->gridDim), DIM(config->blockDim), U(args),
            config->dynamicSmemBytes, per_thread ? PT(config->stream) : U(config->stream),
            U(config->attrs), (uint64_t)config->numAttrs);
}
CRICKET_EXPORT cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t *config, const void *func, void **args)
{ return launch_ex(config, func, args, 0); }
CRICKET_EXPORT cudaError_t cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t *config, const void *func, void **args)
{ return launch_ex(config, func, args, 1); }

/* ------------------------------------------------------------------ functions and occupancy */

CRICKET_EXPORT cudaError_t cudaFuncGetAttributes(struct cudaFuncAttributes *attr, const void *func)
{
    if (!attr)
        return cudaErrorInvalidValue;
    /* Python fills: shared, const, local sizes, max threads, regs, ptx, binary, max dynamic shared */
    int64_t v[8] = { 0 };
    const uint64_t args[] = { U(v), U(func) };
    int err = call_internal("cudaFuncGetAttributes", args, 2);
    if (err != 0)
        return (cudaError_t)err;
    memset(attr, 0, sizeof *attr);
    attr->sharedSizeBytes = (size_t)v[0];
    attr->constSizeBytes = (size_t)v[1];
    attr->localSizeBytes = (size_t)v[2];
    attr->maxThreadsPerBlock = (int)v[3];
    attr->numRegs = (int)v[4];
    attr->ptxVersion = (int)v[5];
    attr->binaryVersion = (int)v[6];
    attr->maxDynamicSharedSizeBytes = (int)v[7];
    return cudaSuccess;
}
CRICKET_EXPORT cudaError_t cudaFuncSetAttribute(const void *func, enum cudaFuncAttribute attr, int value)
{ FORWARD(U(func), (uint64_t)attr, (uint64_t)(int64_t)value); }
CRICKET_EXPORT cudaError_t cudaFuncSetCacheConfig(const void *func, enum cudaFuncCache cacheConfig)
{ FORWARD(U(func), (uint64_t)cacheConfig); }
CRICKET_EXPORT cudaError_t cudaFuncSetSharedMemConfig(const void *func, enum cudaSharedMemConfig config)
{ FORWARD(U(func), (uint64_t)config); }
CRICKET_EXPORT cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *numBlocks, const void *func,
                                                                         int blockSize, size_t dynamicSMemSize)
{ CALL_AS("cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags", U(numBlocks), U(func),
          (uint64_t)(int64_t)blockSize, dynamicSMemSize, 0); }
CRICKET_EXPORT cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *numBlocks, const void *func,
                                                                                  int blockSize,
                                                                                  size_t dynamicSMemSize,
                                                                                  unsigned int flags)
{ FORWARD(U(numBlocks), U(func), (uint64_t)(int64_t)blockSize, dynamicSMemSize, flags); }
CRICKET_EXPORT cudaError_t cudaPointerGetAttributes(struct cudaPointerAttributes *attributes, const void *ptr)
{
    if (!attributes)
        return cudaErrorInvalidValue;
    int64_t v[4] = { 0 };   /* type, device, device pointer, host pointer */
    const uint64_t args[] = { U(v), U(ptr) };
    int err = call_internal("cudaPointerGetAttributes", args, 2);
    if (err != 0)
        return (cudaError_t)err;
    memset(attributes, 0, sizeof *attributes);
    attributes->type = (enum cudaMemoryType)v[0];
    attributes->device = (int)v[1];
    attributes->devicePointer = (void *)(uintptr_t)v[2];
    attributes->hostPointer = (void *)(uintptr_t)v[3];
    return cudaSuccess;
}

/* --- CUDA arrays, textures and surfaces (cricket/client/arrays_runtime.py) ----------------------
 * A channel format travels as one word: x | y << 8 | z << 16 | w << 24 | kind << 32. Copies of
 * every shape go to the one Python entry "cudaMemcpy3D" as a flat box description; descriptors
 * are flattened here into arrays of words, since only the headers know their layout. */
#define FMT(d) ((uint64_t)(uint8_t)(d)->x | (uint64_t)(uint8_t)(d)->y << 8 | (uint64_t)(uint8_t)(d)->z << 16 | \
                (uint64_t)(uint8_t)(d)->w << 24 | (uint64_t)(uint32_t)(d)->f << 32)
#define COPY3D_BYTES 0
#define COPY3D_ELEMENTS 1

CRICKET_EXPORT struct cudaChannelFormatDesc cudaCreateChannelDesc(int x, int y, int z, int w,
                                                                  enum cudaChannelFormatKind f)
{
    struct cudaChannelFormatDesc d = { x, y, z, w, f };
    return d;
}

CRICKET_EXPORT cudaError_t cudaMallocArray(cudaArray_t *array, const struct cudaChannelFormatDesc *desc,
                                           size_t width, size_t height, unsigned int flags)
{
    if (!desc)
        return cudaErrorInvalidValue;
    CALL_AS("cudaMalloc3DArray", U(array), FMT(desc), width, height, 0, flags, 1);
}

CRICKET_EXPORT cudaError_t cudaMalloc3DArray(cudaArray_t *array, const struct cudaChannelFormatDesc *desc,
                                             struct cudaExtent extent, unsigned int flags)
{
    if (!desc)
        return cudaErrorInvalidValue;
    CALL_AS("cudaMalloc3DArray", U(array), FMT(desc), extent.width, extent.height, extent.depth, flags, 1);
}

CRICKET_EXPORT cudaError_t cudaMallocMipmappedArray(cudaMipmappedArray_t *mipmappedArray,
                                                    const struct cudaChannelFormatDesc *desc,
                                                    struct cudaExtent extent, unsigned int numLevels,
                                                    unsigned int flags)
{
    if (!desc)
        return cudaErrorInvalidValue;
    CALL_AS("cudaMalloc3DArray", U(mipmappedArray), FMT(desc), extent.width, extent.height, extent.depth,
            flags, numLevels);
}

CRICKET_EXPORT cudaError_t cudaGetMipmappedArrayLevel(cudaArray_t *levelArray,
                                                      cudaMipmappedArray_const_t mipmappedArray,
                                                      unsigned int level)
{ FORWARD(U(levelArray), U(mipmappedArray), level); }
CRICKET_EXPORT cudaError_t cudaFreeArray(cudaArray_t array) { FORWARD(U(array)); }
CRICKET_EXPORT cudaError_t cudaFreeMipmappedArray(cudaMipmappedArray_t mipmappedArray)
{ CALL_AS("cudaFreeArray", U(mipmappedArray)); }

CRICKET_EXPORT cudaError_t cudaGetChannelDesc(struct cudaChannelFormatDesc *desc, cudaArray_const_t array)
{
    if (!desc)
        return cudaErrorInvalidValue;
    int64_t v[1] = { 0 };
    const uint64_t args[] = { U(v), U(array) };
    int err = call_internal("cudaGetChannelDesc", args, 2);
    if (err != 0)
        return (cudaError_t)err;
    desc->x = (int)(v[0] & 0xFF);
    desc->y = (int)(v[0] >> 8 & 0xFF);
    desc->z = (int)(v[0] >> 16 & 0xFF);
    desc->w = (int)(v[0] >> 24 & 0xFF);
    desc->f = (enum cudaChannelFormatKind)(v[0] >> 32);
    return cudaSuccess;
}

/* "cudaMemcpy3D" words: dst array, dst ptr, dst pitch, dst rows per slice, dst x, y, z, the same
 * for the source, width, height, depth, kind, stream, sync, units (bytes or array elements). */
#define BOX(arr, ptr, pitch, ysize, x, y, z) U(arr), U(ptr), (uint64_t)(pitch), (uint64_t)(ysize), \
    (uint64_t)(x), (uint64_t)(y), (uint64_t)(z)

static cudaError_t memcpy_3d_parms(const struct cudaMemcpy3DParms *p, uint64_t stream, uint64_t sync)
{
    if (!p)
        return cudaErrorInvalidValue;
    CALL_AS("cudaMemcpy3D",
            BOX(p->dstArray, p->dstPtr.ptr, p->dstPtr.pitch, p->dstPtr.ysize, p->dstPos.x, p->dstPos.y, p->dstPos.z),
            BOX(p->srcArray, p->srcPtr.ptr, p->srcPtr.pitch, p->srcPtr.ysize, p->srcPos.x, p->srcPos.y, p->srcPos.z),
            p->extent.width, p->extent.height, p->extent.depth, (uint64_t)p->kind, stream, sync, COPY3D_ELEMENTS);
}

CRICKET_EXPORT cudaError_t cudaMemcpy3D(const struct cudaMemcpy3DParms *p) { return memcpy_3d_parms(p, 0, 1); }
CRICKET_EXPORT cudaError_t cudaMemcpy3D_ptds(const struct cudaMemcpy3DParms *p)
{ return memcpy_3d_parms(p, PER_THREAD, 1); }
CRICKET_EXPORT cudaError_t cudaMemcpy3DAsync(const struct cudaMemcpy3DParms *p, cudaStream_t stream)
{ return memcpy_3d_parms(p, U(stream), 0); }
CRICKET_EXPORT cudaError_t cudaMemcpy3DAsync_ptsz(const struct cudaMemcpy3DParms *p, cudaStream_t stream)
{ return memcpy_3d_parms(p, PT(stream), 0); }

CRICKET_EXPORT cudaError_t cudaMemcpy2DToArray(cudaArray_t dst, size_t wOffset, size_t hOffset, const void *src,
                                               size_t spitch, size_t width, size_t height, enum cudaMemcpyKind kind)
{
    CALL_AS("cudaMemcpy3D", BOX(dst, 0, 0, 0, wOffset, hOffset, 0), BOX(0, src, spitch, height, 0, 0, 0),
            width, height, 1, (uint64_t)kind, 0, 1, COPY3D_BYTES);
}

CRICKET_EXPORT cudaError_t cudaMemcpy2DFromArray(void *dst, size_t dpitch, cudaArray_const_t src, size_t wOffset,
                                                 size_t hOffset, size_t width, size_t height,
                                                 enum cudaMemcpyKind kind)
{
    CALL_AS("cudaMemcpy3D", BOX(0, dst, dpitch, height, 0, 0, 0), BOX(src, 0, 0, 0, wOffset, hOffset, 0),
            width, height, 1, (uint64_t)kind, 0, 1, COPY3D_BYTES);
}

/* Deprecated, still used: count bytes in the array's row-major order from (wOffset, hOffset). */
CRICKET_EXPORT cudaError_t cudaMemcpyToArray(cudaArray_t dst, size_t wOffset, size_t hOffset, const void *src,
                                             size_t count, enum cudaMemcpyKind kind)
{
    CALL_AS("cudaMemcpy3D", BOX(dst, 0, 0, 0, wOffset, hOffset, 0), BOX(0, src, count, 1, 0, 0, 0),
            count, 1, 1, (uint64_t)kind, 0, 1, COPY3D_BYTES);
}

CRICKET_EXPORT cudaError_t cudaMemcpyFromArray(void *dst, cudaArray_const_t src, size_t wOffset, size_t hOffset,
                                               size_t count, enum cudaMemcpyKind kind)
{
    CALL_AS("cudaMemcpy3D", BOX(0, dst, count, 1, 0, 0, 0), BOX(src, 0, 0, 0, wOffset, hOffset, 0),
            count, 1, 1, (uint64_t)kind, 0, 1, COPY3D_BYTES);
}

static uint64_t f32_word(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* words: type, array or pointer, format, size in bytes or width, height, pitch */
static void resource_words(const struct cudaResourceDesc *r, uint64_t *w)
{
    w[0] = (uint64_t)r->resType;
    switch (r->resType) {
    case cudaResourceTypeArray: w[1] = U(r->res.array.array); break;
    case cudaResourceTypeMipmappedArray: w[1] = U(r->res.mipmap.mipmap); break;
    case cudaResourceTypeLinear:
        w[1] = U(r->res.linear.devPtr); w[2] = FMT(&r->res.linear.desc); w[3] = r->res.linear.sizeInBytes;
        break;
    case cudaResourceTypePitch2D:
        w[1] = U(r->res.pitch2D.devPtr); w[2] = FMT(&r->res.pitch2D.desc); w[3] = r->res.pitch2D.width;
        w[4] = r->res.pitch2D.height; w[5] = r->res.pitch2D.pitchInBytes;
        break;
    default: break;
    }
}

/* words 6..: address modes (3), filter, read mode, normalized, border (4, f32 bits), mipmap filter,
 * bias, min clamp, max clamp (f32 bits); word 20 says whether a texture description was given */
CRICKET_EXPORT cudaError_t cudaCreateTextureObject(cudaTextureObject_t *pTexObject,
                                                   const struct cudaResourceDesc *pResDesc,
                                                   const struct cudaTextureDesc *pTexDesc,
                                                   const struct cudaResourceViewDesc *pResViewDesc)
{
    if (!pTexObject || !pResDesc || !pTexDesc)
        return cudaErrorInvalidValue;
    if (pResViewDesc)
        return cudaErrorNotSupported;
    uint64_t w[21] = { 0 };
    resource_words(pResDesc, w);
    for (int k = 0; k < 3; k++)
        w[6 + k] = (uint64_t)pTexDesc->addressMode[k];
    w[9] = (uint64_t)pTexDesc->filterMode;
    w[10] = (uint64_t)pTexDesc->readMode;
    w[11] = (uint64_t)pTexDesc->normalizedCoords;
    for (int k = 0; k < 4; k++)
        w[12 + k] = f32_word(pTexDesc->borderColor[k]);
    w[16] = (uint64_t)pTexDesc->mipmapFilterMode;
    w[17] = f32_word(pTexDesc->mipmapLevelBias);
    w[18] = f32_word(pTexDesc->minMipmapLevelClamp);
    w[19] = f32_word(pTexDesc->maxMipmapLevelClamp);
    w[20] = 1;
    CALL_AS("cudaCreateTextureObject", U(pTexObject), U(w));
}

CRICKET_EXPORT cudaError_t cudaCreateSurfaceObject(cudaSurfaceObject_t *pSurfObject,
                                                   const struct cudaResourceDesc *pResDesc)
{
    if (!pSurfObject || !pResDesc)
        return cudaErrorInvalidValue;
    uint64_t w[21] = { 0 };
    resource_words(pResDesc, w);
    CALL_AS("cudaCreateTextureObject", U(pSurfObject), U(w));
}

CRICKET_EXPORT cudaError_t cudaDestroyTextureObject(cudaTextureObject_t texObject) { FORWARD(texObject); }
CRICKET_EXPORT cudaError_t cudaDestroySurfaceObject(cudaSurfaceObject_t surfObject)
{ CALL_AS("cudaDestroyTextureObject", surfObject); }

static cudaError_t object_resource_desc(struct cudaResourceDesc *out, uint64_t object)
{
    if (!out)
        return cudaErrorInvalidValue;
    int64_t w[6] = { 0 };
    const uint64_t args[] = { U(w), object };
    int err = call_internal("cudaGetTextureObjectResourceDesc", args, 2);
    if (err != 0)
        return (cudaError_t)err;
    memset(out, 0, sizeof *out);
    out->resType = (enum cudaResourceType)w[0];
    struct cudaChannelFormatDesc d = { (int)(w[2] & 0xFF), (int)(w[2] >> 8 & 0xFF), (int)(w[2] >> 16 & 0xFF),
                                       (int)(w[2] >> 24 & 0xFF), (enum cudaChannelFormatKind)((uint64_t)w[2] >> 32) };
    switch (out->resType) {
    case cudaResourceTypeArray: out->res.array.array = (cudaArray_t)(uintptr_t)w[1]; break;
    case cudaResourceTypeMipmappedArray: out->res.mipmap.mipmap = (cudaMipmappedArray_t)(uintptr_t)w[1]; break;
    case cudaResourceTypeLinear:
        out->res.linear.devPtr = (void *)(uintptr_t)w[1]; out->res.linear.desc = d;
        out->res.linear.sizeInBytes = (size_t)w[3];
        break;
    case cudaResourceTypePitch2D:
        out->res.pitch2D.devPtr = (void *)(uintptr_t)w[1]; out->res.pitch2D.desc = d;
        out->res.pitch2D.width = (size_t)w[3]; out->res.pitch2D.height = (size_t)w[4];
        out->res.pitch2D.pitchInBytes = (size_t)w[5];
        break;
    default: break;
    }
    return cudaSuccess;
}

CRICKET_EXPORT cudaError_t cudaGetTextureObjectResourceDesc(struct cudaResourceDesc *pResDesc,
                                                            cudaTextureObject_t texObject)
{ return object_resource_desc(pResDesc, texObject); }
CRICKET_EXPORT cudaError_t cudaGetSurfaceObjectResourceDesc(struct cudaResourceDesc *pResDesc,
                                                            cudaSurfaceObject_t surfObject)
{ return object_resource_desc(pResDesc, surfObject); }
