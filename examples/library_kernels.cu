// The kernels examples/libraries.cu loads at run time as a library (built into library_kernels.ptx).
__device__ int offset;

extern "C" __global__ void scale(float *x, float factor, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] *= factor;
}

extern "C" __global__ void add_offset(int *x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] += offset;
}
