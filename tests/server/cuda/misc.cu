// Kernels for error handling, concurrency and module variables.
__device__ int counter;

// Writes one int at p[offset]: out of bounds when offset lies past the allocation.
extern "C" __global__ void write_at(int *p, long long offset, int value)
{
    p[offset] = value;
}

// Burns time: `iterations` dependent steps per thread.
extern "C" __global__ void spin(float *out, int iterations)
{
    float x = 0.0f;
    for (int i = 0; i < iterations; ++i)
        x = x * 0.5f + 1.0f;
    out[blockIdx.x * blockDim.x + threadIdx.x] = x;
}

// Adds `value` to the module variable `counter`.
extern "C" __global__ void bump(int value)
{
    atomicAdd(&counter, value);
}

// y = a * x + y in double precision.
extern "C" __global__ void daxpy(int n, double a, const double *x, double *y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = a * x[i] + y[i];
}
