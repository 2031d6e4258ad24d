// Scheduling stress: per-block barrier counts, exits before barriers, divergence before shuffles,
// __syncthreads_count, match, cooperative-group style syncs, a spin lock across blocks.
extern "C" __global__ void barrier_stress(int *out, int *counts)
{
    __shared__ int s[256];
    int tid = threadIdx.x;
    int rounds = blockIdx.x % 5;
    s[tid] = tid;
    __syncthreads();
    if (tid >= blockDim.x - (int)(blockIdx.x % 3) * 7) return;  // some threads leave early
    int acc = 0;
    for (int r = 0; r < rounds; ++r) {
        acc += s[(tid + r + 1) % blockDim.x];
        __syncthreads();
        s[tid] = acc;
        __syncthreads();
    }
    int x = tid;
    for (int k = 0; k < (tid & 7); ++k) x = x * 3 + k;  // divergent loop, then a converged shuffle
    x += __shfl_xor_sync(0xffffffffu, x, 1);
    int c = __syncthreads_count(acc & 1);
    out[blockIdx.x * blockDim.x + tid] = acc + x;
    if (tid == 0) counts[blockIdx.x] = c;
}

extern "C" __global__ void warp_match(const int *in, unsigned *match, int *redsum)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = in[i];
    match[i] = __match_any_sync(0xffffffffu, v);
#if __CUDA_ARCH__ >= 800
    int r = __reduce_add_sync(0xffffffffu, v);
#else
    int r = v;
    for (int off = 16; off > 0; off >>= 1) r += __shfl_xor_sync(0xffffffffu, r, off);
#endif
    __syncwarp();
    redsum[i] = r;
}

__device__ int lock_word;
__device__ int lock_total;
extern "C" __global__ void spin_lock(int *order)
{
    if (threadIdx.x == 0) {
        while (atomicCAS(&lock_word, 0, 1) != 0) { }
        int t = lock_total;
        order[blockIdx.x] = t;
        lock_total = t + 1;
        __threadfence();
        atomicExch(&lock_word, 0);
    }
}
