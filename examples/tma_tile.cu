// TMA tensor copies (sm_90, compiled to PTX with -arch=sm_90): each block loads a 16x32 tile of a
// 2D float tensor into shared memory with cp.async.bulk.tensor, waits on an mbarrier for its bytes,
// doubles it, and stores it back to a second tensor with a tensor store. The maps come from
// cuTensorMapEncodeTiled, reached through cudaGetDriverEntryPointByVersion (no -lcuda). Tiles at
// the right and bottom edges stick out of the tensor: the load fills those elements with zeros and
// the store leaves memory outside the tensor alone, which the guard columns check.
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "check.h"

constexpr int W = 72, H = 100, PITCH = 80;          // elements; rows padded to 320 bytes
constexpr int BOX_X = 32, BOX_Y = 16;

__global__ void double_tiles(const __grid_constant__ CUtensorMap in, const __grid_constant__ CUtensorMap out,
                             int *zeros_seen)
{
    __shared__ alignas(128) float tile[BOX_Y][BOX_X];
    __shared__ alignas(8) uint64_t bar;
    uint32_t sbar = (uint32_t)__cvta_generic_to_shared(&bar);
    uint32_t stile = (uint32_t)__cvta_generic_to_shared(&tile[0][0]);
    int x0 = blockIdx.x * BOX_X, y0 = blockIdx.y * BOX_Y;
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(sbar));
        asm volatile("fence.proxy.async.shared::cta;");
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(sbar), "r"((int)sizeof(tile)));
        asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                     " [%0], [%1, {%2, %3}], [%4];"
                     :: "r"(stile), "l"(&in), "r"(x0), "r"(y0), "r"(sbar) : "memory");
    }
    __syncthreads();
    asm volatile("{ .reg .pred p; WAIT: mbarrier.try_wait.parity.shared::cta.b64 p, [%0], 0; @!p bra WAIT; }"
                 :: "r"(sbar) : "memory");
    for (int i = threadIdx.x; i < BOX_X * BOX_Y; i += blockDim.x) {
        int x = x0 + i % BOX_X, y = y0 + i / BOX_X;
        float v = tile[i / BOX_X][i % BOX_X];
        if ((x >= W || y >= H) && v == 0.0f)
            atomicAdd(zeros_seen, 1);
        tile[i / BOX_X][i % BOX_X] = 2.0f * v;
    }
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
    if (threadIdx.x == 0) {
        asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%0, {%1, %2}], [%3];"
                     :: "l"(&out), "r"(x0), "r"(y0), "r"(stile) : "memory");
        asm volatile("cp.async.bulk.commit_group;");
        asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
    }
}

static CUresult encode(PFN_cuTensorMapEncodeTiled_v12000 fn, CUtensorMap *map, float *base, cuuint32_t box_x = BOX_X)
{
    cuuint64_t dims[2] = { W, H }, strides[1] = { PITCH * sizeof(float) };
    cuuint32_t box[2] = { box_x, BOX_Y }, estrides[2] = { 1, 1 };
    return fn(map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, base, dims, strides, box, estrides,
              CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE,
              CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
}

int main()
{
    std::vector<float> host(H * PITCH);
    for (int i = 0; i < H * PITCH; i++)
        host[i] = (float)(i % PITCH < W ? i + 1 : -1);      // -1 marks the padding columns
    float *src, *dst;
    int *zeros;
    CHECK(cudaMalloc(&src, host.size() * sizeof(float)));
    CHECK(cudaMalloc(&dst, host.size() * sizeof(float)));
    CHECK(cudaMalloc(&zeros, sizeof(int)));
    CHECK(cudaMemcpy(src, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dst, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemset(zeros, 0, sizeof(int)));

    void *fn = nullptr;
    cudaDriverEntryPointQueryResult found;
    CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &found));
    if (found != cudaDriverEntryPointSuccess || !fn)
        return report("cuTensorMapEncodeTiled found", 1);
    alignas(64) CUtensorMap in, out;
    CUresult refused = encode((PFN_cuTensorMapEncodeTiled_v12000)fn, &out, dst, 3);   // a 12-byte box row
    CUresult r1 = encode((PFN_cuTensorMapEncodeTiled_v12000)fn, &in, src);
    CUresult r2 = encode((PFN_cuTensorMapEncodeTiled_v12000)fn, &out, dst);
    if (r1 != CUDA_SUCCESS || r2 != CUDA_SUCCESS || refused != CUDA_ERROR_INVALID_VALUE) {
        printf("cuTensorMapEncodeTiled: %d %d, a 12-byte box row: %d\n", (int)r1, (int)r2, (int)refused);
        return report("tensor maps encoded", 1);
    }
    CHECK(cudaGetLastError());      // a driver call's failure is not the runtime's last error
    dim3 grid((W + BOX_X - 1) / BOX_X, (H + BOX_Y - 1) / BOX_Y);
    double_tiles<<<grid, 128>>>(in, out, zeros);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());

    std::vector<float> got(host.size());
    int zeros_seen = 0;
    CHECK(cudaMemcpy(got.data(), dst, got.size() * sizeof(float), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(&zeros_seen, zeros, sizeof(int), cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int i = 0; i < H * PITCH; i++)
        bad += got[i] != (i % PITCH < W ? 2.0f * host[i] : -1.0f);
    int outside = grid.x * BOX_X * grid.y * BOX_Y - W * H;
    printf("%d tiles, %d elements outside the tensor read as zero (of %d), %d wrong\n", grid.x * grid.y,
           zeros_seen, outside, bad);
    return report("TMA tile load and store", bad != 0 || zeros_seen != outside);
}
