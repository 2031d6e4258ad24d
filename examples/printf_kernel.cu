// printf from a kernel: the device's lines reach this program's stdout at the synchronising call,
// between the host's own lines before and after it (as with CUDA's printf buffer).
#include "check.h"

__global__ void hello(int base)
{
    printf("hello from thread %d of block %d, value %d\n", threadIdx.x, blockIdx.x, base + threadIdx.x);
}

int main()
{
    printf("host: before the launch\n");
    hello<<<2, 2>>>(40);
    CHECK(cudaGetLastError());
    printf("host: launched, not synchronised\n");
    CHECK(cudaDeviceSynchronize());
    printf("host: after cudaDeviceSynchronize\n");
    return report("printf from a kernel (4 lines printed by the device)", 0);
}
