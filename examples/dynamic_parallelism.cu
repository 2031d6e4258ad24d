// Dynamic parallelism (CDP2, built with -rdc=true -lcudadevrt): a kernel sums an array by halving
// it recursively from the device, each level launching the next; a tail launch then checks the
// result, after the whole tree of grids has finished, and the host checks it again.
#include <cstdio>
#include <vector>

#include "check.h"

__global__ void check_sum(const int *sum, int want, int *ok) { *ok = (*sum == want); }

// Adds the upper half of data[0, n) onto the lower half, then continues on the lower half.
__global__ void halve(int *data, int n, int depth, int *deepest)
{
    int half = (n + 1) / 2, i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n / 2)
        data[i] += data[half + i];
    if (i == 0) {
        atomicMax(deepest, depth);
        if (half > 1)
            halve<<<(half / 2 + 63) / 64, 64>>>(data, half, depth + 1, deepest);
    }
}

__global__ void reduce(int *data, int n, int want, int *deepest, int *ok)
{
    if (threadIdx.x == 0) {
        halve<<<(n / 2 + 63) / 64, 64>>>(data, n, 1, deepest);
        check_sum<<<1, 1, 0, cudaStreamTailLaunch>>>(data, want, ok);
        if (cudaGetLastError() != cudaSuccess)
            *ok = -1;
    }
}

int main()
{
    const int n = 1000;
    std::vector<int> host(n);
    int want = 0;
    for (int i = 0; i < n; i++)
        want += host[i] = i % 17 - 5;
    int *data, *deepest, *ok;
    CHECK(cudaMalloc(&data, n * sizeof(int)));
    CHECK(cudaMalloc(&deepest, sizeof(int)));
    CHECK(cudaMalloc(&ok, sizeof(int)));
    CHECK(cudaMemcpy(data, host.data(), n * sizeof(int), cudaMemcpyHostToDevice));
    CHECK(cudaMemset(deepest, 0, sizeof(int)));
    CHECK(cudaMemset(ok, 0, sizeof(int)));
    reduce<<<1, 32>>>(data, n, want, deepest, ok);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    int sum = 0, depth = 0, good = 0;
    CHECK(cudaMemcpy(&sum, data, sizeof(int), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(&depth, deepest, sizeof(int), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(&good, ok, sizeof(int), cudaMemcpyDeviceToHost));
    printf("sum %d (want %d) over %d nested levels; tail launch saw %s\n", sum, want, depth,
           good == 1 ? "the final sum" : "something else");
    return report("device-side launches", sum != want || depth != 10 || good != 1);
}
