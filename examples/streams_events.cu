// Two streams, async copies from and to pinned memory, events for ordering and timing.
#include "check.h"

__global__ void scale(float *x, float f, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= f;
}

int main()
{
    const int n = 4096, half = n / 2;
    float *h, *d;
    CHECK(cudaMallocHost(&h, n * sizeof(float)));
    CHECK(cudaMalloc(&d, n * sizeof(float)));
    for (int i = 0; i < n; i++) h[i] = i;
    cudaStream_t s[2];
    cudaEvent_t start, stop, done0;
    CHECK(cudaStreamCreate(&s[0]));
    CHECK(cudaStreamCreateWithFlags(&s[1], cudaStreamNonBlocking));
    CHECK(cudaEventCreate(&start)); CHECK(cudaEventCreate(&stop));
    CHECK(cudaEventCreateWithFlags(&done0, cudaEventDisableTiming));
    CHECK(cudaEventRecord(start, s[0]));
    for (int k = 0; k < 2; k++) {
        float *hp = h + k * half, *dp = d + k * half;
        CHECK(cudaMemcpyAsync(dp, hp, half * sizeof(float), cudaMemcpyHostToDevice, s[k]));
        scale<<<(half + 255) / 256, 256, 0, s[k]>>>(dp, k + 2.0f, half);
        CHECK(cudaMemcpyAsync(hp, dp, half * sizeof(float), cudaMemcpyDeviceToHost, s[k]));
    }
    CHECK(cudaEventRecord(done0, s[0]));
    CHECK(cudaStreamWaitEvent(s[1], done0, 0));
    CHECK(cudaEventRecord(stop, s[1]));
    CHECK(cudaEventSynchronize(stop));
    CHECK(cudaStreamSynchronize(s[0]));
    CHECK(cudaStreamSynchronize(s[1]));
    cudaError_t q = cudaStreamQuery(s[0]);
    float ms = -1;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    int bad = q != cudaSuccess || ms < 0;
    for (int i = 0; i < n; i++)
        if (h[i] != i * (i < half ? 2.0f : 3.0f)) bad++;
    printf("elapsed %.3f ms between events\n", ms);
    CHECK(cudaEventDestroy(start)); CHECK(cudaEventDestroy(stop)); CHECK(cudaEventDestroy(done0));
    CHECK(cudaStreamDestroy(s[0])); CHECK(cudaStreamDestroy(s[1]));
    CHECK(cudaFree(d)); CHECK(cudaFreeHost(h));
    return report("streams and events with async copies from pinned memory", bad);
}
