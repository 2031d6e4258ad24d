// Tiled tensor-core GEMM (wmma, shared-memory tiles) checked against the host product. The inputs
// are small integers, so every sum is exact and the result must match bit for bit.
#include "check.h"
#include "wmma_gemm.cuh"
#include <cuda_fp16.h>
#include <vector>

int main()
{
    const int m = 64, n = 96, k = 48;
    std::vector<half> a(m * k), b(k * n);
    std::vector<float> fa(m * k), fb(k * n), c(m * n);
    for (int i = 0; i < m * k; i++) { fa[i] = (float)(i * 7 % 9 - 4); a[i] = __float2half(fa[i]); }
    for (int i = 0; i < k * n; i++) { fb[i] = (float)(i * 5 % 7 - 3); b[i] = __float2half(fb[i]); }
    half *da, *db;
    float *dc;
    CHECK(cudaMalloc(&da, a.size() * sizeof(half)));
    CHECK(cudaMalloc(&db, b.size() * sizeof(half)));
    CHECK(cudaMalloc(&dc, c.size() * sizeof(float)));
    CHECK(cudaMemcpy(da, a.data(), a.size() * sizeof(half), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(db, b.data(), b.size() * sizeof(half), cudaMemcpyHostToDevice));
    wmma_gemm<<<dim3(n / GEMM_TILE, m / GEMM_TILE), GEMM_THREADS>>>(da, db, dc, m, n, k);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(c.data(), dc, c.size() * sizeof(float), cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            float s = 0;
            for (int q = 0; q < k; q++) s += fa[i * k + q] * fb[q * n + j];
            if (s != c[i * n + j]) bad++;
        }
    CHECK(cudaFree(da)); CHECK(cudaFree(db)); CHECK(cudaFree(dc));
    return report("tiled 64x96x48 tensor-core GEMM (wmma, f16 in, f32 accumulate)", bad);
}
