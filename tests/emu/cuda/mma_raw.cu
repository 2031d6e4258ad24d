// mma.sync forms beyond sm_80's common ones, fed raw fragment registers: lane l of warp w reads
// its registers from a[(w * 32 + l) * NA + i] (and b, c alike) and writes d the same way. The host
// places the matrix elements with the PTX ISA's layouts. Built for sm_90 (f64 m16n8k{4,8,16}),
// which also accepts the sm_80 sub-byte and sm_89 fp8 forms.
#include <stdint.h>

__device__ int slot() { return (blockIdx.x * blockDim.x + threadIdx.x); }

#define R(p, n, i) p[slot() * n + i]

// 32-bit registers: A in NA, B in NB, C/D in 4 (m16n8) or 2 (m8n8) registers
#define MMA_B32_4(NAME, FORM, NA, NB, AREGS, BREGS)                                              \
    extern "C" __global__ void NAME(const uint32_t* a, const uint32_t* b, const uint32_t* c, uint32_t* d) { \
        uint32_t r0, r1, r2, r3;                                                                 \
        asm(FORM : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : AREGS, BREGS, "r"(R(c, 4, 0)),     \
            "r"(R(c, 4, 1)), "r"(R(c, 4, 2)), "r"(R(c, 4, 3)));                                 \
        R(d, 4, 0) = r0; R(d, 4, 1) = r1; R(d, 4, 2) = r2; R(d, 4, 3) = r3;                      \
    }

#define A2 "r"(R(a, 2, 0)), "r"(R(a, 2, 1))
#define A4 "r"(R(a, 4, 0)), "r"(R(a, 4, 1)), "r"(R(a, 4, 2)), "r"(R(a, 4, 3))
#define B1 "r"(R(b, 1, 0))
#define B2 "r"(R(b, 2, 0)), "r"(R(b, 2, 1))

MMA_B32_4(mma_m16n8k32_s4, "mma.sync.aligned.m16n8k32.row.col.s32.s4.s4.s32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%7,%8,%9,%10};", 2, 1, A2, B1)
MMA_B32_4(mma_m16n8k64_u4_s4, "mma.sync.aligned.m16n8k64.row.col.satfinite.s32.u4.s4.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};", 4, 2, A4, B2)
MMA_B32_4(mma_m16n8k32_e4m3, "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};", 4, 2, A4, B2)
MMA_B32_4(mma_m16n8k32_e5m2_e4m3, "mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e4m3.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};", 4, 2, A4, B2)

extern "C" __global__ void mma_m8n8k32_s4(const uint32_t* a, const uint32_t* b, const uint32_t* c, uint32_t* d) {
    uint32_t r0, r1;
    asm("mma.sync.aligned.m8n8k32.row.col.s32.s4.s4.s32 {%0,%1}, {%2}, {%3}, {%4,%5};"
        : "=r"(r0), "=r"(r1) : "r"(R(a, 1, 0)), "r"(R(b, 1, 0)), "r"(R(c, 2, 0)), "r"(R(c, 2, 1)));
    R(d, 2, 0) = r0; R(d, 2, 1) = r1;
}

extern "C" __global__ void mma_m8n8k16_u8_s8(const uint32_t* a, const uint32_t* b, const uint32_t* c, uint32_t* d) {
    uint32_t r0, r1;
    asm("mma.sync.aligned.m8n8k16.row.col.s32.u8.s8.s32 {%0,%1}, {%2}, {%3}, {%4,%5};"
        : "=r"(r0), "=r"(r1) : "r"(R(a, 1, 0)), "r"(R(b, 1, 0)), "r"(R(c, 2, 0)), "r"(R(c, 2, 1)));
    R(d, 2, 0) = r0; R(d, 2, 1) = r1;
}

// .f64 on sm_90: m16n8k4 (A 2, B 1), m16n8k8 (A 4, B 2), m16n8k16 (A 8, B 4); C/D 4 registers
#define DA(n, i) "d"(R(a, n, i))
#define DB(n, i) "d"(R(b, n, i))
#define DC "d"(R(c, 4, 0)), "d"(R(c, 4, 1)), "d"(R(c, 4, 2)), "d"(R(c, 4, 3))
#define DSTORE R(d, 4, 0) = r0; R(d, 4, 1) = r1; R(d, 4, 2) = r2; R(d, 4, 3) = r3;

extern "C" __global__ void mma_m16n8k4_f64(const double* a, const double* b, const double* c, double* d) {
    double r0, r1, r2, r3;
    asm("mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%7,%8,%9,%10};"
        : "=d"(r0), "=d"(r1), "=d"(r2), "=d"(r3) : DA(2, 0), DA(2, 1), DB(1, 0), DC);
    DSTORE
}
extern "C" __global__ void mma_m16n8k8_f64(const double* a, const double* b, const double* c, double* d) {
    double r0, r1, r2, r3;
    asm("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};"
        : "=d"(r0), "=d"(r1), "=d"(r2), "=d"(r3) : DA(4, 0), DA(4, 1), DA(4, 2), DA(4, 3), DB(2, 0), DB(2, 1), DC);
    DSTORE
}
extern "C" __global__ void mma_m16n8k16_f64(const double* a, const double* b, const double* c, double* d) {
    double r0, r1, r2, r3;
    asm("mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7,%8,%9,%10,%11}, "
        "{%12,%13,%14,%15}, {%16,%17,%18,%19};"
        : "=d"(r0), "=d"(r1), "=d"(r2), "=d"(r3)
        : DA(8, 0), DA(8, 1), DA(8, 2), DA(8, 3), DA(8, 4), DA(8, 5), DA(8, 6), DA(8, 7),
          DB(4, 0), DB(4, 1), DB(4, 2), DB(4, 3), DC);
    DSTORE
}

// .b1: d = popc(row of A AND/XOR column of B) + c
extern "C" __global__ void mma_m8n8k128_b1_xor(const uint32_t* a, const uint32_t* b, const uint32_t* c, uint32_t* d) {
    uint32_t r0, r1;
    asm("mma.sync.aligned.m8n8k128.row.col.s32.b1.b1.s32.xor.popc {%0,%1}, {%2}, {%3}, {%4,%5};"
        : "=r"(r0), "=r"(r1) : "r"(R(a, 1, 0)), "r"(R(b, 1, 0)), "r"(R(c, 2, 0)), "r"(R(c, 2, 1)));
    R(d, 2, 0) = r0; R(d, 2, 1) = r1;
}
MMA_B32_4(mma_m16n8k128_b1_and, "mma.sync.aligned.m16n8k128.row.col.s32.b1.b1.s32.and.popc {%0,%1,%2,%3}, {%4,%5}, {%6}, {%7,%8,%9,%10};", 2, 1, A2, B1)
MMA_B32_4(mma_m16n8k256_b1_xor, "mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.xor.popc {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};", 4, 2, A4, B2)
