// Built with --default-stream per-thread: stream 0 means each host thread's own default stream, and
// the calls below resolve to the _ptsz/_ptds exports. Several threads launch, copy and synchronise
// on it at once; each checks its own results.
#include <cstdio>
#include <cstdlib>
#include <pthread.h>
#include <cuda_runtime.h>

#include "../../../examples/check.h"     // CHECK(call)

__global__ void add(int *out, int base, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] += base + i;
}

static void *work(void *arg)
{
    long id = (long)arg;
    const int n = 1000;
    int *h, *d;
    long bad = 0;
    CHECK(cudaMallocHost(&h, n * sizeof(int)));
    CHECK(cudaMalloc(&d, n * sizeof(int)));
    for (int round = 0; round < 3; round++) {
        int base = (int)id * 10000 + round * 100;
        CHECK(cudaMemset(d, 0, n * sizeof(int)));                        // cudaMemset_ptds
        add<<<(n + 127) / 128, 128>>>(d, base, n);                        // launch _ptsz, stream 0
        CHECK(cudaGetLastError());
        add<<<(n + 127) / 128, 128, 0, cudaStreamPerThread>>>(d, 1, n);
        CHECK(cudaMemcpyAsync(h, d, n * sizeof(int), cudaMemcpyDeviceToHost, 0));
        CHECK(cudaStreamSynchronize(0));                                  // this thread's stream
        for (int i = 0; i < n; i++) if (h[i] != base + i + 1 + i) bad++;
        CHECK(cudaStreamQuery(cudaStreamPerThread));
    }
    int back[4] = {0};
    CHECK(cudaMemcpy(back, d, sizeof back, cudaMemcpyDeviceToHost));      // cudaMemcpy_ptds
    if (back[1] != (int)id * 10000 + 200 + 1 + 1 + 1) bad++;
    CHECK(cudaFree(d));
    CHECK(cudaFreeHost(h));
    return (void *)bad;
}

int main()
{
    const int nthreads = 4;
    pthread_t t[nthreads];
    for (long i = 0; i < nthreads; i++) pthread_create(&t[i], nullptr, work, (void *)i);
    long bad = 0;
    for (int i = 0; i < nthreads; i++) { void *r; pthread_join(t[i], &r); bad += (long)r; }
    CHECK(cudaDeviceSynchronize());
    printf("%s: %d host threads on their per-thread default streams (%ld wrong values)\n",
           bad ? "FAIL" : "PASS", nthreads, bad);
    return bad ? 1 : 0;
}
