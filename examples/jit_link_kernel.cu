// The kernel half of examples/jit_link: it calls scale() and reads offset, both defined in
// jit_link_device.cu, which cuLinkComplete resolves. Built to relocatable PTX by examples/build.py.
extern "C" {
extern __device__ float offset;
__device__ float scale(float x, float factor);

__global__ void scale_all(float *values, float factor, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        values[i] = scale(values[i], factor) + offset;
}
}
