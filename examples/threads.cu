// Several host threads issue CUDA calls at once, each on its own stream and buffers.
#include "check.h"
#include <pthread.h>

__global__ void iota(int *out, int base, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = base + i;
}

static void *work(void *arg)
{
    long id = (long)arg;
    const int n = 256;
    int h[n], *d;
    long bad = 0;
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    CHECK(cudaMalloc(&d, sizeof h));
    for (int round = 0; round < 3; round++) {
        int base = (int)id * 1000 + round * 100;
        iota<<<(n + 63) / 64, 64, 0, s>>>(d, base, n);
        CHECK(cudaGetLastError());
        CHECK(cudaMemcpyAsync(h, d, sizeof h, cudaMemcpyDeviceToHost, s));
        CHECK(cudaStreamSynchronize(s));
        for (int i = 0; i < n; i++) if (h[i] != base + i) bad++;
    }
    CHECK(cudaFree(d));
    CHECK(cudaStreamDestroy(s));
    return (void *)bad;
}

int main()
{
    const int nthreads = 4;
    pthread_t t[nthreads];
    for (long i = 0; i < nthreads; i++) pthread_create(&t[i], nullptr, work, (void *)i);
    long bad = 0;
    for (int i = 0; i < nthreads; i++) { void *r; pthread_join(t[i], &r); bad += (long)r; }
    return report("4 host threads issuing CUDA calls", (int)bad);
}
