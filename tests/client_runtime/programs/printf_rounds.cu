// Device printf for the output tests. `printf_rounds tagged TAG`: five rounds of a host line, a
// launch whose threads print, and a different synchronising call (the last round's lines come at
// exit). `printf_rounds flood`: one launch printing more than CUDA's 1 MiB printf buffer holds,
// synchronised, then one more line that must arrive. `printf_rounds limit`: a 4 KiB printf buffer
// (cudaLimitPrintfFifoSize) set before the first launch, and refused after it.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

#include "../../../examples/check.h"     // CHECK(call)

__global__ void tagged(int tag, int round, int *out)
{
    printf("device tag %d round %d thread %d\n", tag, round, threadIdx.x);
    if (threadIdx.x == 0)
        *out = round;
}

__global__ void wide()
{
    printf("%1000d\n", blockIdx.x * blockDim.x + threadIdx.x);   // 1001 bytes a line
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "flood") == 0) {
        int *d;
        CHECK(cudaMalloc(&d, sizeof(int)));
        wide<<<4, 320>>>();
        CHECK(cudaDeviceSynchronize());
        printf("host: after the flood\n");
        tagged<<<1, 1>>>(7, 0, d);
        CHECK(cudaDeviceSynchronize());
        printf("host: done\n");
        return 0;
    }
    if (argc >= 2 && strcmp(argv[1], "limit") == 0) {
        size_t size = 0;
        CHECK(cudaDeviceSetLimit(cudaLimitPrintfFifoSize, 4096));
        CHECK(cudaDeviceGetLimit(&size, cudaLimitPrintfFifoSize));
        printf("host: printf buffer %zu bytes\n", size);
        wide<<<1, 8>>>();
        CHECK(cudaDeviceSynchronize());
        cudaError_t late = cudaDeviceSetLimit(cudaLimitPrintfFifoSize, 1 << 20);
        printf("host: set after a printing launch: %s\n", cudaGetErrorName(late));
        return 0;
    }
    int tag = argc >= 3 ? atoi(argv[2]) : 1;
    int *d, h = -1;
    cudaStream_t s;
    cudaEvent_t ev;
    CHECK(cudaMalloc(&d, sizeof(int)));
    CHECK(cudaStreamCreate(&s));
    CHECK(cudaEventCreate(&ev));
    for (int round = 0; round < 5; round++) {
        printf("host tag %d round %d before\n", tag, round);
        tagged<<<1, 3, 0, round == 1 ? s : 0>>>(tag, round, d);
        CHECK(cudaGetLastError());
        switch (round) {
        case 0: CHECK(cudaDeviceSynchronize()); break;
        case 1: CHECK(cudaStreamSynchronize(s)); break;
        case 2: CHECK(cudaEventRecord(ev, 0)); CHECK(cudaEventSynchronize(ev)); break;
        case 3: CHECK(cudaMemcpy(&h, d, sizeof(int), cudaMemcpyDeviceToHost)); break;
        default: break;     // no synchronising call: the lines come when the program exits
        }
        printf("host tag %d round %d after\n", tag, round);
    }
    return h == 3 ? 0 : 1;
}
