// mma.sync, ldmatrix and movmatrix through inline PTX, with the fragment layouts of the PTX ISA
// ("Matrix Fragments for mma.mMnNkK"): g = lane >> 2 (groupID), t = lane % 4 (threadID_in_group).
// Every warp handles item w: A (M x K), B (K x N), C and D (M x N), all dense row-major.
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <stdint.h>

__device__ int warp_item() { return (blockIdx.x * blockDim.x + threadIdx.x) / 32; }
__device__ int lane() { return threadIdx.x % 32; }

template <typename T> __device__ uint32_t pack2(T lo, T hi) {
    return (uint32_t)(*(uint16_t*)&lo) | ((uint32_t)(*(uint16_t*)&hi) << 16);
}
__device__ uint32_t pack4(const int8_t* p, int i0, int step) {
    uint32_t r = 0;
    for (int j = 0; j < 4; j++) r |= (uint32_t)(uint8_t)p[i0 + j * step] << (8 * j);
    return r;
}

// m16n8k16 and m16n8k8 with .f16 or .bf16 multiplicands and .f32 accumulators
template <typename T, int K>
__device__ void mma_16bit_f32(const T* a, const T* b, const float* c, float* d, bool bf) {
    int w = warp_item(), g = lane() >> 2, t = lane() % 4;
    a += w * 16 * K; b += w * K * 8; c += w * 128; d += w * 128;
    uint32_t ra[K / 4], rb[K / 8];
    for (int r = 0; r < K / 4; r++) {   // a_{2r}, a_{2r+1}: row g + 8 (r % 2), col 2t + 8 (r / 2)
        int row = g + 8 * (r % 2), col = 2 * t + 8 * (r / 2);
        ra[r] = pack2(a[row * K + col], a[row * K + col + 1]);
    }
    for (int r = 0; r < K / 8; r++) {   // b_{2r}, b_{2r+1}: rows 2t + 8r, +1; col g
        int row = 2 * t + 8 * r;
        rb[r] = pack2(b[row * 8 + g], b[(row + 1) * 8 + g]);
    }
    float rc[4], rd[4];
    for (int i = 0; i < 4; i++) rc[i] = c[(g + 8 * (i / 2)) * 8 + 2 * t + i % 2];
    if (K == 16 && !bf)
        asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
            "{%10,%11,%12,%13};" : "=f"(rd[0]), "=f"(rd[1]), "=f"(rd[2]), "=f"(rd[3])
            : "r"(ra[0]), "r"(ra[1]), "r"(ra[2]), "r"(ra[3]), "r"(rb[0]), "r"(rb[1]),
              "f"(rc[0]), "f"(rc[1]), "f"(rc[2]), "f"(rc[3]));
    else if (K == 16)
        asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
            "{%10,%11,%12,%13};" : "=f"(rd[0]), "=f"(rd[1]), "=f"(rd[2]), "=f"(rd[3])
            : "r"(ra[0]), "r"(ra[1]), "r"(ra[2]), "r"(ra[3]), "r"(rb[0]), "r"(rb[1]),
              "f"(rc[0]), "f"(rc[1]), "f"(rc[2]), "f"(rc[3]));
    else if (!bf)
        asm("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, "
            "{%7,%8,%9,%10};" : "=f"(rd[0]), "=f"(rd[1]), "=f"(rd[2]), "=f"(rd[3])
            : "r"(ra[0]), "r"(ra[1]), "r"(rb[0]), "f"(rc[0]), "f"(rc[1]), "f"(rc[2]), "f"(rc[3]));
    else
        asm("mma.sync.aligned.m16n8k8.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, "
            "{%7,%8,%9,%10};" : "=f"(rd[0]), "=f"(rd[1]), "=f"(rd[2]), "=f"(rd[3])
            : "r"(ra[0]), "r"(ra[1]), "r"(rb[0]), "f"(rc[0]), "f"(rc[1]), "f"(rc[2]), "f"(rc[3]));
    for (int i = 0; i < 4; i++) d[(g + 8 * (i / 2)) * 8 + 2 * t + i % 2] = rd[i];
}

