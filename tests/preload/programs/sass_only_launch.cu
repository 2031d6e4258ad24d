// A kernel built as SASS only (no PTX): on the emu backend its launch itself fails with
// cudaErrorNoKernelImageForDevice, and the process goes on (tests/preload/test_sass_only_launch.py).
#include <cstdio>

__global__ void scale(float *x, float a) { x[threadIdx.x] *= a; }

int main()
{
    float *d = nullptr;
    float h[32] = {0};
    cudaMalloc(&d, sizeof h);
    cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice);
    scale<<<1, 32>>>(d, 2.0f);
    printf("launch: %s\n", cudaGetErrorName(cudaGetLastError()));
    printf("sync: %s\n", cudaGetErrorName(cudaDeviceSynchronize()));
    printf("copy: %s\n", cudaGetErrorName(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost)));
    return 0;
}
