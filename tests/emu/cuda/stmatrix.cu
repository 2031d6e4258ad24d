// stmatrix (sm_90): each lane passes its fragment registers (in[w][lane][i]); lane 8i + r names
// where row r of matrix i goes in shared memory. out[w] is the shared tile afterwards.
#include <stdint.h>

template <int NUM, bool TRANS>
__device__ void stmatrix_case(const uint32_t* in, uint16_t* out) {
    __shared__ __align__(16) uint16_t s[2][4 * 64];
    int wl = threadIdx.x / 32, lane = threadIdx.x % 32, w = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    uint32_t r[4];
    for (int i = 0; i < 4; i++) r[i] = i < NUM ? in[(w * 32 + lane) * NUM + i] : 0;
    uint32_t addr = (uint32_t)__cvta_generic_to_shared(&s[wl][(lane % (8 * NUM)) * 8]);
    if (NUM == 1 && !TRANS) asm volatile("stmatrix.sync.aligned.m8n8.x1.shared.b16 [%0], {%1};" :: "r"(addr), "r"(r[0]));
    if (NUM == 2 && !TRANS)
        asm volatile("stmatrix.sync.aligned.m8n8.x2.shared.b16 [%0], {%1,%2};" :: "r"(addr), "r"(r[0]), "r"(r[1]));
    if (NUM == 4 && !TRANS)
        asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1,%2,%3,%4};"
                     :: "r"(addr), "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3]));
    if (NUM == 1 && TRANS)
        asm volatile("stmatrix.sync.aligned.m8n8.x1.trans.shared.b16 [%0], {%1};" :: "r"(addr), "r"(r[0]));
    if (NUM == 2 && TRANS)
        asm volatile("stmatrix.sync.aligned.m8n8.x2.trans.shared.b16 [%0], {%1,%2};" :: "r"(addr), "r"(r[0]), "r"(r[1]));
    if (NUM == 4 && TRANS)
        asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1,%2,%3,%4};"
                     :: "r"(addr), "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3]));
    __syncwarp();
    for (int i = lane; i < NUM * 64; i += 32) out[w * NUM * 64 + i] = s[wl][i];
}
extern "C" __global__ void stmatrix_x1(const uint32_t* in, uint16_t* out) { stmatrix_case<1, false>(in, out); }
extern "C" __global__ void stmatrix_x2(const uint32_t* in, uint16_t* out) { stmatrix_case<2, false>(in, out); }
extern "C" __global__ void stmatrix_x4(const uint32_t* in, uint16_t* out) { stmatrix_case<4, false>(in, out); }
extern "C" __global__ void stmatrix_x1_trans(const uint32_t* in, uint16_t* out) { stmatrix_case<1, true>(in, out); }
extern "C" __global__ void stmatrix_x2_trans(const uint32_t* in, uint16_t* out) { stmatrix_case<2, true>(in, out); }
extern "C" __global__ void stmatrix_x4_trans(const uint32_t* in, uint16_t* out) { stmatrix_case<4, true>(in, out); }
