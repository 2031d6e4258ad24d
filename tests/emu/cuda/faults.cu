#include <cassert>
// Kernels that fail the way CUDA reports: bad pointers, misalignment, trap, assert.
extern "C" __global__ void write_past_end(int *p, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    p[i] = i;  // no bounds check: threads past n write outside the allocation
}

extern "C" __global__ void misaligned_load(const char *p, int *out)
{
    out[threadIdx.x] = *(const int *)(p + 1 + 4 * threadIdx.x);
}

extern "C" __global__ void trap_kernel(int *p)
{
    if (threadIdx.x == 5) __trap();
    p[threadIdx.x] = 1;
}

extern "C" __global__ void assert_kernel(const int *v)
{
    assert(v[threadIdx.x] >= 0);
}

extern "C" __global__ void null_deref(int *p, const int *q) { p[threadIdx.x] = q[threadIdx.x]; }
