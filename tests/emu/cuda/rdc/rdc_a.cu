// Separate compilation, part A: the kernel calls a device function and reads a variable defined in B.
extern __device__ int rdc_scale;
extern __device__ float rdc_combine(float a, float b);

extern "C" __global__ void rdc_kernel(const float *a, const float *b, float *c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = rdc_combine(a[i], b[i]) * rdc_scale;
}
