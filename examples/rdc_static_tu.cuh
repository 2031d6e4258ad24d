// One translation unit of examples/rdc_static_main.cu: a *static* __global__ function and a static
// __device__ variable whose names the other translation unit uses too (legal C++: each is local to
// its unit). TU_VALUE and TU_ENTRY are set by the including file.
static __device__ int launches;

static __global__ void fill(int *x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i == 0)
        launches += 1;
    if (i < n)
        x[i] = TU_VALUE * 1000 + launches;
}

// Launches this unit's fill twice; returns its launch count read back from its own variable.
int TU_ENTRY(int *x, int n)
{
    fill<<<(n + 63) / 64, 64>>>(x, n);
    fill<<<(n + 63) / 64, 64>>>(x, n);
    int count = -1;
    if (cudaMemcpyFromSymbol(&count, launches, sizeof count) != cudaSuccess)
        return -1;
    return count;
}
