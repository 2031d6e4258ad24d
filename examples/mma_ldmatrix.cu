// Warp-level mma.sync with ldmatrix fragments and movmatrix (the kernel is in mma_ldmatrix.cuh),
// checked against the host; small integers keep every sum exact.
#include "check.h"
#include "mma_ldmatrix.cuh"

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
