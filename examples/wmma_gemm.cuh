// A tiled tensor-core GEMM, C = A * B (A: M x K, B: K x N, row-major half; C: M x N float).
// A block of four warps computes a 32x32 tile of C: each k-step stages a 32x16 tile of A and a
// 16x32 tile of B in shared memory, and each warp multiplies its 16x16 fragments with wmma.
// M, N must be multiples of 32 and K a multiple of 16.
#pragma once
#include <mma.h>

#define GEMM_TILE 32
#define GEMM_KTILE 16
#define GEMM_THREADS 128

extern "C" __global__ void wmma_gemm(const half* a, const half* b, float* c, int m, int n, int k)
{
    using namespace nvcuda;
    // rows padded by 8 halves (16 bytes): fragment addresses stay 32-byte aligned
    __shared__ __align__(32) half ta[GEMM_TILE][GEMM_KTILE + 8];
    __shared__ __align__(32) half tb[GEMM_KTILE][GEMM_TILE + 8];
    int warp = threadIdx.x / 32, wr = warp / 2, wc = warp % 2;
    int row0 = blockIdx.y * GEMM_TILE, col0 = blockIdx.x * GEMM_TILE;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    for (int k0 = 0; k0 < k; k0 += GEMM_KTILE) {
        for (int i = threadIdx.x; i < GEMM_TILE * GEMM_KTILE; i += GEMM_THREADS) {
            int r = i / GEMM_KTILE, q = i % GEMM_KTILE;
            ta[r][q] = a[(row0 + r) * k + k0 + q];
            int rb = i / GEMM_TILE, qb = i % GEMM_TILE;
            tb[rb][qb] = b[(k0 + rb) * n + col0 + qb];
        }
        __syncthreads();
        wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
        wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::row_major> fb;
        wmma::load_matrix_sync(fa, &ta[wr * 16][0], GEMM_KTILE + 8);
        wmma::load_matrix_sync(fb, &tb[0][wc * 16], GEMM_TILE + 8);
        wmma::mma_sync(acc, fa, fb, acc);
        __syncthreads();
    }
    wmma::store_matrix_sync(c + (row0 + wr * 16) * n + col0 + wc * 16, acc, n, wmma::mem_row_major);
}
