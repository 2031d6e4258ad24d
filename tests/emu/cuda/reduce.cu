// Reductions and scans: shared-memory tree, warp shuffles, votes, block scan.
extern "C" __global__ void block_reduce(const float *in, float *out, int n)
{
    extern __shared__ float sdata[];
    unsigned tid = threadIdx.x;
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    sdata[tid] = (i < n) ? in[i] : 0.0f;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = sdata[0];
}

extern "C" __global__ void warp_reduce(const float *in, float *total, unsigned *ballots, int *anyneg, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = (i < n) ? in[i] : 0.0f;
    unsigned b = __ballot_sync(0xffffffffu, v > 0.5f);
    int neg = __any_sync(0xffffffffu, v < 0.0f);
    for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
    if ((threadIdx.x & 31) == 0) {
        atomicAdd(total, v);
        ballots[i / 32] = b;
        anyneg[i / 32] = neg;
    }
}

// Inclusive scan of one block (Hillis-Steele in shared memory), plus block sums.
extern "C" __global__ void block_scan(const int *in, int *out, int *block_sums, int n)
{
    extern __shared__ int buf[];
    int tid = threadIdx.x;
    int i = blockIdx.x * blockDim.x + tid;
    buf[tid] = (i < n) ? in[i] : 0;
    __syncthreads();
    for (int off = 1; off < blockDim.x; off <<= 1) {
        int t = (tid >= off) ? buf[tid - off] : 0;
        __syncthreads();
        buf[tid] += t;
        __syncthreads();
    }
    if (i < n) out[i] = buf[tid];
    if (tid == blockDim.x - 1) block_sums[blockIdx.x] = buf[tid];
}

// Warp-level inclusive scan with __shfl_up_sync, and xor-butterfly max.
extern "C" __global__ void warp_scan(const int *in, int *out, int *wmax, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x & 31;
    int v = (i < n) ? in[i] : 0;
    for (int off = 1; off < 32; off <<= 1) {
        int t = __shfl_up_sync(0xffffffffu, v, off);
        if (lane >= off) v += t;
    }
    int m = (i < n) ? in[i] : -2147483647 - 1;
    for (int off = 16; off > 0; off >>= 1) m = max(m, __shfl_xor_sync(0xffffffffu, m, off));
    int src = __shfl_sync(0xffffffffu, v, 31 - lane);
    if (i < n) { out[2 * i] = v; out[2 * i + 1] = src; }
    if (lane == 0) wmax[i / 32] = m;
}
