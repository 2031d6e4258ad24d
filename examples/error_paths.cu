// Errors reach the program as CUDA reports them: a too large allocation, an invalid launch
// configuration, and an out-of-bounds kernel reported at the next synchronising call.
#include "check.h"

__global__ void write_at(int *p, long long index) { p[index] = 1; }

static int expect(const char *what, cudaError_t got, cudaError_t want)
{
    if (got == want) return 0;
    printf("FAIL: %s returned %s, expected %s\n", what, cudaGetErrorName(got), cudaGetErrorName(want));
    return 1;
}

int main()
{
    int bad = 0;
    void *huge = nullptr;
    bad += expect("cudaMalloc(1 PiB)", cudaMalloc(&huge, 1ull << 50), cudaErrorMemoryAllocation);
    bad += expect("cudaGetLastError after it", cudaGetLastError(), cudaErrorMemoryAllocation);
    bad += expect("cudaGetLastError again", cudaGetLastError(), cudaSuccess);

    int *d;
    CHECK(cudaMalloc(&d, 16 * sizeof(int)));
    write_at<<<1, 4096>>>(d, 0);      // more threads per block than any device allows
    bad += expect("launch with 4096 threads per block", cudaGetLastError(), cudaErrorInvalidConfiguration);
    bad += expect("cudaFree of a host pointer", cudaFree(&bad), cudaErrorInvalidDevicePointer);
    cudaGetLastError();
    int *gone, value = 0;
    CHECK(cudaMalloc(&gone, 64));
    CHECK(cudaFree(gone));
    cudaError_t copy = cudaMemcpy(&value, gone, sizeof value, cudaMemcpyDeviceToHost);
    printf("copy from freed device memory: %s\n", cudaGetErrorName(copy));
    bad += copy == cudaSuccess;
    cudaGetLastError();

    write_at<<<1, 1>>>(d, 1ll << 36);  // far outside every allocation
    bad += expect("the out-of-bounds launch itself", cudaGetLastError(), cudaSuccess);
    cudaError_t sync = cudaDeviceSynchronize();
    bad += expect("cudaDeviceSynchronize after it", sync, cudaErrorIllegalAddress);
    printf("out-of-bounds kernel reported as %s: %s\n", cudaGetErrorName(sync), cudaGetErrorString(sync));
    return report("error paths", bad);
}
