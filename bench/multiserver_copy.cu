// A copy between two devices against the same bytes moved by hand through the host, for
// bench/multiserver.py. Devices 0 and 1 may be two devices of one server or the devices of two
// servers (CRICKET_SERVER=a,b). For each size: "peer_MIB": cudaMemcpyPeer from device 0 to
// device 1; "staged_MIB": cudaMemcpy device 0 → host, then host → device 1 (two single-server
// copies); "dtoh_MIB" and "htod_MIB": each half of it alone. Prints "devices N", then
// "NAME MICROSECONDS" per figure (the median of bench_timing.h's trials, each copy timed until
// device 1 holds the bytes); checks that the bytes arrived either way and exits 1 with a FAIL
// line otherwise.
//   multiserver_copy MIB...
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <cuda_runtime.h>

#include "../examples/bench_timing.h"

static void must(cudaError_t e, const char *what)
{
    if (e != cudaSuccess) {
        printf("FAIL: %s: %s\n", what, cudaGetErrorName(e));
        exit(1);
    }
}

// Each timed copy ends when device 1 holds the bytes (a copy from pageable memory may return once
// the bytes are staged): the same synchronisation in both figures.
static void arrived()
{
    must(cudaSetDevice(1), "cudaSetDevice(1)");
    must(cudaDeviceSynchronize(), "cudaDeviceSynchronize on device 1");
    must(cudaSetDevice(0), "cudaSetDevice(0)");
}

static void same(const std::vector<unsigned char> &want, const unsigned char *dev, size_t bytes, const char *what)
{
    std::vector<unsigned char> got(bytes);
    must(cudaMemcpy(got.data(), dev, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy to check");
    if (memcmp(got.data(), want.data(), bytes) != 0) {
        printf("FAIL: %s: the bytes on device 1 differ from device 0's\n", what);
        exit(1);
    }
}

int main(int argc, char **argv)
{
    int devices = 0;
    must(cudaGetDeviceCount(&devices), "cudaGetDeviceCount");
    printf("devices %d\n", devices);
    if (devices < 2) {
        printf("FAIL: %d device(s): the copy needs two\n", devices);
        return 1;
    }
    for (int a = 1; a < argc; a++) {
        size_t mib = strtoull(argv[a], nullptr, 0), bytes = mib << 20;
        std::vector<unsigned char> pattern(bytes), host(bytes);
        for (size_t i = 0; i < bytes; i++)
            pattern[i] = (unsigned char)(i * 131 + mib);
        unsigned char *src, *dst;
        must(cudaSetDevice(0), "cudaSetDevice(0)");
        must(cudaMalloc((void **)&src, bytes), "cudaMalloc on device 0");
        must(cudaMemcpy(src, pattern.data(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy to device 0");
        must(cudaSetDevice(1), "cudaSetDevice(1)");
        must(cudaMalloc((void **)&dst, bytes), "cudaMalloc on device 1");
        must(cudaSetDevice(0), "cudaSetDevice(0)");

        char name[64];
        snprintf(name, sizeof name, "peer_%zu", mib);
        double peer = median_us([&] {
            must(cudaMemcpyPeer(dst, 1, src, 0, bytes), "cudaMemcpyPeer");
            arrived();
        }, 3);
        same(pattern, dst, bytes, "cudaMemcpyPeer");
        printf("%s %.3f\n", name, peer);

        must(cudaMemset(dst, 0, bytes), "cudaMemset");
        snprintf(name, sizeof name, "staged_%zu", mib);
        double staged = median_us([&] {
            must(cudaMemcpy(host.data(), src, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy device 0 to host");
            must(cudaMemcpy(dst, host.data(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy host to device 1");
            arrived();
        }, 3);
        same(pattern, dst, bytes, "the staged copy");
        printf("%s %.3f\n", name, staged);

        // each half alone: what one crossing costs (docs/multiserver-copies.md estimates from them)
        snprintf(name, sizeof name, "dtoh_%zu", mib);
        printf("%s %.3f\n", name, median_us([&] {
            must(cudaMemcpy(host.data(), src, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy device 0 to host");
        }, 3));
        snprintf(name, sizeof name, "htod_%zu", mib);
        printf("%s %.3f\n", name, median_us([&] {
            must(cudaMemcpy(dst, host.data(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy host to device 1");
            arrived();
        }, 3));
        must(cudaFree(src), "cudaFree");
        must(cudaFree(dst), "cudaFree");
    }
    return 0;
}
