// Copies of every size class through the libcudart shim, checked byte for byte: below the
// shared-memory threshold, one part, several parts, and larger than the whole shared region.
// Synchronous and asynchronous, from and to pageable and pinned memory, and the ordering of an
// asynchronous device-to-host copy against later work on its stream. Prints PASS or FAIL.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

#define CHECK(x)                                                                  \
    do {                                                                          \
        cudaError_t e_ = (x);                                                     \
        if (e_ != cudaSuccess) {                                                  \
            printf("FAIL: %s: %s (line %d)\n", #x, cudaGetErrorName(e_), __LINE__); \
            return 1;                                                             \
        }                                                                         \
    } while (0)

static void fill(unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)((i * 2654435761u + seed) >> 7);
}

static int same(const unsigned char *a, const unsigned char *b, size_t n, const char *what, size_t size)
{
    for (size_t i = 0; i < n; i++)
        if (a[i] != b[i]) {
            printf("FAIL: %s of %zu bytes differs at byte %zu\n", what, size, i);
            return 0;
        }
    return 1;
}

int main()
{
    // 4 KiB (inline), 64 KiB - 1, 64 KiB + 3, 1 MiB + 5 (parts), 5 MiB + 7 (several slots),
    // 40 MiB + 9 (more than the default 32 MiB region)
    const size_t sizes[] = {4096, 65535, 65539, (1u << 20) + 5, (5u << 20) + 7, (40u << 20) + 9};
    const size_t largest = (40u << 20) + 9;
    unsigned char *pinned, *pinned_back, *d;
    unsigned char *pageable = (unsigned char *)malloc(largest);
    unsigned char *expect = (unsigned char *)malloc(largest);
    unsigned char *back = (unsigned char *)malloc(largest);
    CHECK(cudaMallocHost((void **)&pinned, largest));
    CHECK(cudaMallocHost((void **)&pinned_back, largest));
    CHECK(cudaMalloc((void **)&d, largest + 16));
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    unsigned seed = 1;
    for (size_t size : sizes) {
        // synchronous, pinned → device → pageable, at an odd device offset
        fill(pinned, size, seed++);
        CHECK(cudaMemcpy(d + 3, pinned, size, cudaMemcpyHostToDevice));
        memset(back, 0, size);
        CHECK(cudaMemcpy(back, d + 3, size, cudaMemcpyDeviceToHost));
        if (!same(pinned, back, size, "pinned H2D, pageable D2H", size)) return 1;

        // synchronous from pageable memory (returns once staged), then into pinned memory
        fill(pageable, size, seed++);
        memcpy(expect, pageable, size);
        CHECK(cudaMemcpy(d, pageable, size, cudaMemcpyHostToDevice));
        memset(pageable, 0xEE, size);               // the copy must have taken the bytes already
        memset(pinned_back, 0, size);
        CHECK(cudaMemcpy(pinned_back, d, size, cudaMemcpyDeviceToHost));
        if (!same(expect, pinned_back, size, "pageable H2D, pinned D2H", size)) return 1;

        // asynchronous on a stream: H2D from pinned and from pageable, D2H into pinned, and a
        // memset queued after the D2H that must not reach the host
        fill(pinned, size, seed++);
        memcpy(expect, pinned, size);
        CHECK(cudaMemcpyAsync(d, pinned, size, cudaMemcpyHostToDevice, s));
        fill(pageable, size, seed++);
        CHECK(cudaMemcpyAsync(d + 16, pageable, size / 2, cudaMemcpyHostToDevice, s));
        memcpy(expect + 16, pageable, size / 2);
        memset(pageable, 0xDD, size);
        memset(pinned_back, 0, size);
        CHECK(cudaMemcpyAsync(pinned_back, d, size, cudaMemcpyDeviceToHost, s));
        CHECK(cudaMemsetAsync(d, 0x5A, size, s));
        CHECK(cudaStreamSynchronize(s));
        if (!same(expect, pinned_back, size, "asynchronous copies on a stream", size)) return 1;
        CHECK(cudaMemcpy(back, d, size, cudaMemcpyDeviceToHost));
        for (size_t i = 0; i < size; i++)
            if (back[i] != 0x5A) {
                printf("FAIL: memset after the asynchronous copy of %zu bytes is missing at %zu\n", size, i);
                return 1;
            }
    }
    CHECK(cudaStreamDestroy(s));
    CHECK(cudaFree(d));
    CHECK(cudaFreeHost(pinned));
    CHECK(cudaFreeHost(pinned_back));
    free(pageable);
    free(expect);
    free(back);
    printf("PASS\n");
    return 0;
}
