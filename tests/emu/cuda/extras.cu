// Constant memory, vector loads/stores, half precision, address-space queries, 64-bit clock.
#include <cuda_fp16.h>

__constant__ float coeffs[4];
__device__ unsigned long long counter = 100;

extern "C" __global__ void poly_const(const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        y[i] = ((coeffs[3] * v + coeffs[2]) * v + coeffs[1]) * v + coeffs[0];
    }
}

extern "C" __global__ void float4_swap(const float4 *in, float4 *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float4 v = in[i];
        out[i] = make_float4(v.w, v.z, v.y, v.x);
    }
}

extern "C" __global__ void half_math(const __half *a, const __half *b, __half *c, float *f, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        __half s = __hadd(a[i], b[i]);
        c[i] = __hmul(s, b[i]);
        f[i] = __half2float(s);
    }
}

extern "C" __global__ void address_spaces(const int *g, int *out)
{
    __shared__ int s[32];
    int l[4];
    int t = threadIdx.x;
    s[t] = t;
    l[t & 3] = t;
    const int *p = (t & 1) ? &s[t] : g + t;
    volatile int *lp = &l[t & 3];
    out[4 * t + 0] = __isGlobal(p);
    out[4 * t + 1] = __isShared(p);
    out[4 * t + 2] = __isLocal((const void *)lp);
    out[4 * t + 3] = *p + *lp;
    long long c0 = clock64();
    if (t == 0) atomicAdd(&counter, (unsigned long long)(clock64() > c0));
}
