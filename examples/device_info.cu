// Device management answered from the server's HELLO snapshot: count, properties, attributes.
#include "check.h"
#include <cstring>

int main()
{
    int count = 0, dev = -1, runtime = 0, driver = 0, sm = 0;
    CHECK(cudaGetDeviceCount(&count));
    CHECK(cudaSetDevice(0));
    CHECK(cudaGetDevice(&dev));
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    CHECK(cudaDeviceGetAttribute(&sm, cudaDevAttrMultiProcessorCount, 0));
    CHECK(cudaRuntimeGetVersion(&runtime));
    CHECK(cudaDriverGetVersion(&driver));
    size_t free_mem = 0, total = 0;
    CHECK(cudaMemGetInfo(&free_mem, &total));
    printf("%d device(s); device %d: %s, sm_%d%d, %d SMs, %zu MiB, %d threads/block, runtime %d\n",
           count, dev, prop.name, prop.major, prop.minor, prop.multiProcessorCount,
           prop.totalGlobalMem >> 20, prop.maxThreadsPerBlock, runtime);
    int bad = count < 1 || dev != 0 || strlen(prop.name) == 0 || prop.maxThreadsPerBlock <= 0
              || sm != prop.multiProcessorCount || total == 0 || free_mem > total || runtime < 13000
              || cudaSetDevice(count) != cudaErrorInvalidDevice;
    cudaGetLastError();
    // cudaDeviceReset frees what this process allocated; the runtime stays usable
    void *p = nullptr;
    cudaStream_t s;
    CHECK(cudaMalloc(&p, 1 << 20));
    CHECK(cudaStreamCreate(&s));
    CHECK(cudaDeviceReset());
    // the stream went with the reset: cuStreamSynchronize's CUDA_ERROR_INVALID_HANDLE, which cudart
    // passes on as cudaErrorInvalidResourceHandle
    bad += cudaStreamSynchronize(s) != cudaErrorInvalidResourceHandle;
    cudaGetLastError();
    // cudaErrorInvalidValue, as the runtime API docs of cudaFree give it (CUDA 10.1 deprecated
    // cudaErrorInvalidDevicePointer): the allocation went with the reset
    bad += cudaFree(p) != cudaErrorInvalidValue;
    cudaGetLastError();
    CHECK(cudaMalloc(&p, 1 << 20));
    CHECK(cudaFree(p));
    return report("device management", bad);
}
