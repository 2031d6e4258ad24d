// A shared library with kernels and variables, loaded by a Python host through ctypes.
#include <cuda_runtime.h>

__global__ void saxpy(float a, const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = a * x[i] + y[i];
}

template <typename T> __global__ void fill(T *p, T v, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] = v;
}
template __global__ void fill<int>(int *, int, int);

__device__ float device_scale;
__constant__ int constant_lut[16];

extern "C" int kernels_runtime_version(void)
{
    int v = -1;
    return cudaRuntimeGetVersion(&v) == cudaSuccess ? v : -1;
}
