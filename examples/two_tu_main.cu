// Two translation units: a kernel here, one in two_tu_kernels.cu. Built twice: as whole-program
// units (two_tu) and with -rdc=true, where the kernel here calls square() from the other unit (rdc).
#include "check.h"

int launch_squares(int *out, int n);
#ifdef USE_RDC
__device__ int square(int x);
#else
static __device__ int square(int x) { return x * x; }
#endif

__global__ void cubes(int *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = square(i) * i;
}

int main()
{
    const int n = 100;
    int *d, h[n];
    CHECK(cudaMalloc(&d, 2 * sizeof h));
    CHECK((cudaError_t)launch_squares(d, n));
    cubes<<<(n + 63) / 64, 64>>>(d + n, n);
    CHECK(cudaGetLastError());
    int bad = 0;
    CHECK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; i++) if (h[i] != i * i) bad++;
    CHECK(cudaMemcpy(h, d + n, sizeof h, cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; i++) if (h[i] != i * i * i) bad++;
    CHECK(cudaFree(d));
#ifdef USE_RDC
    return report("two translation units with -rdc=true", bad);
#else
    return report("two translation units", bad);
#endif
}
