// wmma (mma.h) kernels: each warp computes D = A*B + C for its own item, A, B, C and D stored with
// the layouts and leading dimensions the host chooses (the strides are kernel arguments).
#include <mma.h>
#include <cuda_bf16.h>
using namespace nvcuda;

template <int M, int N, int K, typename TA, typename TS, typename TC, typename LA, typename LB>
__device__ void wmma_item(const TS* a, const TS* b, const TC* c, TC* d, int lda, int ldb, int ldc,
                          int a_item, int b_item, int c_item, bool c_col) {
    int w = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    wmma::fragment<wmma::matrix_a, M, N, K, TA, LA> fa;
    wmma::fragment<wmma::matrix_b, M, N, K, TA, LB> fb;
    wmma::fragment<wmma::accumulator, M, N, K, TC> fc;
    wmma::load_matrix_sync(fa, a + w * a_item, lda);
    wmma::load_matrix_sync(fb, b + w * b_item, ldb);
    wmma::layout_t lc = c_col ? wmma::mem_col_major : wmma::mem_row_major;
    wmma::load_matrix_sync(fc, c + w * c_item, ldc, lc);
    wmma::mma_sync(fc, fa, fb, fc);
    wmma::store_matrix_sync(d + w * c_item, fc, ldc, lc);
}

#define WMMA_KERNEL(NAME, M, N, K, TA, TS, TC, LA, LB)                                              \
    extern "C" __global__ void NAME(const TS* a, const TS* b, const TC* c, TC* d, int lda, int ldb,  \
                                    int ldc, int a_item, int b_item, int c_item, bool c_col) {       \
        wmma_item<M, N, K, TA, TS, TC, wmma::LA, wmma::LB>(a, b, c, d, lda, ldb, ldc, a_item,        \
                                                          b_item, c_item, c_col);                    \
    }

WMMA_KERNEL(wmma_f16_f32_m16n16k16_rr, 16, 16, 16, half, half, float, row_major, row_major)
WMMA_KERNEL(wmma_f16_f32_m16n16k16_cc, 16, 16, 16, half, half, float, col_major, col_major)
WMMA_KERNEL(wmma_f16_f16_m16n16k16_rc, 16, 16, 16, half, half, half, row_major, col_major)
WMMA_KERNEL(wmma_f16_f32_m32n8k16_rc, 32, 8, 16, half, half, float, row_major, col_major)
WMMA_KERNEL(wmma_f16_f16_m8n32k16_cr, 8, 32, 16, half, half, half, col_major, row_major)
WMMA_KERNEL(wmma_bf16_f32_m16n16k16_rr, 16, 16, 16, __nv_bfloat16, __nv_bfloat16, float, row_major, row_major)
WMMA_KERNEL(wmma_bf16_f32_m32n8k16_cc, 32, 8, 16, __nv_bfloat16, __nv_bfloat16, float, col_major, col_major)
WMMA_KERNEL(wmma_bf16_f32_m8n32k16_rc, 8, 32, 16, __nv_bfloat16, __nv_bfloat16, float, row_major, col_major)
WMMA_KERNEL(wmma_tf32_f32_m16n16k8_rc, 16, 16, 8, wmma::precision::tf32, float, float, row_major, col_major)
WMMA_KERNEL(wmma_tf32_f32_m16n16k8_cr, 16, 16, 8, wmma::precision::tf32, float, float, col_major, row_major)
WMMA_KERNEL(wmma_f64_m8n8k4_rc, 8, 8, 4, double, double, double, row_major, col_major)
WMMA_KERNEL(wmma_f64_m8n8k4_cr, 8, 8, 4, double, double, double, col_major, row_major)
WMMA_KERNEL(wmma_s8_m16n16k16_rc, 16, 16, 16, signed char, signed char, int, row_major, col_major)
WMMA_KERNEL(wmma_u8_m32n8k16_rr, 32, 8, 16, unsigned char, unsigned char, int, row_major, row_major)
WMMA_KERNEL(wmma_s8_m8n32k16_cc, 8, 32, 16, signed char, signed char, int, col_major, col_major)

