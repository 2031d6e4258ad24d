// The driver's virtual memory management as allocators use it: a buffer that grows in place. An
// address range is reserved once; each growth maps one more physical allocation after the last,
// and a kernel (runtime API) sees one contiguous buffer whose earlier contents stay where they were.
#include <cstdint>
#include <vector>
#include "check.h"
#include "driver_check.h"

__global__ void add_index(int *v, size_t n, int round)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n)
        v[i] += (int)i + round;
}

int main()
{
    int bad = 0;
    CUdevice dev;
    CUcontext primary;                            // the context the runtime API uses
    DRV(cuInit(0));
    DRV(cuDeviceGet(&dev, 0));
    DRV(cuDevicePrimaryCtxRetain(&primary, dev));
    DRV(cuCtxSetCurrent(primary));
    int vmm = 0;
    DRV(cuDeviceGetAttribute(&vmm, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, dev));
    bad |= report("CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED is 1", vmm != 1);

    CUmemAllocationProp prop = {};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = dev;
    size_t chunk = 0;
    DRV(cuMemGetAllocationGranularity(&chunk, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
    const int chunks = 3;
    CUdeviceptr base = 0;
    DRV(cuMemAddressReserve(&base, chunks * chunk, 0, 0, 0));
    CUmemAccessDesc access = {};
    access.location = prop.location;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;

    std::vector<CUmemGenericAllocationHandle> handles;
    std::vector<int> host;
    for (int round = 0; round < chunks; round++) {
        CUmemGenericAllocationHandle h;
        DRV(cuMemCreate(&h, chunk, &prop, 0));
        DRV(cuMemMap(base + round * chunk, chunk, 0, h, 0));
        DRV(cuMemSetAccess(base + round * chunk, chunk, &access, 1));
        handles.push_back(h);
        size_t n = (round + 1) * chunk / sizeof(int);
        CHECK(cudaMemset((char *)base + round * chunk, 0, chunk));     // the new part starts at zero
        add_index<<<(unsigned)((n + 255) / 256), 256>>>((int *)base, n, round);
        CHECK(cudaGetLastError());
        host.resize(n);
        CHECK(cudaMemcpy(host.data(), (void *)base, n * sizeof(int), cudaMemcpyDeviceToHost));
        size_t wrong = 0;
        for (size_t i = 0; i < n; i++) {
            size_t part = i / (chunk / sizeof(int));        // the round that mapped it
            long want = 0;
            for (int r = (int)part; r <= round; r++)
                want += (long)i + r;
            wrong += host[i] != (int)want;
        }
        char what[80];
        snprintf(what, sizeof what, "grown to %d chunk(s): the kernel sees one buffer, older parts kept", round + 1);
        bad |= report(what, wrong != 0);
    }

    bad |= expect("cuMemCreate of a size that is not a multiple of the granularity",
                  cuMemCreate(&handles[0], chunk / 2, &prop, 0), CUDA_ERROR_INVALID_VALUE);
    DRV(cuMemUnmap(base, chunks * chunk));
    for (CUmemGenericAllocationHandle h : handles)
        DRV(cuMemRelease(h));
    DRV(cuMemAddressFree(base, chunks * chunk));
    return report("virtual memory management: a growable buffer", bad);
}
