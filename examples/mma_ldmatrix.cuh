// One warp's mma.sync tile with ldmatrix fragments, the way hand-tuned GEMM and attention kernels
// build them: d = A * B + 1 for a 16x16 half tile A and a 16x8 half tile B (both row-major in shared
// memory; B through ldmatrix .trans), accumulating in float; t = the transpose of A's top-left 8x8
// tile, made in registers with movmatrix. Launch with one warp.
#pragma once
#include <cuda_fp16.h>
#include <stdint.h>

extern "C" __global__ void tile_mma(const half* a, const half* b, float* d, half* t)
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
