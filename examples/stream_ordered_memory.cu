// Stream-ordered memory: cudaMallocAsync/cudaFreeAsync from the default pool and from pools made
// with cudaMemPoolCreate, their attributes (release threshold, reserved and used memory), trimming,
// the device's current pool, and the errors the runtime API documents for misuse.
#include <cstdint>
#include <vector>
#include "check.h"

__global__ void fill(int *v, int n, int base)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        v[i] = base + i;
}

__global__ void add(int *dst, const int *a, const int *b, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        dst[i] = a[i] + b[i];
}

static uint64_t attr(cudaMemPool_t pool, cudaMemPoolAttr which)
{
    uint64_t v = 0;
    CHECK(cudaMemPoolGetAttribute(pool, which, &v));
    return v;
}

int main()
{
    const int n = 5000;
    const size_t bytes = n * sizeof(int);
    const int blocks = (n + 255) / 256;
    int bad = 0;

    int pools_supported = 0;
    CHECK(cudaDeviceGetAttribute(&pools_supported, cudaDevAttrMemoryPoolsSupported, 0));
    bad |= report("cudaDevAttrMemoryPoolsSupported is 1", pools_supported != 1);

    cudaStream_t stream;
    CHECK(cudaStreamCreate(&stream));
    cudaMemPool_t def, current;
    CHECK(cudaDeviceGetDefaultMemPool(&def, 0));
    CHECK(cudaDeviceGetMemPool(&current, 0));
    bad |= report("the default pool is the device's current pool", def != current);

    // allocate, compute and free in stream order, without a synchronisation in between
    int *a, *b, *sum;
    CHECK(cudaMallocAsync((void **)&a, bytes, stream));
    CHECK(cudaMallocAsync((void **)&b, bytes, stream));
    CHECK(cudaMallocAsync((void **)&sum, bytes, stream));
    bad |= report("cudaMemPoolAttrUsedMemCurrent counts the three allocations",
                  attr(def, cudaMemPoolAttrUsedMemCurrent) < 3 * bytes);
    fill<<<blocks, 256, 0, stream>>>(a, n, 1);
    fill<<<blocks, 256, 0, stream>>>(b, n, 1000);
    add<<<blocks, 256, 0, stream>>>(sum, a, b, n);
    CHECK(cudaFreeAsync(a, stream));
    CHECK(cudaFreeAsync(b, stream));
    std::vector<int> host(n);
    CHECK(cudaMemcpyAsync(host.data(), sum, bytes, cudaMemcpyDeviceToHost, stream));
    CHECK(cudaFreeAsync(sum, stream));
    CHECK(cudaStreamSynchronize(stream));
    int wrong = 0;
    for (int i = 0; i < n; i++)
        wrong += host[i] != 1001 + 2 * i;
    bad |= report("kernels see memory from cudaMallocAsync before its cudaFreeAsync", wrong != 0);
    bad |= report("nothing is in use after the frees", attr(def, cudaMemPoolAttrUsedMemCurrent) != 0);
    bad |= report("the high-water mark of used memory stays", attr(def, cudaMemPoolAttrUsedMemHigh) < 3 * bytes);

    // a release threshold keeps freed memory in the pool; trimming gives it back
    uint64_t keep = UINT64_MAX;
    CHECK(cudaMemPoolSetAttribute(def, cudaMemPoolAttrReleaseThreshold, &keep));
    bad |= report("the release threshold reads back", attr(def, cudaMemPoolAttrReleaseThreshold) != UINT64_MAX);
    int *c;
    CHECK(cudaMallocAsync((void **)&c, bytes, stream));
    CHECK(cudaFreeAsync(c, stream));
    CHECK(cudaStreamSynchronize(stream));
    bad |= report("memory freed under the threshold stays reserved", attr(def, cudaMemPoolAttrReservedMemCurrent) < bytes);
    CHECK(cudaMemPoolTrimTo(def, 0));
    bad |= report("cudaMemPoolTrimTo(0) releases it", attr(def, cudaMemPoolAttrReservedMemCurrent) != 0);
    uint64_t zero = 0;
    CHECK(cudaMemPoolSetAttribute(def, cudaMemPoolAttrReservedMemHigh, &zero));
    bad |= report("resetting the reserved high-water mark", attr(def, cudaMemPoolAttrReservedMemHigh) != 0);

    // an explicit pool with a maximum size, made the device's current pool
    cudaMemPoolProps props = {};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = 0;
    props.maxSize = 1 << 20;
    cudaMemPool_t pool;
    CHECK(cudaMemPoolCreate(&pool, &props));
    int *d;
    CHECK(cudaMallocFromPoolAsync((void **)&d, bytes, pool, stream));
    fill<<<blocks, 256, 0, stream>>>(d, n, 7);
    CHECK(cudaMemcpyAsync(host.data(), d, bytes, cudaMemcpyDeviceToHost, stream));
    CHECK(cudaStreamSynchronize(stream));
    bad |= report("cudaMallocFromPoolAsync memory holds a kernel's writes", host[n - 1] != 7 + n - 1);
    bad |= report("the pool counts its allocation", attr(pool, cudaMemPoolAttrUsedMemCurrent) < bytes);
    void *too_big = nullptr;
    bad |= expect_status(cudaMallocFromPoolAsync(&too_big, 2 << 20, pool, stream), cudaErrorMemoryAllocation,
                        "an allocation past the pool's maxSize is cudaErrorMemoryAllocation");
    CHECK(cudaDeviceSetMemPool(0, pool));
    CHECK(cudaDeviceGetMemPool(&current, 0));
    bad |= report("cudaDeviceSetMemPool makes it current", current != pool);
    int *e;
    CHECK(cudaMallocAsync((void **)&e, 4096, stream));
    bad |= report("cudaMallocAsync allocates from the current pool", attr(pool, cudaMemPoolAttrUsedMemCurrent) < bytes + 4096);
    CHECK(cudaFreeAsync(e, stream));
    CHECK(cudaFreeAsync(d, stream));
    CHECK(cudaStreamSynchronize(stream));
    CHECK(cudaMemPoolDestroy(pool));
    CHECK(cudaDeviceGetMemPool(&current, 0));
    bad |= report("destroying the current pool makes the default one current again", current != def);

    // misuse, with the codes the runtime API documents
    props.allocType = cudaMemAllocationTypeInvalid;
    bad |= expect_status(cudaMemPoolCreate(&pool, &props), cudaErrorInvalidValue,
                        "a pool of an invalid allocation type is cudaErrorInvalidValue");
    uint64_t one = 1;
    bad |= expect_status(cudaMemPoolSetAttribute(def, cudaMemPoolAttrUsedMemHigh, &one), cudaErrorInvalidValue,
                        "setting a high-water mark to non-zero is cudaErrorInvalidValue");

    CHECK(cudaStreamDestroy(stream));
    return report("stream-ordered memory", bad);
}
