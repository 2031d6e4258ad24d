// __device__ and __constant__ variables through cudaMemcpyToSymbol / cudaMemcpyFromSymbol.
#include "check.h"

__constant__ float coeffs[4];
__device__ int counter;
__device__ float table[64];

__global__ void poly(int n)
{
    int i = threadIdx.x;
    if (i < n) {
        float x = i;
        table[i] = coeffs[0] + x * (coeffs[1] + x * (coeffs[2] + x * coeffs[3]));
        atomicAdd(&counter, 1);
    }
}

int main()
{
    const float c[4] = {1, 2, 0.5f, 0.25f};
    int zero = 0, count = -1;
    float out[64];
    CHECK(cudaMemcpyToSymbol(coeffs, c, sizeof c));
    CHECK(cudaMemcpyToSymbol(counter, &zero, sizeof zero));
    poly<<<1, 64>>>(64);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpyFromSymbol(out, table, sizeof out));
    CHECK(cudaMemcpyFromSymbol(&count, counter, sizeof count));
    size_t size = 0;
    void *addr = nullptr;
    CHECK(cudaGetSymbolSize(&size, table));
    CHECK(cudaGetSymbolAddress(&addr, table));
    float second;
    CHECK(cudaMemcpy(&second, (float *)addr + 2, sizeof second, cudaMemcpyDeviceToHost));
    int bad = count != 64 || size != sizeof out || addr == nullptr || second != out[2];
    for (int i = 0; i < 64; i++) {
        float x = i;
        if (out[i] != c[0] + x * (c[1] + x * (c[2] + x * c[3]))) bad++;
    }
    return report("__constant__ and __device__ symbols", bad);
}
