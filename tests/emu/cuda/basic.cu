// Data-parallel kernels: vector add, saxpy (f32/f64), a size_t grid-stride loop.
#include <cstddef>

extern "C" __global__ void vecadd(const float *a, const float *b, float *c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

extern "C" __global__ void saxpy(int n, float a, const float *x, float *y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

extern "C" __global__ void daxpy(int n, double a, const double *x, double *y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

extern "C" __global__ void grid_stride_scale(size_t n, const int *in, long long *out, int k)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)blockDim.x * gridDim.x)
        out[i] = (long long)in[i] * k + (long long)i;
}

// 3-D indices, a local array, bit intrinsics, min/max.
extern "C" __global__ void index3d(unsigned *out, unsigned seed)
{
    unsigned tx = threadIdx.x, ty = threadIdx.y, tz = threadIdx.z;
    unsigned bx = blockIdx.x, by = blockIdx.y, bz = blockIdx.z;
    unsigned nx = blockDim.x * gridDim.x, ny = blockDim.y * gridDim.y;
    unsigned gx = bx * blockDim.x + tx, gy = by * blockDim.y + ty, gz = bz * blockDim.z + tz;
    unsigned idx = (gz * ny + gy) * nx + gx;
    unsigned local[8];
    for (int k = 0; k < 8; ++k) local[k] = (idx * 2654435761u) ^ (seed + k);
    unsigned v = local[idx & 7] + local[(idx >> 3) & 7];
    out[4 * idx + 0] = __popc(v);
    out[4 * idx + 1] = __clz(v);
    out[4 * idx + 2] = __brev(v);
    out[4 * idx + 3] = max(min(v, 1000000u), (unsigned)min((int)tx - (int)ty, 7)) ;
}
