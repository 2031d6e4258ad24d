// Prints every cudaDeviceProp field, every cudaDeviceGetAttribute value and (where a libcuda.so.1 is
// there to ask) every cuDeviceGetAttribute value of device 0, one "KIND NAME = VALUE" line each,
// so that runs through different faces can be compared line by line. Self-check: the runtime's and
// the driver's answer to each attribute agree.
#include <cstring>
#include <cuda.h>           // CUdevice_attribute (no libcuda link: it is opened at run time)
#include <dlfcn.h>
#include "check.h"

#define ATTRIBUTE_MAX CU_DEVICE_ATTRIBUTE_MAX

typedef int (*cu_init_t)(unsigned int);
typedef int (*cu_device_get_attribute_t)(int *, int, int);

static void print_properties(const cudaDeviceProp &p)
{
    printf("prop name = %s\n", p.name);
    printf("prop uuid =");
    for (int i = 0; i < 16; i++) printf(" %02x", (unsigned char)p.uuid.bytes[i]);
    printf("\n");
    for (int i = 0; i < 8; i++) printf("prop luid[%d] = %d\n", i, (int)p.luid[i]);
    printf("prop luidDeviceNodeMask = %lld\n", (long long)p.luidDeviceNodeMask);
    printf("prop totalGlobalMem = %lld\n", (long long)p.totalGlobalMem);
    printf("prop sharedMemPerBlock = %lld\n", (long long)p.sharedMemPerBlock);
    printf("prop regsPerBlock = %lld\n", (long long)p.regsPerBlock);
    printf("prop warpSize = %lld\n", (long long)p.warpSize);
    printf("prop memPitch = %lld\n", (long long)p.memPitch);
    printf("prop maxThreadsPerBlock = %lld\n", (long long)p.maxThreadsPerBlock);
    for (int i = 0; i < 3; i++) printf("prop maxThreadsDim[%d] = %lld\n", i, (long long)p.maxThreadsDim[i]);
    for (int i = 0; i < 3; i++) printf("prop maxGridSize[%d] = %lld\n", i, (long long)p.maxGridSize[i]);
    printf("prop totalConstMem = %lld\n", (long long)p.totalConstMem);
    printf("prop major = %lld\n", (long long)p.major);
    printf("prop minor = %lld\n", (long long)p.minor);
    printf("prop textureAlignment = %lld\n", (long long)p.textureAlignment);
    printf("prop texturePitchAlignment = %lld\n", (long long)p.texturePitchAlignment);
    printf("prop multiProcessorCount = %lld\n", (long long)p.multiProcessorCount);
    printf("prop integrated = %lld\n", (long long)p.integrated);
    printf("prop canMapHostMemory = %lld\n", (long long)p.canMapHostMemory);
    printf("prop maxTexture1D = %lld\n", (long long)p.maxTexture1D);
    printf("prop maxTexture1DMipmap = %lld\n", (long long)p.maxTexture1DMipmap);
    for (int i = 0; i < 2; i++) printf("prop maxTexture2D[%d] = %lld\n", i, (long long)p.maxTexture2D[i]);
    for (int i = 0; i < 2; i++) printf("prop maxTexture2DMipmap[%d] = %lld\n", i, (long long)p.maxTexture2DMipmap[i]);
    for (int i = 0; i < 3; i++) printf("prop maxTexture2DLinear[%d] = %lld\n", i, (long long)p.maxTexture2DLinear[i]);
    for (int i = 0; i < 2; i++) printf("prop maxTexture2DGather[%d] = %lld\n", i, (long long)p.maxTexture2DGather[i]);
    for (int i = 0; i < 3; i++) printf("prop maxTexture3D[%d] = %lld\n", i, (long long)p.maxTexture3D[i]);
    for (int i = 0; i < 3; i++) printf("prop maxTexture3DAlt[%d] = %lld\n", i, (long long)p.maxTexture3DAlt[i]);
    printf("prop maxTextureCubemap = %lld\n", (long long)p.maxTextureCubemap);
    for (int i = 0; i < 2; i++) printf("prop maxTexture1DLayered[%d] = %lld\n", i, (long long)p.maxTexture1DLayered[i]);
    for (int i = 0; i < 3; i++) printf("prop maxTexture2DLayered[%d] = %lld\n", i, (long long)p.maxTexture2DLayered[i]);
    for (int i = 0; i < 2; i++) printf("prop maxTextureCubemapLayered[%d] = %lld\n", i, (long long)p.maxTextureCubemapLayered[i]);
    printf("prop maxSurface1D = %lld\n", (long long)p.maxSurface1D);
    for (int i = 0; i < 2; i++) printf("prop maxSurface2D[%d] = %lld\n", i, (long long)p.maxSurface2D[i]);
    for (int i = 0; i < 3; i++) printf("prop maxSurface3D[%d] = %lld\n", i, (long long)p.maxSurface3D[i]);
    for (int i = 0; i < 2; i++) printf("prop maxSurface1DLayered[%d] = %lld\n", i, (long long)p.maxSurface1DLayered[i]);
    for (int i = 0; i < 3; i++) printf("prop maxSurface2DLayered[%d] = %lld\n", i, (long long)p.maxSurface2DLayered[i]);
    printf("prop maxSurfaceCubemap = %lld\n", (long long)p.maxSurfaceCubemap);
    for (int i = 0; i < 2; i++) printf("prop maxSurfaceCubemapLayered[%d] = %lld\n", i, (long long)p.maxSurfaceCubemapLayered[i]);
    printf("prop surfaceAlignment = %lld\n", (long long)p.surfaceAlignment);
    printf("prop concurrentKernels = %lld\n", (long long)p.concurrentKernels);
    printf("prop ECCEnabled = %lld\n", (long long)p.ECCEnabled);
    printf("prop pciBusID = %lld\n", (long long)p.pciBusID);
    printf("prop pciDeviceID = %lld\n", (long long)p.pciDeviceID);
    printf("prop pciDomainID = %lld\n", (long long)p.pciDomainID);
    printf("prop tccDriver = %lld\n", (long long)p.tccDriver);
    printf("prop asyncEngineCount = %lld\n", (long long)p.asyncEngineCount);
    printf("prop unifiedAddressing = %lld\n", (long long)p.unifiedAddressing);
    printf("prop memoryBusWidth = %lld\n", (long long)p.memoryBusWidth);
    printf("prop l2CacheSize = %lld\n", (long long)p.l2CacheSize);
    printf("prop persistingL2CacheMaxSize = %lld\n", (long long)p.persistingL2CacheMaxSize);
    printf("prop maxThreadsPerMultiProcessor = %lld\n", (long long)p.maxThreadsPerMultiProcessor);
    printf("prop streamPrioritiesSupported = %lld\n", (long long)p.streamPrioritiesSupported);
    printf("prop globalL1CacheSupported = %lld\n", (long long)p.globalL1CacheSupported);
    printf("prop localL1CacheSupported = %lld\n", (long long)p.localL1CacheSupported);
    printf("prop sharedMemPerMultiprocessor = %lld\n", (long long)p.sharedMemPerMultiprocessor);
    printf("prop regsPerMultiprocessor = %lld\n", (long long)p.regsPerMultiprocessor);
    printf("prop managedMemory = %lld\n", (long long)p.managedMemory);
    printf("prop isMultiGpuBoard = %lld\n", (long long)p.isMultiGpuBoard);
    printf("prop multiGpuBoardGroupID = %lld\n", (long long)p.multiGpuBoardGroupID);
    printf("prop hostNativeAtomicSupported = %lld\n", (long long)p.hostNativeAtomicSupported);
    printf("prop pageableMemoryAccess = %lld\n", (long long)p.pageableMemoryAccess);
    printf("prop concurrentManagedAccess = %lld\n", (long long)p.concurrentManagedAccess);
    printf("prop computePreemptionSupported = %lld\n", (long long)p.computePreemptionSupported);
    printf("prop canUseHostPointerForRegisteredMem = %lld\n", (long long)p.canUseHostPointerForRegisteredMem);
    printf("prop cooperativeLaunch = %lld\n", (long long)p.cooperativeLaunch);
    printf("prop sharedMemPerBlockOptin = %lld\n", (long long)p.sharedMemPerBlockOptin);
    printf("prop pageableMemoryAccessUsesHostPageTables = %lld\n", (long long)p.pageableMemoryAccessUsesHostPageTables);
    printf("prop directManagedMemAccessFromHost = %lld\n", (long long)p.directManagedMemAccessFromHost);
    printf("prop maxBlocksPerMultiProcessor = %lld\n", (long long)p.maxBlocksPerMultiProcessor);
    printf("prop accessPolicyMaxWindowSize = %lld\n", (long long)p.accessPolicyMaxWindowSize);
    printf("prop reservedSharedMemPerBlock = %lld\n", (long long)p.reservedSharedMemPerBlock);
    printf("prop hostRegisterSupported = %lld\n", (long long)p.hostRegisterSupported);
    printf("prop sparseCudaArraySupported = %lld\n", (long long)p.sparseCudaArraySupported);
    printf("prop hostRegisterReadOnlySupported = %lld\n", (long long)p.hostRegisterReadOnlySupported);
    printf("prop timelineSemaphoreInteropSupported = %lld\n", (long long)p.timelineSemaphoreInteropSupported);
    printf("prop memoryPoolsSupported = %lld\n", (long long)p.memoryPoolsSupported);
    printf("prop gpuDirectRDMASupported = %lld\n", (long long)p.gpuDirectRDMASupported);
    printf("prop gpuDirectRDMAFlushWritesOptions = %lld\n", (long long)p.gpuDirectRDMAFlushWritesOptions);
    printf("prop gpuDirectRDMAWritesOrdering = %lld\n", (long long)p.gpuDirectRDMAWritesOrdering);
    printf("prop memoryPoolSupportedHandleTypes = %lld\n", (long long)p.memoryPoolSupportedHandleTypes);
    printf("prop deferredMappingCudaArraySupported = %lld\n", (long long)p.deferredMappingCudaArraySupported);
    printf("prop ipcEventSupported = %lld\n", (long long)p.ipcEventSupported);
    printf("prop clusterLaunch = %lld\n", (long long)p.clusterLaunch);
    printf("prop unifiedFunctionPointers = %lld\n", (long long)p.unifiedFunctionPointers);
    printf("prop deviceNumaConfig = %lld\n", (long long)p.deviceNumaConfig);
    printf("prop deviceNumaId = %lld\n", (long long)p.deviceNumaId);
    printf("prop mpsEnabled = %lld\n", (long long)p.mpsEnabled);
    printf("prop hostNumaId = %lld\n", (long long)p.hostNumaId);
    printf("prop gpuPciDeviceID = %lld\n", (long long)p.gpuPciDeviceID);
    printf("prop gpuPciSubsystemID = %lld\n", (long long)p.gpuPciSubsystemID);
    printf("prop hostNumaMultinodeIpcSupported = %lld\n", (long long)p.hostNumaMultinodeIpcSupported);
}

