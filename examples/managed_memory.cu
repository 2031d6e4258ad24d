// Managed memory: cudaMallocManaged and __managed__ variables, read and written by the host and by
// kernels, coherent after each synchronisation (a device without concurrent managed access);
// prefetching, advice, copies and memsets that name managed memory, pointer attributes, and the
// errors the runtime API documents.
#include <cstdint>
#include "check.h"

__managed__ int counter = 5;
__managed__ float table[1000];

__global__ void scale_add(int *v, int n, int mul, int add)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        v[i] = v[i] * mul + add;
}

__global__ void count_and_fill()
{
    atomicAdd(&counter, 1);
    table[threadIdx.x] = 0.5f * threadIdx.x;
}

int main()
{
    const int n = 1 << 20;                  // 4 MiB: a thousand pages, of which the host changes few
    const int blocks = (n + 255) / 256;
    int bad = 0;

    int managed = 0, concurrent = -1;
    CHECK(cudaDeviceGetAttribute(&managed, cudaDevAttrManagedMemory, 0));
    CHECK(cudaDeviceGetAttribute(&concurrent, cudaDevAttrConcurrentManagedAccess, 0));
    bad |= report("cudaDevAttrManagedMemory is 1", managed != 1);
    bad |= report("cudaDevAttrConcurrentManagedAccess is 0", concurrent != 0);

    int *v = nullptr;
    CHECK(cudaMallocManaged((void **)&v, n * sizeof(int)));
    for (int i = 0; i < n; i++)
        v[i] = i;
    scale_add<<<blocks, 256>>>(v, n, 2, 1);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    int wrong = 0;
    for (int i = 0; i < n; i++)
        wrong += v[i] != 2 * i + 1;
    bad |= report("host writes reach a kernel, its writes the host after cudaDeviceSynchronize", wrong != 0);

    // the host changes a few scattered elements: a later kernel sees them and the rest unchanged
    v[0] = -7;
    v[n / 2] = 1000;
    v[n - 1] = 3;
    cudaStream_t stream;
    CHECK(cudaStreamCreate(&stream));
    scale_add<<<blocks, 256, 0, stream>>>(v, n, 1, 10);
    CHECK(cudaStreamSynchronize(stream));
    wrong = (v[0] != 3) + (v[n / 2] != 1010) + (v[n - 1] != 13) + (v[1] != 13) + (v[n - 2] != 2 * (n - 2) + 11);
    bad |= report("a few host changes between kernels, after cudaStreamSynchronize", wrong != 0);

    // prefetching and advice are accepted for managed memory
    cudaMemLocation device = {cudaMemLocationTypeDevice, 0};
    cudaMemLocation host_location = {cudaMemLocationTypeHost, 0};
    for (int i = 0; i < 256; i++)
        v[i] = 1;
    CHECK(cudaMemAdvise(v, n * sizeof(int), cudaMemAdviseSetReadMostly, device));
    CHECK(cudaStreamAttachMemAsync(stream, v, 0, cudaMemAttachSingle));
    CHECK(cudaMemPrefetchAsync(v, n * sizeof(int), device, 0, stream));
    scale_add<<<1, 256, 0, stream>>>(v, 256, 3, 0);
    CHECK(cudaMemPrefetchAsync(v, n * sizeof(int), host_location, 0, stream));
    CHECK(cudaStreamSynchronize(stream));
    bad |= report("attached to a stream, prefetched to the device and back", v[0] != 3 || v[255] != 3);

    // copies and memsets that name managed memory
    int *plain = nullptr;
    CHECK(cudaMalloc((void **)&plain, 1024 * sizeof(int)));
    CHECK(cudaMemset(plain, 0, 1024 * sizeof(int)));
    CHECK(cudaMemcpy(v, plain, 1024 * sizeof(int), cudaMemcpyDefault));
    bad |= report("cudaMemcpy from device memory into managed memory", v[0] != 0 || v[1023] != 0 || v[1024] == 0);
    CHECK(cudaMemset(v + 2048, 0xff, 4 * sizeof(int)));
    bad |= report("cudaMemset of managed memory reaches the host", v[2048] != -1 || v[2051] != -1 || v[2052] == -1);
    v[5] = 42;
    int back = 0;
    CHECK(cudaMemcpy(plain, v, 1024 * sizeof(int), cudaMemcpyDefault));
    CHECK(cudaMemcpy(&back, plain + 5, sizeof(int), cudaMemcpyDeviceToHost));
    bad |= report("cudaMemcpy from managed memory takes the host's writes", back != 42);

    // an asynchronous copy into managed memory, then a kernel in the same stream that reads it
    CHECK(cudaMemsetAsync(plain, 0x01, 1024 * sizeof(int), stream));
    CHECK(cudaMemcpyAsync(v, plain, 1024 * sizeof(int), cudaMemcpyDefault, stream));
    scale_add<<<4, 256, 0, stream>>>(v, 1024, 1, 1);
    CHECK(cudaStreamSynchronize(stream));
    bad |= report("a kernel sees an asynchronous copy into managed memory before it",
                  v[0] != 0x01010102 || v[1023] != 0x01010102);

    cudaPointerAttributes attrs;
    CHECK(cudaPointerGetAttributes(&attrs, v + 3));
    bad |= report("cudaPointerGetAttributes says cudaMemoryTypeManaged",
                  attrs.type != cudaMemoryTypeManaged || attrs.devicePointer != v + 3 || attrs.hostPointer != v + 3);

    // __managed__ variables: their initial values, host writes, kernel writes
    bad |= report("a __managed__ variable starts with its initial value", counter != 5);
    counter = 100;
    count_and_fill<<<1, 64>>>();
    CHECK(cudaDeviceSynchronize());
    bad |= report("a __managed__ variable after a kernel's atomicAdd", counter != 164);
    bad |= report("a __managed__ array after a kernel", table[63] != 31.5f || table[64] != 0.0f);

    // misuse, with the codes the runtime API documents
    void *none = nullptr;
    // the reference says cudaErrorInvalidValue; NVIDIA's cudart 13 gives NULL and cudaSuccess
    none = &none;
    bad |= expect_status(cudaMallocManaged(&none, 0), cudaSuccess, "cudaMallocManaged of 0 bytes succeeds");
    bad |= report("... with a NULL pointer", none != nullptr);
    bad |= expect_status(cudaMallocManaged(&none, 64, 0), cudaErrorInvalidValue,
                        "cudaMallocManaged with flags 0 is cudaErrorInvalidValue");
    bad |= expect_status(cudaMemPrefetchAsync(plain, 64, device, 0, stream), cudaErrorInvalidValue,
                        "prefetching memory that is not managed is cudaErrorInvalidValue");

    CHECK(cudaFree(plain));
    CHECK(cudaFree(v));
    CHECK(cudaStreamDestroy(stream));
    return report("managed memory", bad);
}
