// Warp shuffles with sub-warp widths (the clamp and segment-mask encoding of shfl.sync).
extern "C" __global__ void shfl_widths(const int *in, int *out, int width, int delta)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = in[i];
    out[4 * i + 0] = __shfl_sync(0xffffffffu, v, delta, width);
    out[4 * i + 1] = __shfl_up_sync(0xffffffffu, v, delta, width);
    out[4 * i + 2] = __shfl_down_sync(0xffffffffu, v, delta, width);
    out[4 * i + 3] = __shfl_xor_sync(0xffffffffu, v, delta, width);
}

// A shuffle inside a branch taken by half of each warp: the mask names only that half.
extern "C" __global__ void shfl_half(const int *in, int *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = in[i];
    if ((threadIdx.x & 31) < 16) v += __shfl_down_sync(0x0000ffffu, v, 1, 16);
    out[i] = v;
}

// Illegal on purpose: lanes of one warp reach the shuffle on different paths with a full mask.
extern "C" __global__ void shfl_diverged(const int *in, int *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = in[i];
    if (threadIdx.x & 1) {
        for (int k = 0; k < (int)threadIdx.x; ++k) v = v * 3 + 1;
        out[i] = __shfl_xor_sync(0xffffffffu, v, 1);
    } else {
        out[i] = v;
    }
}
