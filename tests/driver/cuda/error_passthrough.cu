// NVIDIA's cudart on a driver whose calls fail on purpose (CRICKET_DRIVER_FAIL): prints the
// cudaError_t of a launch, of cudaFree and of cudaStreamSynchronize as "what CODE NAME" lines.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void touch(int *p) { if (p) *p = 1; }

#define SHOW(what, call) do { cudaError_t e_ = (call); printf("%s %d %s\n", what, (int)e_, cudaGetErrorName(e_)); \
    cudaGetLastError(); } while (0)

int main()
{
    int *d = nullptr;
    SHOW("malloc", cudaMalloc(&d, 64));
    touch<<<1, 32>>>(d);
    SHOW("launch", cudaGetLastError());
    cudaStream_t s;
    cudaStreamCreate(&s);
    SHOW("stream_sync", cudaStreamSynchronize(s));
    SHOW("free", cudaFree(d));
    return 0;
}
