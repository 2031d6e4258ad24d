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
    // cudaErrorInvalidConfiguration: "requesting too many threads or blocks" (runtime API docs)
    bad += expect("launch with 4096 threads per block", cudaGetLastError(), cudaErrorInvalidConfiguration);
    // cudaErrorInvalidValue: the runtime API docs of cudaFree (CUDA 10.1 deprecated
    // cudaErrorInvalidDevicePointer); static cudart passes cuMemFree's CUDA_ERROR_INVALID_VALUE on
    bad += expect("cudaFree of a host pointer", cudaFree(&bad), cudaErrorInvalidValue);
    cudaGetLastError();
    bad += expect("cudaFree(nullptr)", cudaFree(nullptr), cudaSuccess);   // "no operation is performed"
    int *gone, value = 0;
    CHECK(cudaMalloc(&gone, 64));
    CHECK(cudaFree(gone));
    bad += expect("cudaFree of a freed pointer", cudaFree(gone), cudaErrorInvalidValue);
    cudaGetLastError();
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
