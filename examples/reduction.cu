// Sum reduction: shared-memory tree per block, then a second launch over the block sums.
#include "check.h"

__global__ void reduce(const int *in, int *out, int n)
{
    extern __shared__ int buf[];
    int tid = threadIdx.x, i = blockIdx.x * blockDim.x * 2 + tid;
    int v = 0;
    if (i < n) v += in[i];
    if (i + blockDim.x < n) v += in[i + blockDim.x];
    buf[tid] = v;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) buf[tid] += buf[tid + s];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = buf[0];
}

int main()
{
    const int n = 5000, threads = 128;
    int blocks = (n + threads * 2 - 1) / (threads * 2);
    int *h = (int *)malloc(n * sizeof(int));
    long long expect = 0;
    for (int i = 0; i < n; i++) { h[i] = (i * 37) % 101 - 50; expect += h[i]; }
    int *din, *dpart, *dsum, sum = 0;
    CHECK(cudaMalloc(&din, n * sizeof(int)));
    CHECK(cudaMalloc(&dpart, blocks * sizeof(int)));
    CHECK(cudaMalloc(&dsum, sizeof(int)));
    CHECK(cudaMemcpy(din, h, n * sizeof(int), cudaMemcpyHostToDevice));
    reduce<<<blocks, threads, threads * sizeof(int)>>>(din, dpart, n);
    reduce<<<1, threads, threads * sizeof(int)>>>(dpart, dsum, blocks);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(&sum, dsum, sizeof(int), cudaMemcpyDeviceToHost));
    CHECK(cudaFree(din)); CHECK(cudaFree(dpart)); CHECK(cudaFree(dsum));
    free(h);
    printf("sum %d, expected %lld\n", sum, expect);
    return report("two-pass reduction with dynamic shared memory", sum != expect);
}
