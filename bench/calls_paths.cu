// The static-cudart path against the -cudart shared path, for bench/calls.py: built twice by nvcc,
// with the default flags (NVIDIA's static cudart → cricket's libcuda.so.1 replacement) and with
// -cudart shared (→ cricket's libcudart shim), both run through `cricket run` on one server.
// Prints "NAME MICROSECONDS" lines (per call; copies per copy).
//   calls_paths ITERATIONS MAX_COPY_BYTES
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

#include "../examples/bench_timing.h"

__global__ void empty() {}

#define CHECK(call) do { cudaError_t e_ = (call); if (e_ != cudaSuccess) { \
    fprintf(stderr, "FAIL %s: %s\n", #call, cudaGetErrorName(e_)); return 1; } } while (0)

static void must(cudaError_t e, const char *what)
{
    if (e != cudaSuccess) {
        fprintf(stderr, "FAIL %s: %s\n", what, cudaGetErrorName(e));
        exit(1);
    }
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 200;
    size_t max_copy = argc > 2 ? strtoull(argv[2], nullptr, 0) : (16u << 20);
    int count, dev, value;
    CHECK(cudaGetDeviceCount(&count));              // starts the client and connects
    // answered in the process on both paths
    TIME("cudaGetDeviceCount", n * 10, CHECK(cudaGetDeviceCount(&count)));
    TIME("cudaGetDevice", n * 10, CHECK(cudaGetDevice(&dev)));
    TIME("cudaDeviceGetAttribute", n * 10, CHECK(cudaDeviceGetAttribute(&value, cudaDevAttrWarpSize, 0)));
    // forwarded
    TIME("malloc_free", n, void *p; CHECK(cudaMalloc(&p, 4096)); CHECK(cudaFree(p)));
    empty<<<1, 1>>>();                               // module load, first launch
    CHECK(cudaDeviceSynchronize());
    TIME("launch_sync", n, empty<<<1, 1>>>(); CHECK(cudaDeviceSynchronize()));
    printf("launch_async_issue %.3f\n", issue_median_us([] { empty<<<1, 1>>>(); },
                                                         [] { must(cudaDeviceSynchronize(), "cudaDeviceSynchronize"); }, n));
    TIME("synchronize", n, CHECK(cudaDeviceSynchronize()));
    char *h, *d;
    CHECK(cudaMallocHost((void **)&h, max_copy));
    CHECK(cudaMalloc((void **)&d, max_copy));
    memset(h, 1, max_copy);
    for (size_t size = 4096; size <= max_copy; size *= 4) {
        printf("htod_%zu %.3f\n", size, median_us([&] {
            must(cudaMemcpy(d, h, size, cudaMemcpyHostToDevice), "cudaMemcpy H->D"); }, 3));
        printf("dtoh_%zu %.3f\n", size, median_us([&] {
            must(cudaMemcpy(h, d, size, cudaMemcpyDeviceToHost), "cudaMemcpy D->H"); }, 3));
    }
    for (size_t i = 0; i < max_copy; i += 4096)
        if (h[i] != 1) {
            fprintf(stderr, "FAIL: D→H copy returned other bytes at %zu\n", i);
            return 1;
        }
    CHECK(cudaFreeHost(h));
    CHECK(cudaFree(d));
    return 0;
}
