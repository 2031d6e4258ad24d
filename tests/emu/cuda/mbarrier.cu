// Asynchronous barriers (mbarrier) as CUDA programs reach them: cuda::barrier arrive/wait across
// phases, cuda::memcpy_async completing on a barrier (cp.async + mbarrier on sm_80, cp.async.bulk
// with expect_tx on sm_90), and the raw PTX forms through inline assembly.
#pragma nv_diag_suppress static_var_with_dynamic_init   // cuda::barrier in __shared__, as its docs do
#include <cuda/barrier>
#include <cooperative_groups.h>

namespace cg = cooperative_groups;
using block_barrier = cuda::barrier<cuda::thread_scope_block>;

extern "C" __global__ void phases(const int *in, int *out, int rounds)
{
    __shared__ block_barrier bar;
    __shared__ int stage[256];
    auto block = cg::this_thread_block();
    if (block.thread_rank() == 0)
        init(&bar, block.size());
    block.sync();
    int t = threadIdx.x, acc = 0;
    for (int r = 0; r < rounds; r++) {
        stage[t] = in[blockIdx.x * blockDim.x + t] * (r + 1);
        bar.arrive_and_wait();
        acc += stage[(t + r + 1) % blockDim.x];
        bar.arrive_and_wait();
    }
    out[blockIdx.x * blockDim.x + t] = acc;
}

extern "C" __global__ void copy_on_barrier(const int4 *in, int4 *out, int n_per_block)
{
    __shared__ alignas(16) int4 tile[512];
    __shared__ block_barrier bar;
    auto block = cg::this_thread_block();
    if (block.thread_rank() == 0)
        init(&bar, block.size());
    block.sync();
    if (block.thread_rank() == 0)
        cuda::memcpy_async(tile, in + blockIdx.x * n_per_block, cuda::aligned_size_t<16>(n_per_block * sizeof(int4)), bar);
    bar.arrive_and_wait();
    for (int k = threadIdx.x; k < n_per_block; k += blockDim.x) {
        int4 v = tile[n_per_block - 1 - k];
        out[blockIdx.x * n_per_block + k] = make_int4(v.w, v.z, v.y, v.x);
    }
}

// raw forms: init, arrive returning a state, test_wait on it, pending_count, arrive_drop
extern "C" __global__ void raw_forms(unsigned *out)
{
    __shared__ unsigned long long bar;
    unsigned addr = (unsigned)__cvta_generic_to_shared(&bar);
    unsigned t = threadIdx.x;
    if (t == 0)
        asm volatile("mbarrier.init.shared.b64 [%0], %1;" :: "r"(addr), "r"(blockDim.x));
    __syncthreads();
    unsigned long long state;
    unsigned pending, done;
    if (t % 2 == 0) {
        asm volatile("mbarrier.arrive.shared.b64 %0, [%1];" : "=l"(state) : "r"(addr) : "memory");
    } else {
        asm volatile("mbarrier.arrive_drop.shared.b64 %0, [%1];" : "=l"(state) : "r"(addr) : "memory");
    }
    asm volatile("mbarrier.pending_count.b64 %0, %1;" : "=r"(pending) : "l"(state));
    __syncthreads();
    asm volatile("{ .reg .pred p; mbarrier.test_wait.shared.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                 : "=r"(done) : "r"(addr), "l"(state) : "memory");
    out[t] = pending;
    out[blockDim.x + t] = done;
    __syncthreads();
    // second phase: only the even threads are expected now
    if (t % 2 == 0)
        asm volatile("mbarrier.arrive.shared.b64 %0, [%1];" : "=l"(state) : "r"(addr) : "memory");
    __syncthreads();
    if (t % 2 == 0) {
        asm volatile("{ .reg .pred p; mbarrier.test_wait.parity.shared.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                     : "=r"(done) : "r"(addr), "r"(1) : "memory");
        out[2 * blockDim.x + t] = done;
    } else {
        out[2 * blockDim.x + t] = 7;
    }
}
