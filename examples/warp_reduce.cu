// A warp-shuffle reduction written as NVIDIA's samples write it: warpSize (PTX's predefined
// constant WARP_SZ) sizes the shuffle steps and the per-warp partial sums, and the timed part is
// bracketed by cudaProfilerStart/cudaProfilerStop, as the samples do for their profiling runs.
#include <cuda_profiler_api.h>
#include "check.h"

__global__ void warp_reduce(const int *in, long long *out, int n)
{
    extern __shared__ long long warp_sums[];             // one per warp
    int lane = threadIdx.x % warpSize, warp = threadIdx.x / warpSize;
    long long v = 0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        v += in[i];
    for (int offset = warpSize / 2; offset > 0; offset /= 2)
        v += __shfl_down_sync(0xffffffffu, v, offset);
    if (lane == 0)
        warp_sums[warp] = v;
    __syncthreads();
    if (warp == 0) {
        int warps = (blockDim.x + warpSize - 1) / warpSize;
        v = lane < warps ? warp_sums[lane] : 0;
        for (int offset = warpSize / 2; offset > 0; offset /= 2)
            v += __shfl_down_sync(0xffffffffu, v, offset);
        if (lane == 0)
            atomicAdd((unsigned long long *)out, (unsigned long long)v);
    }
}

int main()
{
    const int n = 100000, threads = 256, blocks = 24;
    int *h = (int *)malloc(n * sizeof(int));
    long long expect = 0, sum = 0;
    for (int i = 0; i < n; i++) { h[i] = (i * 7919) % 2001 - 1000; expect += h[i]; }
    int warp_size = 0;
    CHECK(cudaDeviceGetAttribute(&warp_size, cudaDevAttrWarpSize, 0));
    int *din;
    long long *dsum;
    CHECK(cudaMalloc(&din, n * sizeof(int)));
    CHECK(cudaMalloc(&dsum, sizeof(long long)));
    CHECK(cudaMemcpy(din, h, n * sizeof(int), cudaMemcpyHostToDevice));
    CHECK(cudaMemset(dsum, 0, sizeof(long long)));
    CHECK(cudaProfilerStart());
    warp_reduce<<<blocks, threads, threads / warp_size * sizeof(long long)>>>(din, dsum, n);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaProfilerStop());
    CHECK(cudaMemcpy(&sum, dsum, sizeof(long long), cudaMemcpyDeviceToHost));
    CHECK(cudaFree(din));
    CHECK(cudaFree(dsum));
    free(h);
    printf("sum %lld, expected %lld (warp size %d)\n", sum, expect, warp_size);
    return report("warp-shuffle reduction sized by warpSize", sum != expect);
}
