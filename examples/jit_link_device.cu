// The device half of examples/jit_link: a device function, the offset the kernel in
// jit_link_kernel.cu adds, and a counter of calls. Built to relocatable PTX (-rdc=true -ptx) by
// examples/build.py.
extern "C" {
__device__ float offset = 0.5f;
__device__ int scaled_calls = 0;

__device__ float scale(float x, float factor)
{
    atomicAdd(&scaled_calls, 1);
    return x * factor;
}
}
