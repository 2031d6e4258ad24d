// Calls through device function pointers: a dispatch table in device memory and a pointer passed
// down to a helper. Each thread picks its operation from its index; the results are checked on the host.
#include "check.h"

typedef int (*binary_op)(int, int);

__device__ int op_add(int a, int b) { return a + b; }
__device__ int op_sub(int a, int b) { return a - b; }
__device__ int op_mul(int a, int b) { return a * b; }
__device__ int op_max(int a, int b) { return a > b ? a : b; }

__device__ binary_op table[4] = {op_add, op_sub, op_mul, op_max};

__device__ __noinline__ int fold(binary_op op, const int *xs, int n)
{
    int acc = xs[0];
    for (int k = 1; k < n; k++)
        acc = op(acc, xs[k]);
    return acc;
}

__global__ void dispatch(const int *a, const int *b, int *out, int *folds, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    binary_op op = table[i % 4];
    out[i] = op(a[i], b[i]);
    folds[i] = fold(table[(i / 4) % 4], a + (i % 8), 5);
}

static int host_op(int which, int x, int y)
{
    switch (which) {
    case 0: return x + y;
    case 1: return x - y;
    case 2: return x * y;
    default: return x > y ? x : y;
    }
}

int main()
{
    const int n = 1000;
    int h_a[n], h_b[n], h_out[n], h_folds[n];
    for (int i = 0; i < n; i++) {
        h_a[i] = (i * 13) % 97 - 40;
        h_b[i] = (i * 7) % 31 - 15;
    }
    int *a, *b, *out, *folds;
    CHECK(cudaMalloc(&a, sizeof h_a));
    CHECK(cudaMalloc(&b, sizeof h_b));
    CHECK(cudaMalloc(&out, sizeof h_out));
    CHECK(cudaMalloc(&folds, sizeof h_folds));
    CHECK(cudaMemcpy(a, h_a, sizeof h_a, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(b, h_b, sizeof h_b, cudaMemcpyHostToDevice));
    dispatch<<<(n + 127) / 128, 128>>>(a, b, out, folds, n);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(h_out, out, sizeof h_out, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(h_folds, folds, sizeof h_folds, cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int i = 0; i < n; i++) {
        bad += h_out[i] != host_op(i % 4, h_a[i], h_b[i]);
        int acc = h_a[i % 8];
        for (int k = 1; k < 5; k++)
            acc = host_op((i / 4) % 4, acc, h_a[i % 8 + k]);
        bad += h_folds[i] != acc;
    }
    printf("out[0..3] = %d %d %d %d, %d wrong\n", h_out[0], h_out[1], h_out[2], h_out[3], bad);
    CHECK(cudaFree(a));
    CHECK(cudaFree(b));
    CHECK(cudaFree(out));
    CHECK(cudaFree(folds));
    return report("calls through device function pointers", bad != 0);
}
