// Mapped pinned memory: kernels read and write host memory through a device pointer.
// cudaHostAlloc(cudaHostAllocMapped) and cudaHostRegister(cudaHostRegisterMapped) memory, written
// by the host before a launch and read back after each kind of synchronising call.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include "check.h"

__global__ void twice_plus_one(int *v, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        v[i] = 2 * v[i] + 1;
}

static int expect(const int *v, int n, int (*want)(int), const char *what)
{
    for (int i = 0; i < n; i++)
        if (v[i] != want(i)) {
            printf("FAIL: %s: element %d is %d, expected %d\n", what, i, v[i], want(i));
            return 1;
        }
    return report(what, 0);
}

static int once(int i) { return 2 * i + 1; }
static int twice(int i) { return 2 * (2 * i + 1) + 1; }
static int from_seven(int i) { return 2 * (7 * i) + 1; }
static int minus_one(int i) { return 2 * (-i) + 1; }

int main()
{
    const int n = 3000;              // not a multiple of the block: the tail is checked too
    const size_t bytes = n * sizeof(int);
    const int blocks = (n + 255) / 256;
    int bad = 0;

    CHECK(cudaSetDeviceFlags(cudaDeviceMapHost));
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    if (!prop.canMapHostMemory) {
        printf("SKIP: the device cannot map host memory\n");
        return 0;
    }

    // cudaHostAlloc'ed mapped memory
    int *host = nullptr, *dev = nullptr;
    const unsigned flags = cudaHostAllocMapped | cudaHostAllocPortable;
    CHECK(cudaHostAlloc((void **)&host, bytes, flags));
    unsigned got_flags = 0;
    CHECK(cudaHostGetFlags(&got_flags, host));
    bad |= report("cudaHostGetFlags returns the allocation's flags", got_flags != flags);
    CHECK(cudaHostGetDevicePointer((void **)&dev, host, 0));

    for (int i = 0; i < n; i++)
        host[i] = i;
    twice_plus_one<<<blocks, 256>>>(dev, n);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    bad |= expect(host, n, once, "host writes reach the kernel, its writes the host after cudaDeviceSynchronize");

    for (int i = 0; i < n; i++)
        host[i] = i;
    twice_plus_one<<<blocks, 256>>>(dev, n);
    twice_plus_one<<<blocks, 256>>>(dev, n);
    CHECK(cudaStreamSynchronize(0));
    bad |= expect(host, n, twice, "two launches in a row, then cudaStreamSynchronize");

    cudaPointerAttributes attr;
    CHECK(cudaPointerGetAttributes(&attr, host));
    bad |= report("cudaPointerGetAttributes: host memory with its device pointer",
                  attr.type != cudaMemoryTypeHost || attr.devicePointer != dev || attr.hostPointer != host);
    if (prop.unifiedAddressing) {
        // under unified addressing the host pointer of cudaHostAlloc memory is a device pointer
        for (int i = 0; i < n; i++)
            host[i] = 7 * i;
        twice_plus_one<<<blocks, 256>>>(host, n);
        CHECK(cudaGetLastError());
        cudaEvent_t done;
        CHECK(cudaEventCreate(&done));
        CHECK(cudaEventRecord(done, 0));
        CHECK(cudaEventSynchronize(done));
        CHECK(cudaEventDestroy(done));
        bad |= expect(host, n, from_seven, "the host pointer as a kernel argument, then cudaEventSynchronize");
    }

    // copies name mapped memory by either pointer; a blocking copy synchronises
    int *buffer = nullptr;
    CHECK(cudaMalloc((void **)&buffer, bytes));
    for (int i = 0; i < n; i++)
        host[i] = -i;
    CHECK(cudaMemcpy(buffer, dev, bytes, cudaMemcpyDefault));
    twice_plus_one<<<blocks, 256>>>(buffer, n);
    int *plain = (int *)malloc(bytes);
    CHECK(cudaMemcpy(plain, buffer, bytes, cudaMemcpyDeviceToHost));
    bad |= expect(plain, n, minus_one, "cudaMemcpyDefault from a mapped device pointer");
    for (int i = 0; i < n; i++)
        host[i] = -i;
    twice_plus_one<<<blocks, 256>>>(dev, n);
    CHECK(cudaMemcpy(plain, buffer, sizeof(int), cudaMemcpyDeviceToHost));    // synchronises
    bad |= expect(host, n, minus_one, "kernel writes visible after a blocking copy");
    CHECK(cudaFree(buffer));
    CHECK(cudaFreeHost(host));

    // registered memory, mapped
    int *reg = nullptr;
    if (posix_memalign((void **)&reg, 4096, bytes) != 0)
        return report("posix_memalign", 1);
    CHECK(cudaHostRegister(reg, bytes, cudaHostRegisterMapped));
    int *reg_dev = nullptr;
    CHECK(cudaHostGetDevicePointer((void **)&reg_dev, reg, 0));
    CHECK(cudaHostGetFlags(&got_flags, reg));
    bad |= report("registered memory reports cudaHostRegisterMapped", !(got_flags & cudaHostRegisterMapped));
    for (int i = 0; i < n; i++)
        reg[i] = i;
    cudaStream_t stream;
    CHECK(cudaStreamCreate(&stream));
    twice_plus_one<<<blocks, 256, 0, stream>>>(reg_dev, n);
    while (cudaStreamQuery(stream) == cudaErrorNotReady) {
    }
    bad |= expect(reg, n, once, "cudaHostRegister'ed memory, after a cudaStreamQuery that says done");
    CHECK(cudaStreamDestroy(stream));
    CHECK(cudaHostUnregister(reg));
    free(reg);
    free(plain);

    // write-combined memory is accepted (and reported)
    void *wc = nullptr;
    CHECK(cudaHostAlloc(&wc, 4096, cudaHostAllocWriteCombined));
    CHECK(cudaHostGetFlags(&got_flags, wc));
    bad |= report("write-combined host memory", got_flags != cudaHostAllocWriteCombined);
    CHECK(cudaFreeHost(wc));

    return bad ? 1 : report("mapped pinned memory", 0);
}
