// Explicit launches through cudaLaunchKernel and cudaLaunchKernelExC.
#include "check.h"

__global__ void fill(int *out, int value, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = value + i;
}

int main()
{
    const int n = 500;
    int *d, h[n];
    CHECK(cudaMalloc(&d, sizeof h));
    int value = 11, count = n;
    void *args[] = {&d, &value, &count};
    CHECK(cudaLaunchKernel((const void *)fill, dim3((n + 127) / 128), dim3(128), args, 0, 0));
    CHECK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int i = 0; i < n; i++) if (h[i] != 11 + i) bad++;
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3((n + 63) / 64);
    config.blockDim = dim3(64);
    value = 100;
    CHECK(cudaLaunchKernelExC(&config, (const void *)fill, args));
    CHECK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; i++) if (h[i] != 100 + i) bad++;
    cudaFuncAttributes attr;
    CHECK(cudaFuncGetAttributes(&attr, (const void *)fill));
    int blocks = 0;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, fill, 128, 0));
    if (attr.maxThreadsPerBlock <= 0 || blocks <= 0) bad++;
    printf("fill: max %d threads per block, %d registers, %d blocks per SM at 128 threads\n",
           attr.maxThreadsPerBlock, attr.numRegs, blocks);
    CHECK(cudaFree(d));
    return report("explicit cudaLaunchKernel and cudaLaunchKernelExC", bad);
}
