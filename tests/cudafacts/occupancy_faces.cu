// Prints what cudaOccupancyMaxActiveBlocksPerMultiprocessor answers for one kernel over block sizes
// and dynamic shared memory, with its attributes, before and after raising its dynamic shared
// memory limit: one line "maxthreads regs static maxdyn block dynamic blocks" a case.
#include <cstdio>
#include "../../examples/check.h"

__global__ void __launch_bounds__(512) busy(float *out, float a, float b, float c) {
    extern __shared__ float tile[];
    __shared__ float fixed[300];
    int i = threadIdx.x;
    fixed[i % 300] = a * i;
    tile[i] = b + fixed[(i + 1) % 300];
    __syncthreads();
    out[blockIdx.x * blockDim.x + i] = tile[(i + 7) % blockDim.x] * c;
}

static void table() {
    cudaFuncAttributes attr;
    CHECK(cudaFuncGetAttributes(&attr, busy));
    const int blocks[] = {32, 80, 96, 128, 256, 384, 512, 513, 1024};
    const int dynamic[] = {0, 3000, 10000, 40000};
    for (int b : blocks)
        for (int d : dynamic) {
            int n = -1;
            CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, busy, b, d));
            printf("%d %d %zu %d %d %d %d\n", attr.maxThreadsPerBlock, attr.numRegs, attr.sharedSizeBytes,
                   attr.maxDynamicSharedSizeBytes, b, d, n);
        }
}

int main() {
    table();
    int device = 0, optin = 0;
    CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
    cudaFuncAttributes attr;
    CHECK(cudaFuncGetAttributes(&attr, busy));
    CHECK(cudaFuncSetAttribute(busy, cudaFuncAttributeMaxDynamicSharedMemorySize, optin - (int)attr.sharedSizeBytes));
    if (cudaFuncSetAttribute(busy, cudaFuncAttributeMaxDynamicSharedMemorySize, optin + 1) != cudaErrorInvalidValue) {
        printf("FAIL: a dynamic shared memory limit over the opt-in limit was accepted\n");
        return 1;
    }
    cudaGetLastError();
    table();
    printf("PASS\n");
    return 0;
}