extern "C" __global__ void mma_m16n8k16_f16_f32(const half* a, const half* b, const float* c, float* d) {
    mma_16bit_f32<half, 16>(a, b, c, d, false);
}
extern "C" __global__ void mma_m16n8k8_f16_f32(const half* a, const half* b, const float* c, float* d) {
    mma_16bit_f32<half, 8>(a, b, c, d, false);
}
extern "C" __global__ void mma_m16n8k16_bf16_f32(const __nv_bfloat16* a, const __nv_bfloat16* b, const float* c,
                                                 float* d) {
    mma_16bit_f32<__nv_bfloat16, 16>(a, b, c, d, true);
}
extern "C" __global__ void mma_m16n8k8_bf16_f32(const __nv_bfloat16* a, const __nv_bfloat16* b, const float* c,
                                                float* d) {
    mma_16bit_f32<__nv_bfloat16, 8>(a, b, c, d, true);
}

// m16n8k16 with .f16 accumulators: c_{2r}, c_{2r+1} packed in register r (row g + 8r, cols 2t, 2t+1)
extern "C" __global__ void mma_m16n8k16_f16_f16(const half* a, const half* b, const half* c, half* d) {
    int w = warp_item(), g = lane() >> 2, t = lane() % 4;
    a += w * 256; b += w * 128; c += w * 128; d += w * 128;
    uint32_t ra[4], rb[2], rc[2], rd[2];
    for (int r = 0; r < 4; r++) {
        int row = g + 8 * (r % 2), col = 2 * t + 8 * (r / 2);
        ra[r] = pack2(a[row * 16 + col], a[row * 16 + col + 1]);
    }
    for (int r = 0; r < 2; r++) rb[r] = pack2(b[(2 * t + 8 * r) * 8 + g], b[(2 * t + 8 * r + 1) * 8 + g]);
    for (int r = 0; r < 2; r++) rc[r] = pack2(c[(g + 8 * r) * 8 + 2 * t], c[(g + 8 * r) * 8 + 2 * t + 1]);
    asm("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%0,%1}, {%2,%3,%4,%5}, {%6,%7}, {%8,%9};"
        : "=r"(rd[0]), "=r"(rd[1]) : "r"(ra[0]), "r"(ra[1]), "r"(ra[2]), "r"(ra[3]), "r"(rb[0]), "r"(rb[1]),
          "r"(rc[0]), "r"(rc[1]));
    for (int r = 0; r < 2; r++) {
        d[(g + 8 * r) * 8 + 2 * t] = __ushort_as_half(rd[r] & 0xffff);
        d[(g + 8 * r) * 8 + 2 * t + 1] = __ushort_as_half(rd[r] >> 16);
    }
}

// tf32: m16n8k4 (a0: (g, t), a1: (g+8, t); b0: (t, g)) and m16n8k8 (plus a2, a3 and b1 at column/row t+4)
template <int K>
__device__ void mma_tf32(const float* a, const float* b, const float* c, float* d) {
    int w = warp_item(), g = lane() >> 2, t = lane() % 4;
    a += w * 16 * K; b += w * K * 8; c += w * 128; d += w * 128;
    uint32_t ra[K / 2], rb[K / 4];
    for (int i = 0; i < K / 2; i++) ra[i] = __float_as_uint(a[(g + 8 * (i % 2)) * K + t + 4 * (i / 2)]);
    for (int i = 0; i < K / 4; i++) rb[i] = __float_as_uint(b[(t + 4 * i) * 8 + g]);
    float rc[4], rd[4];
    for (int i = 0; i < 4; i++) rc[i] = c[(g + 8 * (i / 2)) * 8 + 2 * t + i % 2];
    if (K == 4)
        asm("mma.sync.aligned.m16n8k4.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%7,%8,%9,%10};"
            : "=f"(rd[0]), "=f"(rd[1]), "=f"(rd[2]), "=f"(rd[3])
            : "r"(ra[0]), "r"(ra[1]), "r"(rb[0]), "f"(rc[0]), "f"(rc[1]), "f"(rc[2]), "f"(rc[3]));
    else
        asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
            "{%10,%11,%12,%13};" : "=f"(rd[0]), "=f"(rd[1]), "=f"(rd[2]), "=f"(rd[3])
            : "r"(ra[0]), "r"(ra[1]), "r"(ra[K / 2 - 2]), "r"(ra[K / 2 - 1]), "r"(rb[0]), "r"(rb[K / 4 - 1]),
              "f"(rc[0]), "f"(rc[1]), "f"(rc[2]), "f"(rc[3]));
    for (int i = 0; i < 4; i++) d[(g + 8 * (i / 2)) * 8 + 2 * t + i % 2] = rd[i];
}
extern "C" __global__ void mma_m16n8k4_tf32(const float* a, const float* b, const float* c, float* d) {
    mma_tf32<4>(a, b, c, d);
}
extern "C" __global__ void mma_m16n8k8_tf32(const float* a, const float* b, const float* c, float* d) {
    mma_tf32<8>(a, b, c, d);
}

