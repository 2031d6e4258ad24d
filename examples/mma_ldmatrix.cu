// Warp-level mma.sync with ldmatrix fragments, the way hand-tuned GEMM and attention kernels use
// them: one warp multiplies a 16x16 half tile of A by a 16x8 tile of B (both row-major in shared
// memory; B through ldmatrix .trans), accumulating in float; movmatrix then transposes an 8x8
// half tile in registers. Checked against the host; small integers keep every sum exact.
#include "check.h"
#include <cuda_fp16.h>
#include <stdint.h>

__global__ void tile_mma(const half* a, const half* b, float* d, half* t)
{
    __shared__ __align__(16) half sa[16 * 16], sb[16 * 8];
    int l = threadIdx.x, g = l >> 2, q = l % 4;
    for (int i = l; i < 256; i += 32) sa[i] = a[i];
    for (int i = l; i < 128; i += 32) sb[i] = b[i];
    __syncwarp();
    uint32_t ra[4], rb[2];
    // lanes 0-15 address rows 0-15 of columns 0-7, lanes 16-31 the same rows at columns 8-15
    uint32_t pa = (uint32_t)__cvta_generic_to_shared(&sa[(l % 16) * 16 + (l / 16) * 8]);
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(ra[0]), "=r"(ra[1]), "=r"(ra[2]), "=r"(ra[3]) : "r"(pa));
    uint32_t pb = (uint32_t)__cvta_generic_to_shared(&sb[(l % 16) * 8]);
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];" : "=r"(rb[0]), "=r"(rb[1]) : "r"(pb));
    float c[4] = {1, 1, 1, 1};
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(ra[0]), "r"(ra[1]), "r"(ra[2]), "r"(ra[3]), "r"(rb[0]), "r"(rb[1]));
    // accumulator c_i: row g + 8 (i / 2), column 2q + (i % 2)
    for (int i = 0; i < 4; i++) d[(g + 8 * (i / 2)) * 8 + 2 * q + i % 2] = c[i];
    // ra[0] holds rows 0-7, columns 0-7 of A (row g, columns 2q, 2q+1): transpose it in registers
    uint32_t tr;
    asm volatile("movmatrix.sync.aligned.m8n8.trans.b16 %0, %1;" : "=r"(tr) : "r"(ra[0]));
    t[g * 8 + 2 * q] = __ushort_as_half(tr & 0xffff);
    t[g * 8 + 2 * q + 1] = __ushort_as_half(tr >> 16);
}

int main()
{
    half a[256], b[128], t[64];
    float fa[256], fb[128], d[128];
    for (int i = 0; i < 256; i++) { fa[i] = (float)(i * 3 % 7 - 3); a[i] = __float2half(fa[i]); }
    for (int i = 0; i < 128; i++) { fb[i] = (float)(i * 5 % 9 - 4); b[i] = __float2half(fb[i]); }
    half *da, *db, *dt;
    float* dd;
    CHECK(cudaMalloc(&da, sizeof a)); CHECK(cudaMalloc(&db, sizeof b));
    CHECK(cudaMalloc(&dd, sizeof d)); CHECK(cudaMalloc(&dt, sizeof t));
    CHECK(cudaMemcpy(da, a, sizeof a, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(db, b, sizeof b, cudaMemcpyHostToDevice));
    tile_mma<<<1, 32>>>(da, db, dd, dt);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(d, dd, sizeof d, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(t, dt, sizeof t, cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int i = 0; i < 16; i++)
        for (int j = 0; j < 8; j++) {
            float s = 1;
            for (int k = 0; k < 16; k++) s += fa[i * 16 + k] * fb[k * 8 + j];
            if (s != d[i * 8 + j]) bad++;
        }
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 8; j++)
            if (__half2float(t[i * 8 + j]) != fa[j * 16 + i]) bad++;
    CHECK(cudaFree(da)); CHECK(cudaFree(db)); CHECK(cudaFree(dd)); CHECK(cudaFree(dt));
    return report("mma.sync m16n8k16 with ldmatrix fragments, and movmatrix", bad);
}
