// The sm_70 quad-pair mma.sync.aligned.m8n8k4 with .f16 multiplicands, for tests/emu/test_emu_mma_m8n8k4.py.
// One warp computes D[q] = A[q] * B[q] + C[q] for the four quad pairs q; each lane loads and stores its
// fragment elements by the PTX ISA's tables ("Matrix Fragments for mma.m8n8k4 with .f16").
// Memory: A[q][8][4], B[q][4][8], C[q][8][8], D[q][8][8], all row-major.
#include <cuda_fp16.h>

__device__ int a_index(int l, int i, bool col) {
    int q = (l >> 2) & 3, t = l & 3, h = (l >> 4) * 4;
    return q * 32 + (col ? (i + h) * 4 + t : (t + h) * 4 + i);
}

__device__ int b_index(int l, int i, bool col) {
    int q = (l >> 2) & 3, t = l & 3, h = (l >> 4) * 4;
    return q * 32 + (col ? i * 8 + t + h : t * 8 + i + h);
}

__device__ int acc_index(int l, int i, bool f32) {
    int q = (l >> 2) & 3, t = l & 3, h = (l >> 4) * 4;
    if (f32) return q * 64 + ((l & 1) + (i & 2) + h) * 8 + (i & 4) + (l & 2) + (i & 1);
    return q * 64 + (t + h) * 8 + i;
}

__device__ unsigned pack(__half lo, __half hi) {
    return (unsigned)__half_as_ushort(lo) | ((unsigned)__half_as_ushort(hi) << 16);
}

template <bool ACOL, bool BCOL>
__device__ void load_ab(const __half *A, const __half *B, unsigned a[2], unsigned b[2]) {
    int l = threadIdx.x & 31;
    for (int k = 0; k < 2; k++) {
        a[k] = pack(A[a_index(l, 2 * k, ACOL)], A[a_index(l, 2 * k + 1, ACOL)]);
        b[k] = pack(B[b_index(l, 2 * k, BCOL)], B[b_index(l, 2 * k + 1, BCOL)]);
    }
}

#define MMA_F32(AL, BL)                                                                                        \
    asm volatile("mma.sync.aligned.m8n8k4." AL "." BL ".f32.f16.f16.f32 {%0,%1,%2,%3,%4,%5,%6,%7}, {%8,%9}, "  \
                 "{%10,%11}, {%12,%13,%14,%15,%16,%17,%18,%19};"                                                \
                 : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3]), "=f"(d[4]), "=f"(d[5]), "=f"(d[6]),          \
                   "=f"(d[7])                                                                                  \
                 : "r"(a[0]), "r"(a[1]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]),     \
                   "f"(c[4]), "f"(c[5]), "f"(c[6]), "f"(c[7]))

// f32 accumulate in each of the four layout combinations.
template <bool ACOL, bool BCOL>
__device__ void f32_f32(const __half *A, const __half *B, const float *C, float *D) {
    int l = threadIdx.x & 31;
    unsigned a[2], b[2];
    float c[8], d[8];
    load_ab<ACOL, BCOL>(A, B, a, b);
    for (int i = 0; i < 8; i++) c[i] = C[acc_index(l, i, true)];
    if (!ACOL && !BCOL) MMA_F32("row", "row");
    if (!ACOL && BCOL) MMA_F32("row", "col");
    if (ACOL && !BCOL) MMA_F32("col", "row");
    if (ACOL && BCOL) MMA_F32("col", "col");
    for (int i = 0; i < 8; i++) D[acc_index(l, i, true)] = d[i];
}

extern "C" __global__ void mma884_rr(const __half *A, const __half *B, const float *C, float *D) { f32_f32<false, false>(A, B, C, D); }
extern "C" __global__ void mma884_rc(const __half *A, const __half *B, const float *C, float *D) { f32_f32<false, true>(A, B, C, D); }
extern "C" __global__ void mma884_cr(const __half *A, const __half *B, const float *C, float *D) { f32_f32<true, false>(A, B, C, D); }
extern "C" __global__ void mma884_cc(const __half *A, const __half *B, const float *C, float *D) { f32_f32<true, true>(A, B, C, D); }

// f16 accumulate (f16 C and D), and the two mixed forms: f32 D from f16 C, f16 D from f32 C.
extern "C" __global__ void mma884_f16(const __half *A, const __half *B, const __half *C, __half *D) {
    int l = threadIdx.x & 31;
    unsigned a[2], b[2], c[4], d[4];
    load_ab<false, true>(A, B, a, b);
    for (int k = 0; k < 4; k++) c[k] = pack(C[acc_index(l, 2 * k, false)], C[acc_index(l, 2 * k + 1, false)]);
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f16.f16.f16.f16 {%0,%1,%2,%3}, {%4,%5}, {%6,%7}, {%8,%9,%10,%11};"
                 : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(b[0]), "r"(b[1]), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]));
    for (int k = 0; k < 4; k++) {
        D[acc_index(l, 2 * k, false)] = __ushort_as_half((unsigned short)(d[k] & 0xffff));
        D[acc_index(l, 2 * k + 1, false)] = __ushort_as_half((unsigned short)(d[k] >> 16));
    }
}

extern "C" __global__ void mma884_f32_from_f16(const __half *A, const __half *B, const __half *C, float *D) {
    int l = threadIdx.x & 31;
    unsigned a[2], b[2], c[4];
    float d[8];
    load_ab<true, false>(A, B, a, b);
    for (int k = 0; k < 4; k++) c[k] = pack(C[acc_index(l, 2 * k, false)], C[acc_index(l, 2 * k + 1, false)]);
    asm volatile("mma.sync.aligned.m8n8k4.col.row.f32.f16.f16.f16 {%0,%1,%2,%3,%4,%5,%6,%7}, {%8,%9}, {%10,%11}, "
                 "{%12,%13,%14,%15};"
                 : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3]), "=f"(d[4]), "=f"(d[5]), "=f"(d[6]), "=f"(d[7])
                 : "r"(a[0]), "r"(a[1]), "r"(b[0]), "r"(b[1]), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]));
    for (int i = 0; i < 8; i++) D[acc_index(l, i, true)] = d[i];
}

extern "C" __global__ void mma884_f16_from_f32(const __half *A, const __half *B, const float *C, __half *D) {
    int l = threadIdx.x & 31;
    unsigned a[2], b[2], d[4];
    float c[8];
    load_ab<false, false>(A, B, a, b);
    for (int i = 0; i < 8; i++) c[i] = C[acc_index(l, i, true)];
    asm volatile("mma.sync.aligned.m8n8k4.row.row.f16.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6,%7}, "
                 "{%8,%9,%10,%11,%12,%13,%14,%15};"
                 : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]),
                   "f"(c[4]), "f"(c[5]), "f"(c[6]), "f"(c[7]));
    for (int k = 0; k < 4; k++) {
        D[acc_index(l, 2 * k, false)] = __ushort_as_half((unsigned short)(d[k] & 0xffff));
        D[acc_index(l, 2 * k + 1, false)] = __ushort_as_half((unsigned short)(d[k] >> 16));
    }
}
