// Cache and shared-memory preferences a program sets in passing, and a kernel that uses more than
// 48 KiB of dynamic shared memory after opting in with cudaFuncSetAttribute.
#include "check.h"

// Reverses each block's tile through shared memory: every element goes through the opt-in region.
__global__ void reverse_tiles(const int *in, int *out, int tile)
{
    extern __shared__ int buf[];
    const int *src = in + (size_t)blockIdx.x * tile;
    for (int i = threadIdx.x; i < tile; i += blockDim.x)
        buf[i] = src[i];
    __syncthreads();
    int *dst = out + (size_t)blockIdx.x * tile;
    for (int i = threadIdx.x; i < tile; i += blockDim.x)
        dst[i] = buf[tile - 1 - i];
}

// `got` must be `want`, and the runtime's last error must say the same (and is cleared).
static int expect_error(const char *what, cudaError_t got, cudaError_t want)
{
    cudaError_t last = cudaGetLastError();
    if (got == want && last == want)
        return 0;
    printf("FAIL: %s gave %s (last error %s), expected %s\n", what, cudaGetErrorName(got),
           cudaGetErrorName(last), cudaGetErrorName(want));
    return 1;
}

static int expect_equal(const char *what, int got, int want)
{
    if (got == want)
        return 0;
    printf("FAIL: %s is %d, expected %d\n", what, got, want);
    return 1;
}

int main()
{
    int bad = 0;

    // cache preference: remembered per device; an unknown value is refused
    cudaFuncCache cache = cudaFuncCachePreferNone;
    CHECK(cudaDeviceGetCacheConfig(&cache));
    bad |= expect_equal("the initial cache config", cache, cudaFuncCachePreferNone);
    CHECK(cudaDeviceSetCacheConfig(cudaFuncCachePreferShared));
    CHECK(cudaDeviceGetCacheConfig(&cache));
    bad |= expect_equal("the cache config read back", cache, cudaFuncCachePreferShared);
    bad |= expect_error("cudaDeviceSetCacheConfig(7)", cudaDeviceSetCacheConfig((cudaFuncCache)7), cudaErrorInvalidValue);
    CHECK(cudaFuncSetCacheConfig(reverse_tiles, cudaFuncCachePreferL1));
    bad |= expect_error("cudaFuncSetCacheConfig(9)", cudaFuncSetCacheConfig(reverse_tiles, (cudaFuncCache)9),
                        cudaErrorInvalidValue);

    // shared memory banks: accepted; the device reports its fixed 4-byte banks
    CHECK(cudaDeviceSetSharedMemConfig(cudaSharedMemBankSizeEightByte));
    cudaSharedMemConfig banks = cudaSharedMemBankSizeDefault;
    CHECK(cudaDeviceGetSharedMemConfig(&banks));
    bad |= expect_equal("the bank size read back", banks, cudaSharedMemBankSizeFourByte);
    CHECK(cudaFuncSetSharedMemConfig(reverse_tiles, cudaSharedMemBankSizeFourByte));
    bad |= expect_error("cudaDeviceSetSharedMemConfig(5)", cudaDeviceSetSharedMemConfig((cudaSharedMemConfig)5),
                        cudaErrorInvalidValue);
    bad |= expect_error("cudaFuncSetSharedMemConfig(3)",
                        cudaFuncSetSharedMemConfig(reverse_tiles, (cudaSharedMemConfig)3), cudaErrorInvalidValue);

    // dynamic shared memory past 48 KiB: opt in up to the device's per-block limit
    int optin = 0;
    CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0));
    size_t bytes = optin;
    if (bytes <= 48 * 1024) {
        printf("FAIL: the device offers no opt-in shared memory (%d bytes)\n", optin);
        return 1;
    }
    bad |= expect_error("opting in past the device limit",
                        cudaFuncSetAttribute(reverse_tiles, cudaFuncAttributeMaxDynamicSharedMemorySize, optin + 1),
                        cudaErrorInvalidValue);
    CHECK(cudaFuncSetAttribute(reverse_tiles, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes));
    cudaFuncAttributes attr;
    CHECK(cudaFuncGetAttributes(&attr, reverse_tiles));
    bad |= expect_equal("maxDynamicSharedSizeBytes", attr.maxDynamicSharedSizeBytes, (int)bytes);

    const int tile = (int)(bytes / sizeof(int)), blocks = 3, n = tile * blocks;
    int *h = (int *)malloc(n * sizeof(int)), *r = (int *)malloc(n * sizeof(int));
    for (int i = 0; i < n; i++) h[i] = i * 31 + 7;
    int *din, *dout;
    CHECK(cudaMalloc(&din, n * sizeof(int)));
    CHECK(cudaMalloc(&dout, n * sizeof(int)));
    CHECK(cudaMemcpy(din, h, n * sizeof(int), cudaMemcpyHostToDevice));
    reverse_tiles<<<blocks, 256, bytes>>>(din, dout, tile);
    CHECK(cudaMemcpy(r, dout, n * sizeof(int), cudaMemcpyDeviceToHost));
    int wrong = 0;
    for (int b = 0; b < blocks; b++)
        for (int i = 0; i < tile; i++)
            wrong += r[b * tile + i] != h[b * tile + tile - 1 - i];
    printf("%zu bytes of dynamic shared memory per block, %d wrong elements\n", bytes, wrong);
    bad |= wrong != 0;
    CHECK(cudaFree(din));
    CHECK(cudaFree(dout));
    free(h);
    free(r);
    return report("cache and shared memory configuration, opt-in dynamic shared memory", bad);
}
