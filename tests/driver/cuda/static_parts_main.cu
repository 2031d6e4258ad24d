// Calls into two shared libraries that each carry their own static cudart, then its own: three
// cudart instances in one process on one libcuda.so.1.
#include <cstdio>
#include <cuda_runtime.h>
extern "C" int part_a(int *, int *);
extern "C" int part_b(int *, int *);
int main()
{
    int count = -1, greatest = 1, least;
    printf("part_a %d", part_a(&count, &greatest)); printf(" %d %d\n", count, greatest);
    printf("part_b %d", part_b(&count, &greatest)); printf(" %d %d\n", count, greatest);
    printf("main %d\n", (int)cudaDeviceGetStreamPriorityRange(&least, &greatest));
    return 0;
}
