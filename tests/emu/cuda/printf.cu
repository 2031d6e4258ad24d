#include <cstdio>
extern "C" __global__ void hello(int base, double scale)
{
    int t = threadIdx.x + blockIdx.x * blockDim.x;
    if (t % 3 == 0)
        printf("thread %d of block %u: %d %.3f %s %c %lld %x\n", t, blockIdx.x, base + t, scale * t,
               t % 2 ? "odd" : "even", 'A' + t % 26, (long long)t << 33, t * 255);
}
