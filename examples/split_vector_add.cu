// A vector add split across every visible device: each device adds its slice of the vectors on a
// stream of its own (allocate, copy in, launch, copy back, all queued before any device is waited
// for), then the whole result is checked on the host. Runs on one server with several devices
// (cricket server --backend emu=devices=2) and on the devices of several servers as one list
// (cricket run --server a,b -- split_vector_add). Prints the device count and PASS, or FAIL and
// exits 1 at the first error.
#include <vector>
#include "check.h"

__global__ void vadd(const float *a, const float *b, float *c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        c[i] = a[i] + b[i];
}

struct Slice {
    int first, count;
    float *a, *b, *c;
    cudaStream_t stream;
};

int main()
{
    const int n = 1 << 18;
    int devices = 0;
    CHECK(cudaGetDeviceCount(&devices));
    printf("devices: %d\n", devices);

    std::vector<float> a(n), b(n), c(n, -1.0f);
    for (int i = 0; i < n; i++) {
        a[i] = float(i);
        b[i] = float(3 * i + 1);        // exact in float below 2^24: the check is equality
    }

    std::vector<Slice> slices(devices);
    for (int d = 0; d < devices; d++) {
        Slice &s = slices[d];
        s.first = int((long long)n * d / devices);
        s.count = int((long long)n * (d + 1) / devices) - s.first;
        size_t bytes = size_t(s.count) * sizeof(float);
        CHECK(cudaSetDevice(d));
        CHECK(cudaStreamCreate(&s.stream));
        CHECK(cudaMalloc(&s.a, bytes));
        CHECK(cudaMalloc(&s.b, bytes));
        CHECK(cudaMalloc(&s.c, bytes));
        CHECK(cudaMemcpyAsync(s.a, &a[s.first], bytes, cudaMemcpyHostToDevice, s.stream));
        CHECK(cudaMemcpyAsync(s.b, &b[s.first], bytes, cudaMemcpyHostToDevice, s.stream));
        vadd<<<(s.count + 255) / 256, 256, 0, s.stream>>>(s.a, s.b, s.c, s.count);
        CHECK(cudaGetLastError());
        CHECK(cudaMemcpyAsync(&c[s.first], s.c, bytes, cudaMemcpyDeviceToHost, s.stream));
    }
    for (int d = 0; d < devices; d++) {
        Slice &s = slices[d];
        CHECK(cudaSetDevice(d));
        CHECK(cudaStreamSynchronize(s.stream));
        CHECK(cudaStreamDestroy(s.stream));
        CHECK(cudaFree(s.a));
        CHECK(cudaFree(s.b));
        CHECK(cudaFree(s.c));
        printf("device %d: elements [%d, %d)\n", d, s.first, s.first + s.count);
    }

    int wrong = 0;
    for (int i = 0; i < n; i++)
        wrong += c[i] != a[i] + b[i];
    if (wrong)
        printf("%d of %d elements wrong\n", wrong, n);
    char what[64];
    snprintf(what, sizeof what, "split vector add over %d device(s)", devices);
    return report(what, wrong != 0 || devices < 1);
}