// m8n8k4 .f64: a0 (g, t), b0 (t, g), c0 c1 (g, 2t + i)
extern "C" __global__ void mma_m8n8k4_f64(const double* a, const double* b, const double* c, double* d) {
    int w = warp_item(), g = lane() >> 2, t = lane() % 4;
    a += w * 32; b += w * 32; c += w * 64; d += w * 64;
    double d0, d1;
    asm("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%4,%5};"
        : "=d"(d0), "=d"(d1) : "d"(a[g * 4 + t]), "d"(b[t * 8 + g]), "d"(c[g * 8 + 2 * t]), "d"(c[g * 8 + 2 * t + 1]));
    d[g * 8 + 2 * t] = d0;
    d[g * 8 + 2 * t + 1] = d1;
}

// m16n8k16 and m16n8k32 with .s8 / .u8 multiplicands, .s32 accumulators:
// A: a_i row g + 8 ((i / 4) % 2), col 4t + (i % 4) + 16 (i / 8); B: b_i row 4t + (i % 4) + 16 (i / 4), col g
template <int K, bool SAT>
__device__ void mma_int8(const int8_t* a, const int8_t* b, const int* c, int* d, bool u) {
    int w = warp_item(), g = lane() >> 2, t = lane() % 4;
    a += w * 16 * K; b += w * K * 8; c += w * 128; d += w * 128;
    uint32_t ra[K / 8], rb[K / 16];
    for (int r = 0; r < K / 8; r++) ra[r] = pack4(a, (g + 8 * (r % 2)) * K + 4 * t + 16 * (r / 2), 1);
    for (int r = 0; r < K / 16; r++) rb[r] = pack4(b, (4 * t + 16 * r) * 8 + g, 8);
    int rc[4], rd[4];
    for (int i = 0; i < 4; i++) rc[i] = c[(g + 8 * (i / 2)) * 8 + 2 * t + i % 2];
    if (K == 16 && !u)
        asm("mma.sync.aligned.m16n8k16.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%7,%8,%9,%10};"
            : "=r"(rd[0]), "=r"(rd[1]), "=r"(rd[2]), "=r"(rd[3])
            : "r"(ra[0]), "r"(ra[1]), "r"(rb[0]), "r"(rc[0]), "r"(rc[1]), "r"(rc[2]), "r"(rc[3]));
    else if (K == 16)
        asm("mma.sync.aligned.m16n8k16.row.col.s32.u8.u8.s32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%7,%8,%9,%10};"
            : "=r"(rd[0]), "=r"(rd[1]), "=r"(rd[2]), "=r"(rd[3])
            : "r"(ra[0]), "r"(ra[1]), "r"(rb[0]), "r"(rc[0]), "r"(rc[1]), "r"(rc[2]), "r"(rc[3]));
    else if (SAT)
        asm("mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
            "{%10,%11,%12,%13};" : "=r"(rd[0]), "=r"(rd[1]), "=r"(rd[2]), "=r"(rd[3])
            : "r"(ra[0]), "r"(ra[1]), "r"(ra[K / 8 - 2]), "r"(ra[K / 8 - 1]), "r"(rb[0]), "r"(rb[K / 16 - 1]),
              "r"(rc[0]), "r"(rc[1]), "r"(rc[2]), "r"(rc[3]));
    else
        asm("mma.sync.aligned.m16n8k32.row.col.s32.u8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
            "{%10,%11,%12,%13};" : "=r"(rd[0]), "=r"(rd[1]), "=r"(rd[2]), "=r"(rd[3])
            : "r"(ra[0]), "r"(ra[1]), "r"(ra[K / 8 - 2]), "r"(ra[K / 8 - 1]), "r"(rb[0]), "r"(rb[K / 16 - 1]),
              "r"(rc[0]), "r"(rc[1]), "r"(rc[2]), "r"(rc[3]));
    for (int i = 0; i < 4; i++) d[(g + 8 * (i / 2)) * 8 + 2 * t + i % 2] = rd[i];
}
extern "C" __global__ void mma_m16n8k16_s8(const int8_t* a, const int8_t* b, const int* c, int* d) {
    mma_int8<16, false>(a, b, c, d, false);
}
extern "C" __global__ void mma_m16n8k16_u8(const int8_t* a, const int8_t* b, const int* c, int* d) {
    mma_int8<16, false>(a, b, c, d, true);
}
extern "C" __global__ void mma_m16n8k32_s8_satfinite(const int8_t* a, const int8_t* b, const int* c, int* d) {
    mma_int8<32, true>(a, b, c, d, false);
}
extern "C" __global__ void mma_m16n8k32_u8_s8(const int8_t* a, const int8_t* b, const int* c, int* d) {
    mma_int8<32, false>(a, b, c, d, true);
}

