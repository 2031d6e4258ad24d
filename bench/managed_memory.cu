// Managed memory against explicit copies, for bench/managed_memory.py: each round the host changes
// some of a buffer, a kernel adds one to one element of every 4 KiB (cheap on the emulated device,
// so the rounds time the moving of memory), and the host reads the result. Explicit:
// cudaMemcpy the buffer to the device, launch, cudaMemcpy it back. Managed: write the
// cudaMallocManaged buffer, launch, cudaDeviceSynchronize. Prints "NAME MICROSECONDS" per round.
//   managed_memory MIB ROUNDS
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#include "../examples/bench_timing.h"

__global__ void add_one(int *v, size_t n)
{
    size_t i = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) * 1024;
    if (i < n)
        v[i] += 1;
}

static void must(cudaError_t e, const char *what)
{
    if (e != cudaSuccess) {
        fprintf(stderr, "FAIL %s: %s\n", what, cudaGetErrorName(e));
        exit(1);
    }
}

// the host's changes of one round: every element, or one element of every 64th page
static void touch(int *v, size_t n, bool all, int round)
{
    size_t step = all ? 1 : 64 * 1024;
    for (size_t i = 0; i < n; i += step)
        v[i] = round;
}

int main(int argc, char **argv)
{
    size_t mib = argc > 1 ? strtoull(argv[1], nullptr, 0) : 16;
    long rounds = argc > 2 ? atol(argv[2]) : 5;
    size_t n = mib * (1 << 20) / sizeof(int), bytes = n * sizeof(int);
    unsigned blocks = (unsigned)((n / 1024 + 255) / 256);
    int *host = (int *)calloc(n, sizeof(int)), *dev, *managed;
    must(cudaMalloc((void **)&dev, bytes), "cudaMalloc");
    must(cudaMallocManaged((void **)&managed, bytes), "cudaMallocManaged");
    long sink = 0;
    // warm-up, not timed: the module's load, the first launch, the first copies of each kind
    must(cudaMemcpy(dev, host, bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
    add_one<<<blocks, 256>>>(dev, n);
    must(cudaMemcpy(host, dev, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy");
    add_one<<<blocks, 256>>>(managed, n);
    must(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    for (int all = 1; all >= 0; all--) {
        const char *what = all ? "all" : "sparse";
        char name[64];
        snprintf(name, sizeof name, "explicit_%s", what);
        TIME(name, rounds, touch(host, n, all, (int)i_);
             must(cudaMemcpy(dev, host, bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
             add_one<<<blocks, 256>>>(dev, n);
             must(cudaMemcpy(host, dev, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy");
             sink += host[n - 1]);
        snprintf(name, sizeof name, "managed_%s", what);
        TIME(name, rounds, touch(managed, n, all, (int)i_);
             add_one<<<blocks, 256>>>(managed, n);
             must(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
             sink += managed[n - 1]);
    }
    fprintf(stderr, "checksum %ld\n", sink);
    return 0;
}
