// Device functions: inlinable and __noinline__ (calls survive at -O3; everything is a call with -G).
__device__ __noinline__ float poly(float x, float a, float b) { return a * x * x + b * x + 1.0f; }
__device__ int clampi(int v, int lo, int hi) { return v < lo ? lo : (v > hi ? hi : v); }
__device__ __noinline__ int sum_digits(unsigned v)
{
    int s = 0;
    while (v) { s += v % 10; v /= 10; }
    return s;
}

extern "C" __global__ void devfunc(const float *x, float *y, int *z, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = poly(x[i], 0.5f, -2.0f) + sqrtf(fabsf(x[i]));
        z[i] = clampi(sum_digits((unsigned)i * 37u), 3, 20);
    }
}
