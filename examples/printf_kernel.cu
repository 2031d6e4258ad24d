// printf from a kernel: the lines appear where the kernel runs (the server's output).
#include "check.h"

__global__ void hello(int base)
{
    printf("hello from thread %d of block %d, value %d\n", threadIdx.x, blockIdx.x, base + threadIdx.x);
}

int main()
{
    hello<<<2, 2>>>(40);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    return report("printf from a kernel (4 lines printed by the device)", 0);
}
