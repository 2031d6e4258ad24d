// TMA tensor copies for tests/emu/test_emu_tensor_copy.py (maps built by the test): tensor loads of
// rank 1-5 into shared memory, dumped raw; tensor stores from shared memory filled from `in`.
#include <cuda.h>
#include <cstdint>

#define SMEM_BYTES 16384
#define LOAD(N, COORDS, ...)                                                                                  \
    asm volatile("cp.async.bulk.tensor." #N "d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"    \
                 " [%0], [%1, {" COORDS "}], [%2];"                                                           \
                 :: "r"(s), "l"(m), "r"(b), __VA_ARGS__ : "memory")
#define STORE(N, COORDS, ...)                                                                                 \
    asm volatile("cp.async.bulk.tensor." #N "d.global.shared::cta.tile.bulk_group [%1, {" COORDS "}], [%0];"  \
                 :: "r"(s), "l"(m), "r"(0), __VA_ARGS__ : "memory")
// The coordinates are operands %3.. of both forms.
#define BY_RANK(COPY)                                                                                         \
    switch (rank) {                                                                                           \
    case 1: COPY(1, "%3", "r"(c0)); break;                                                                    \
    case 2: COPY(2, "%3, %4", "r"(c0), "r"(c1)); break;                                                       \
    case 3: COPY(3, "%3, %4, %5", "r"(c0), "r"(c1), "r"(c2)); break;                                          \
    case 4: COPY(4, "%3, %4, %5, %6", "r"(c0), "r"(c1), "r"(c2), "r"(c3)); break;                             \
    case 5: COPY(5, "%3, %4, %5, %6, %7", "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4)); break;                \
    }

__shared__ __align__(1024) unsigned char smem[SMEM_BYTES];
__shared__ uint64_t bar;

// Waits a bounded number of times, so that a copy that never completes ends the kernel instead of
// spinning: *done is 1 when the phase completed.
__device__ void wait_phase0(uint32_t b, int *done)
{
    unsigned ok = 0;
    for (int k = 0; k < 100 && !ok; k++)
        asm volatile("{ .reg .pred p; mbarrier.test_wait.parity.shared::cta.b64 p, [%1], 0; selp.u32 %0, 1, 0, p; }"
                     : "=r"(ok) : "r"(b) : "memory");
    if (threadIdx.x == 0)
        *done = ok;
}

// Copies `in` (SMEM_BYTES) to shared memory for the async proxy; returns its shared address.
__device__ uint32_t fill_shared(const unsigned *in)
{
    for (int i = threadIdx.x; i < SMEM_BYTES / 4; i += blockDim.x)
        ((unsigned *)smem)[i] = in[i];
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
    return (uint32_t)__cvta_generic_to_shared(smem);
}

extern "C" __global__ void tma_load(const __grid_constant__ CUtensorMap map, int rank, int c0, int c1, int c2, int c3,
                                    int c4, int bytes, unsigned *out, int *done)
{
    const CUtensorMap *m = &map;
    uint32_t s = (uint32_t)__cvta_generic_to_shared(smem), b = (uint32_t)__cvta_generic_to_shared(&bar);
    for (int i = threadIdx.x; i < SMEM_BYTES / 4; i += blockDim.x)
        ((unsigned *)smem)[i] = 0xDEADBEEFu;
    __syncthreads();
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(b));
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(b), "r"(bytes));
        BY_RANK(LOAD)
    }
    __syncthreads();
    wait_phase0(b, done);
    for (int i = threadIdx.x; i < SMEM_BYTES / 4; i += blockDim.x)
        out[i] = ((unsigned *)smem)[i];
}

extern "C" __global__ void tma_store(const __grid_constant__ CUtensorMap map, int rank, int c0, int c1, int c2, int c3,
                                     int c4, const unsigned *in)
{
    const CUtensorMap *m = &map;
    uint32_t s = fill_shared(in);
    if (threadIdx.x == 0) {
        BY_RANK(STORE)
        asm volatile("cp.async.bulk.commit_group;");
        asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
    }
}

// A 2D load through a map that the kernel finds in device memory, multicast to this CTA (mask bit 0).
extern "C" __global__ void tma_load_multicast(const CUtensorMap *m, int c0, int c1, int bytes, unsigned *out, int *done)
{
    uint32_t s = (uint32_t)__cvta_generic_to_shared(smem), b = (uint32_t)__cvta_generic_to_shared(&bar);
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(b));
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(b), "r"(bytes));
        asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                     ".multicast::cluster [%0], [%1, {%3, %4}], [%2], %5;"
                     :: "r"(s), "l"(m), "r"(b), "r"(c0), "r"(c1), "h"((unsigned short)1) : "memory");
    }
    __syncthreads();
    wait_phase0(b, done);
    for (int i = threadIdx.x; i < bytes / 4; i += blockDim.x)
        out[i] = ((unsigned *)smem)[i];
}

// Bulk tensor reductions: `in` (SMEM_BYTES) is reduced into the box at (c0, c1) of a 2D tensor.
#define REDUCE_2D(OP) \
    asm volatile("cp.reduce.async.bulk.tensor.2d.global.shared::cta." OP ".tile.bulk_group [%0, {%2, %3}], [%1];" \
                 :: "l"(&map), "r"(s), "r"(c0), "r"(c1) : "memory")

extern "C" __global__ void tma_reduce_2d(const __grid_constant__ CUtensorMap map, int op, int c0, int c1,
                                         const unsigned *in)
{
    uint32_t s = fill_shared(in);
    if (threadIdx.x == 0) {
        if (op == 0) REDUCE_2D("add");
        if (op == 1) REDUCE_2D("min");
        if (op == 2) REDUCE_2D("xor");
        asm volatile("cp.async.bulk.commit_group;");
        asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
    }
}

// Non-tensor bulk reductions: every thread of the first warp reduces its 16-byte piece of `in`
// into global memory (add.f32, then min.s32 on the second half), and thread 0 the first 64 bytes
// into shared memory (add.u32, completing on an mbarrier), which it copies to `shared_out`.
extern "C" __global__ void bulk_reduce(float *g, int *gi, const unsigned *in, unsigned *shared_out, int *done)
{
    uint32_t s = (uint32_t)__cvta_generic_to_shared(smem), b = (uint32_t)__cvta_generic_to_shared(&bar);
    for (int i = threadIdx.x; i < 64; i += blockDim.x)
        ((unsigned *)smem)[i] = in[i];
    for (int i = threadIdx.x; i < 16; i += blockDim.x)
        ((unsigned *)smem)[64 + i] = 1000u * i;
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
    if (threadIdx.x < 8)
        asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%0], [%1], 16;"
                     :: "l"(g + 4 * (threadIdx.x % 4)), "r"(s + 16 * (threadIdx.x % 4)) : "memory");
    if (threadIdx.x == 0) {
        asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.min.s32 [%0], [%1], 128;"
                     :: "l"(gi), "r"(s + 128) : "memory");
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(b));
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], 64;" :: "r"(b));
        asm volatile("cp.reduce.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes.add.u32"
                     " [%0], [%1], 64, [%2];" :: "r"(s + 256), "r"(s), "r"(b) : "memory");
        asm volatile("cp.async.bulk.commit_group;");
        asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
    }
    __syncthreads();
    wait_phase0(b, done);
    for (int i = threadIdx.x; i < 16; i += blockDim.x)
        shared_out[i] = ((unsigned *)smem)[64 + i];
}
