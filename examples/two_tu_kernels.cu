// The second translation unit of two_tu (and of rdc): a kernel, a launcher and, with -rdc,
// a __device__ function called from the other unit.
#include <cuda_runtime.h>

__device__ int square(int x) { return x * x; }

__global__ void squares(int *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = square(i);
}

int launch_squares(int *out, int n)
{
    squares<<<(n + 63) / 64, 64>>>(out, n);
    return (int)cudaGetLastError();
}
