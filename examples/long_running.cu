// Keeps working for up to a minute; exits with status 3 and the CUDA error as soon as a call fails
// (for example when the server goes away).
//   long_running         launch + cudaDeviceSynchronize in a loop (waits on the server)
//   long_running async   launches only, checking cudaGetLastError (sends without waiting)
#include <cstdio>
#include <cstring>
#include <ctime>
#include <cuda_runtime.h>

__global__ void bump(int *x) { x[threadIdx.x] += 1; }

int main(int argc, char **argv)
{
    bool async = argc > 1 && !strcmp(argv[1], "async");
    int *d;
    cudaError_t e = cudaMalloc(&d, 32 * sizeof(int));
    time_t start = time(nullptr);
    for (long i = 0; e == cudaSuccess && time(nullptr) - start < 60; i++) {
        bump<<<1, 32>>>(d);
        e = async && i > 0 ? cudaGetLastError() : cudaDeviceSynchronize();
        if (i == 0) { printf("running\n"); fflush(stdout); }
    }
    if (e != cudaSuccess) {
        printf("stopped: %s (%s)\n", cudaGetErrorName(e), cudaGetErrorString(e));
        return 3;
    }
    printf("FAIL: still running after a minute\n");
    return 1;
}
