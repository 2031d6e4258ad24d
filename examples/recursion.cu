// Recursive device functions, as users write them: Fibonacci, Ackermann and a recursive walk of a
// binary tree stored in an array. The threads of a warp recurse to different depths; each result
// is checked against the same recursion run on the host.
#include "check.h"

__host__ __device__ int fib(int n)
{
    return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

__host__ __device__ int ackermann(int m, int n)
{
    if (m == 0)
        return n + 1;
    if (n == 0)
        return ackermann(m - 1, 1);
    return ackermann(m - 1, ackermann(m, n - 1));
}

// The tree: node i has children 2i+1 and 2i+2 while they are below `size`.
__host__ __device__ long long tree_sum(const int *values, int size, int node)
{
    if (node >= size)
        return 0;
    return values[node] + 3 * tree_sum(values, size, 2 * node + 1) - tree_sum(values, size, 2 * node + 2);
}

__global__ void recursive_kernels(const int *values, int size, int *fibs, int *acks, long long *sums, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    fibs[i] = fib(i % 17);
    acks[i] = ackermann(i % 3, i % 5);
    sums[i] = tree_sum(values, size, i % size);
}

int main()
{
    const int n = 200, size = 61;
    int h_values[size];
    for (int k = 0; k < size; k++)
        h_values[k] = (k * 37) % 23 - 11;
    int *values, *fibs, *acks;
    long long *sums;
    CHECK(cudaMalloc(&values, sizeof h_values));
    CHECK(cudaMalloc(&fibs, n * sizeof(int)));
    CHECK(cudaMalloc(&acks, n * sizeof(int)));
    CHECK(cudaMalloc(&sums, n * sizeof(long long)));
    CHECK(cudaMemcpy(values, h_values, sizeof h_values, cudaMemcpyHostToDevice));
    CHECK(cudaDeviceSetLimit(cudaLimitStackSize, 16384));
    recursive_kernels<<<(n + 63) / 64, 64>>>(values, size, fibs, acks, sums, n);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    int h_fibs[n], h_acks[n];
    long long h_sums[n];
    CHECK(cudaMemcpy(h_fibs, fibs, sizeof h_fibs, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(h_acks, acks, sizeof h_acks, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(h_sums, sums, sizeof h_sums, cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int i = 0; i < n; i++) {
        bad += h_fibs[i] != fib(i % 17);
        bad += h_acks[i] != ackermann(i % 3, i % 5);
        bad += h_sums[i] != tree_sum(h_values, size, i % size);
    }
    printf("fib(16) = %d, ackermann(2, 4) = %d, tree sum = %lld, %d wrong\n", h_fibs[16], h_acks[14], h_sums[0], bad);
    CHECK(cudaFree(values));
    CHECK(cudaFree(fibs));
    CHECK(cudaFree(acks));
    CHECK(cudaFree(sums));
    return report("recursive device functions (fib, ackermann, tree walk)", bad != 0);
}