// tf32 inputs rounded with __float_to_tf32 (cvt.rna.tf32.f32) before the product, and the
// accumulator scaled element by element: d = alpha * (A*B) + beta * C.
extern "C" __global__ void wmma_tf32_rounded_axpby(const float* a, const float* b, const float* c, float* d,
                                                   float alpha, float beta) {
    wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::row_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 8, float> acc, fc;
    wmma::load_matrix_sync(fa, a, 8);
    wmma::load_matrix_sync(fb, b, 16);
    for (int i = 0; i < fa.num_elements; i++) fa.x[i] = wmma::__float_to_tf32(fa.x[i]);
    for (int i = 0; i < fb.num_elements; i++) fb.x[i] = wmma::__float_to_tf32(fb.x[i]);
    wmma::fill_fragment(acc, 0.0f);
    wmma::mma_sync(acc, fa, fb, acc);
    wmma::load_matrix_sync(fc, c, 16, wmma::mem_row_major);
    for (int i = 0; i < fc.num_elements; i++) fc.x[i] = alpha * acc.x[i] + beta * fc.x[i];
    wmma::store_matrix_sync(d, fc, 16, wmma::mem_row_major);
}

// Tiles staged through shared memory: the fragments load from and store to .shared addresses.
extern "C" __global__ void wmma_f16_shared(const half* a, const half* b, float* d) {
    __shared__ half sa[16 * 16], sb[16 * 16];
    __shared__ float sd[16 * 16];
    for (int i = threadIdx.x; i < 256; i += blockDim.x) { sa[i] = a[i]; sb[i] = b[i]; }
    __syncthreads();
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::row_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 1.0f);
    wmma::load_matrix_sync(fa, sa, 16);
    wmma::load_matrix_sync(fb, sb, 16);
    wmma::mma_sync(acc, fa, fb, acc);
    wmma::store_matrix_sync(sd, acc, 16, wmma::mem_row_major);
    __syncthreads();
    for (int i = threadIdx.x; i < 256; i += blockDim.x) d[i] = sd[i];
}

// Sub-byte wmma (wmma::experimental, sm_75+): A row-major, B column-major, packed low bits first;
// .b1 multiplies with bmma_sync (XOR, then POPC).
template <typename P, int K, int BITS>
__device__ void wmma_sub_byte(const void* a, const void* b, const int* c, int* d, int lda, int ldb, bool c_col) {
    using namespace nvcuda::wmma::experimental;
    int w = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    wmma::fragment<wmma::matrix_a, 8, 8, K, P, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 8, 8, K, P, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 8, 8, K, int> fc;
    wmma::layout_t lc = c_col ? wmma::mem_col_major : wmma::mem_row_major;
    wmma::load_matrix_sync(fa, (const char*)a + w * 8 * lda * BITS / 8, lda);
    wmma::load_matrix_sync(fb, (const char*)b + w * 8 * ldb * BITS / 8, ldb);
    wmma::load_matrix_sync(fc, c + w * 64, 8, lc);
    if constexpr (BITS == 1)
        wmma::bmma_sync(fc, fa, fb, fc, bmmaBitOpXOR, bmmaAccumulateOpPOPC);
    else
        wmma::mma_sync(fc, fa, fb, fc);
    wmma::store_matrix_sync(d + w * 64, fc, 8, lc);
}

#define WMMA_SUB_BYTE(NAME, P, K, BITS)                                                              \
    extern "C" __global__ void NAME(const void* a, const void* b, const int* c, int* d, int lda, int ldb, \
                                    bool c_col) {                                                    \
        wmma_sub_byte<nvcuda::wmma::experimental::precision::P, K, BITS>(a, b, c, d, lda, ldb, c_col); \
    }

WMMA_SUB_BYTE(wmma_s4_m8n8k32, s4, 32, 4)
WMMA_SUB_BYTE(wmma_u4_m8n8k32, u4, 32, 4)
WMMA_SUB_BYTE(wmma_b1_m8n8k128, b1, 128, 1)
