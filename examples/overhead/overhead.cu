// Remoting overhead: microseconds per call for the four classic cases.
//
//     nvcc -cudart shared -o overhead overhead.cu && ./overhead [ITERATIONS]
//     cricket run -- ./overhead                 (the same program with its calls remoted)
//
// 1. cudaGetDeviceCount (what one call costs when it does almost nothing)
// 2. cudaMalloc + cudaFree of 1 MiB
// 3. launch of an empty kernel <<<1, 32>>>, synchronised after each launch
// 4. launch of a kernel with seven parameters (three pointers, char, short, int, long long),
//    synchronised after each launch
// plus the same two launches asynchronous, synchronised once at the end (the time includes it).
// Each case runs 100 times to warm up, then ITERATIONS times (default 100000); one line per case:
//     overhead CASE US_PER_CALL
#include <cstdio>
#include <cstdlib>
#include <chrono>
#include <cuda_runtime.h>

__global__ void empty_kernel() {}

__global__ void seven_params(unsigned short *a, unsigned short *b, unsigned short *c,
                             char d, short e, int f, long long g)
{
    if (threadIdx.x == 0 && blockIdx.x == 0 && a == nullptr)
        c[0] = (unsigned short)(d + e + f + g + (b != nullptr));
}

#define CHECK(call)                                                                      \
    do {                                                                                 \
        cudaError_t err_ = (call);                                                       \
        if (err_ != cudaSuccess) {                                                       \
            std::fprintf(stderr, "%s failed: %s\n", #call, cudaGetErrorString(err_));    \
            std::exit(1);                                                                \
        }                                                                                \
    } while (0)

template <typename F> static double us_per_call(long iterations, F body)
{
    for (int i = 0; i < 100; i++)
        body();
    auto t0 = std::chrono::steady_clock::now();
    for (long i = 0; i < iterations; i++)
        body();
    std::chrono::duration<double, std::micro> dt = std::chrono::steady_clock::now() - t0;
    return dt.count() / iterations;
}

template <typename F> static double us_per_call_async(long iterations, F body)
{
    for (int i = 0; i < 100; i++)
        body();
    CHECK(cudaDeviceSynchronize());
    auto t0 = std::chrono::steady_clock::now();
    for (long i = 0; i < iterations; i++)
        body();
    CHECK(cudaDeviceSynchronize());
    std::chrono::duration<double, std::micro> dt = std::chrono::steady_clock::now() - t0;
    return dt.count() / iterations;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? std::atol(argv[1]) : 100000;
    unsigned short *a, *b, *c;
    int count = 0;
    CHECK(cudaMalloc(&a, 1024));
    CHECK(cudaMalloc(&b, 1024));
    CHECK(cudaMalloc(&c, 1024));

    double t = us_per_call(n, [&] { CHECK(cudaGetDeviceCount(&count)); });
    std::printf("overhead cudaGetDeviceCount %.3f\n", t);

    t = us_per_call(n, [&] {
        void *p;
        CHECK(cudaMalloc(&p, 1 << 20));
        CHECK(cudaFree(p));
    });
    std::printf("overhead malloc_free_1MiB %.3f\n", t);

    t = us_per_call(n, [&] {
        empty_kernel<<<1, 32>>>();
        CHECK(cudaDeviceSynchronize());
    });
    std::printf("overhead launch_empty_sync %.3f\n", t);

    t = us_per_call(n, [&] {
        seven_params<<<1, 32>>>(a, b, c, 1, 2, 3, 4);
        CHECK(cudaDeviceSynchronize());
    });
    std::printf("overhead launch_7params_sync %.3f\n", t);

    t = us_per_call_async(n, [&] { empty_kernel<<<1, 32>>>(); });
    std::printf("overhead launch_empty_async %.3f\n", t);

    t = us_per_call_async(n, [&] { seven_params<<<1, 32>>>(a, b, c, 1, 2, 3, 4); });
    std::printf("overhead launch_7params_async %.3f\n", t);

    CHECK(cudaGetLastError());
    CHECK(cudaFree(a));
    CHECK(cudaFree(b));
    CHECK(cudaFree(c));
    std::printf("devices %d\n", count);
    return 0;
}
