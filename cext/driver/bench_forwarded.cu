// Per-call cost of forwarded calls, for bench_forwarded.py: the same program built with nvcc's
// default static cudart (through the libcuda.so.1 replacement) and with -cudart shared (through
// the libcudart shim). Prints "name microseconds-per-call" lines. Not a test.
#include <cstdio>
#include <ctime>
#include <cuda_runtime.h>

__global__ void empty() {}

static double now()
{
    timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

#define CHECK(call) do { cudaError_t e_ = (call); if (e_ != cudaSuccess) { \
    printf("FAIL %s: %s\n", #call, cudaGetErrorName(e_)); return 1; } } while (0)

int main()
{
    const int n = 2000;
    int *d, h = 0;
    CHECK(cudaMalloc(&d, 1 << 20));
    empty<<<1, 1>>>();                       // module load, first launch
    CHECK(cudaDeviceSynchronize());
    double t = now();
    for (int i = 0; i < n; i++)
        CHECK(cudaMemcpy(d, &h, sizeof h, cudaMemcpyHostToDevice));
    printf("memcpy_htod_4B %.2f\n", (now() - t) / n * 1e6);
    t = now();
    for (int i = 0; i < n; i++)
        CHECK(cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost));
    printf("memcpy_dtoh_4B %.2f\n", (now() - t) / n * 1e6);
    t = now();
    for (int i = 0; i < n; i++)
        empty<<<1, 1>>>();
    double issued = now();
    CHECK(cudaDeviceSynchronize());
    printf("launch_issue %.2f\n", (issued - t) / n * 1e6);
    t = now();
    for (int i = 0; i < n; i++)
        CHECK(cudaDeviceSynchronize());
    printf("synchronize %.2f\n", (now() - t) / n * 1e6);
    t = now();
    for (int i = 0; i < n / 4; i++) {
        void *p;
        CHECK(cudaMalloc(&p, 4096));
        CHECK(cudaFree(p));
    }
    printf("malloc_free_pair %.2f\n", (now() - t) / (n / 4) * 1e6);
    CHECK(cudaFree(d));
    return 0;
}