int main()
{
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    print_properties(prop);
    int bad = 0;

    int runtime_values[ATTRIBUTE_MAX] = {0};
    bool runtime_ok[ATTRIBUTE_MAX] = {false};
    for (int a = 1; a < ATTRIBUTE_MAX; a++) {
        int v = 0;
        cudaError_t e = cudaDeviceGetAttribute(&v, (cudaDeviceAttr)a, 0);
        if (e == cudaSuccess) {
            runtime_ok[a] = true;
            runtime_values[a] = v;
            printf("attr %d = %d\n", a, v);
        } else {
            printf("attr %d error %s\n", a, cudaGetErrorName(e));
        }
    }
    int ignored = 0;
    bad |= report("attributes past the last are cudaErrorInvalidValue",
                  cudaDeviceGetAttribute(&ignored, (cudaDeviceAttr)ATTRIBUTE_MAX, 0) != cudaErrorInvalidValue
                  || cudaDeviceGetAttribute(&ignored, (cudaDeviceAttr)0, 0) != cudaErrorInvalidValue);
    cudaGetLastError();

    void *libcuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (!libcuda)
        libcuda = dlopen("libcuda.so.1", RTLD_NOW);
    cu_init_t cu_init = libcuda ? (cu_init_t)dlsym(libcuda, "cuInit") : nullptr;
    cu_device_get_attribute_t cu_attr =
        libcuda ? (cu_device_get_attribute_t)dlsym(libcuda, "cuDeviceGetAttribute") : nullptr;
    if (cu_init && cu_attr && cu_init(0) == 0) {
        int differ = 0;
        for (int a = 1; a < ATTRIBUTE_MAX; a++) {
            int v = 0;
            int e = cu_attr(&v, a, 0);
            if (e == 0) {
                printf("cuattr %d = %d\n", a, v);
                if (runtime_ok[a] && v != runtime_values[a]) {
                    printf("FAIL: attribute %d: cudaDeviceGetAttribute %d, cuDeviceGetAttribute %d\n",
                           a, runtime_values[a], v);
                    differ = 1;
                }
            } else {
                printf("cuattr %d error %d\n", a, e);
            }
        }
        bad |= report("cudaDeviceGetAttribute and cuDeviceGetAttribute agree", differ);
    } else {
        printf("no libcuda.so.1 to ask: %s\n", libcuda ? "cuInit failed" : dlerror());
    }
    return bad ? 1 : report("device query", 0);
}
