// Allocates 16 MiB blocks until cudaMalloc fails; prints what cudaMemGetInfo says before and after.
#include <cstdio>
#include <cuda_runtime.h>

int main() {
    size_t free_bytes = 0, total = 0;
    cudaMemGetInfo(&free_bytes, &total);
    printf("before %zu %zu\n", free_bytes, total);
    void *blocks[256];
    int n = 0;
    cudaError_t err = cudaSuccess;
    while (n < 256 && (err = cudaMalloc(&blocks[n], 16 << 20)) == cudaSuccess) {
        n++;
    }
    printf("allocated %d %s\n", n, cudaGetErrorName(err));
    cudaGetLastError();
    cudaMemGetInfo(&free_bytes, &total);
    printf("after %zu %zu\n", free_bytes, total);
    for (int i = 0; i < n; i++) {
        cudaFree(blocks[i]);
    }
    printf("again %s\n", cudaGetErrorName(cudaMalloc(&blocks[0], 16 << 20)));
    return 0;
}