// ldmatrix: 4 (or 2 or 1) 8x8 b16 matrices stacked in shared memory, row r of matrix m at lane 8m + r.
// out[w][lane][reg] is what each lane received; the host checks it against the ISA layout.
template <int NUM, bool TRANS>
__device__ void ldmatrix_case(const uint16_t* in, uint32_t* out) {
    __shared__ uint16_t s[2][4 * 64];
    int wl = threadIdx.x / 32, w = warp_item();
    for (int i = lane(); i < NUM * 64; i += 32) s[wl][i] = in[w * NUM * 64 + i];
    __syncwarp();
    uint32_t addr = (uint32_t)__cvta_generic_to_shared(&s[wl][(lane() % (8 * NUM)) * 8]);
    uint32_t r[4] = {0, 0, 0, 0};
    if (NUM == 1 && !TRANS) asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];" : "=r"(r[0]) : "r"(addr));
    if (NUM == 2 && !TRANS)
        asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];" : "=r"(r[0]), "=r"(r[1]) : "r"(addr));
    if (NUM == 4 && !TRANS)
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
    if (NUM == 1 && TRANS)
        asm volatile("ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1];" : "=r"(r[0]) : "r"(addr));
    if (NUM == 2 && TRANS)
        asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];" : "=r"(r[0]), "=r"(r[1]) : "r"(addr));
    if (NUM == 4 && TRANS)
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
                     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
    for (int i = 0; i < NUM; i++) out[(w * 32 + lane()) * NUM + i] = r[i];
}
extern "C" __global__ void ldmatrix_x1(const uint16_t* in, uint32_t* out) { ldmatrix_case<1, false>(in, out); }
extern "C" __global__ void ldmatrix_x2(const uint16_t* in, uint32_t* out) { ldmatrix_case<2, false>(in, out); }
extern "C" __global__ void ldmatrix_x4(const uint16_t* in, uint32_t* out) { ldmatrix_case<4, false>(in, out); }
extern "C" __global__ void ldmatrix_x1_trans(const uint16_t* in, uint32_t* out) { ldmatrix_case<1, true>(in, out); }
extern "C" __global__ void ldmatrix_x2_trans(const uint16_t* in, uint32_t* out) { ldmatrix_case<2, true>(in, out); }
extern "C" __global__ void ldmatrix_x4_trans(const uint16_t* in, uint32_t* out) { ldmatrix_case<4, true>(in, out); }

// movmatrix: each lane passes its register of an 8x8 b16 fragment (row lane / 4, cols 2 (lane % 4), +1)
extern "C" __global__ void movmatrix_trans(const uint32_t* in, uint32_t* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    uint32_t d;
    asm volatile("movmatrix.sync.aligned.m8n8.trans.b16 %0, %1;" : "=r"(d) : "r"(in[i]));
    out[i] = d;
}

// The example's warp tile: fragments from ldmatrix (x4, and x2 .trans), then mma.sync and movmatrix.
#include "../../../examples/mma_ldmatrix.cuh"
