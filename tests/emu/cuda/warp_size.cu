// Kernels written as NVIDIA's samples write them, with warpSize: nvcc emits PTX's predefined
// constant WARP_SZ for it.

// A block reduction: each warp sums its lanes with shuffles, warp leaders meet in shared memory,
// the first warp sums the partial results (the shape of the samples' reduction kernels).
extern "C" __global__ void block_sum(const int *in, int *out, int n)
{
    extern __shared__ int partial[];            // one int per warp
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x % warpSize;
    int warp = threadIdx.x / warpSize;
    int v = i < n ? in[i] : 0;
    for (int offset = warpSize / 2; offset > 0; offset /= 2)
        v += __shfl_down_sync(0xffffffffu, v, offset);
    if (lane == 0)
        partial[warp] = v;
    __syncthreads();
    int warps = (blockDim.x + warpSize - 1) / warpSize;
    if (warp == 0) {
        v = lane < warps ? partial[lane] : 0;
        for (int offset = warpSize / 2; offset > 0; offset /= 2)
            v += __shfl_down_sync(0xffffffffu, v, offset);
        if (lane == 0)
            out[blockIdx.x] = v;
    }
}

// An inclusive scan of each warp's values with __shfl_up_sync (the shuffle-scan sample's first
// step); the last lane of each warp also writes the warp's total.
extern "C" __global__ void warp_scan(const int *in, int *out, int *totals)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x % warpSize;
    int v = in[i];
    for (int d = 1; d < warpSize; d *= 2) {
        int up = __shfl_up_sync(0xffffffffu, v, d, warpSize);
        if (lane >= d)
            v += up;
    }
    out[i] = v;
    if (lane == warpSize - 1)
        totals[i / warpSize] = v;
}
