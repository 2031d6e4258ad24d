// The calls a process answers without the server, through both faces, for bench/local_calls.py:
// prints "NAME NANOSECONDS" lines (per call; the median of TRIALS timed batches). The calls
// answered in the process are timed in the calling thread's CPU time, which a busy machine's
// other work does not add to; the round trips, which wait for the server, in wall-clock time.
//   local_calls ITERATIONS
// Built by nvcc with -cudart shared (runtime calls reach the libcudart shim) and linked with
// libcuda.so.1 (driver calls reach cricket's replacement); run through `cricket run`.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <cuda.h>
#include <cuda_runtime.h>

#include "../examples/registration.h"

enum { TRIALS = 5 };

static double now_ns(clockid_t clock)
{
    timespec t;
    clock_gettime(clock, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

#define TIME_ON(clock, name, n, ...)                                            \
    do {                                                                        \
        double per_call_[TRIALS];                                               \
        for (int t_ = 0; t_ < TRIALS; t_++) {                                   \
            double t0_ = now_ns(clock);                                         \
            for (long i_ = 0; i_ < (n); i_++) { __VA_ARGS__; }                   \
            per_call_[t_] = (now_ns(clock) - t0_) / (n);                        \
        }                                                                       \
        std::sort(per_call_, per_call_ + TRIALS);                               \
        printf("%s %.1f\n", name, per_call_[TRIALS / 2]);                       \
    } while (0)
#define TIME(name, n, ...) TIME_ON(CLOCK_THREAD_CPUTIME_ID, name, n, __VA_ARGS__)
#define TIME_WALL(name, n, ...) TIME_ON(CLOCK_MONOTONIC, name, n, __VA_ARGS__)

// A registration burst as a PyTorch-sized program makes at import (~24,000 functions): the CPU time
// per call of BURST registrations into one new (empty) fatbin, the median of TRIALS bursts, each
// fatbin unregistered after its burst (untimed). Long enough that the collector's passes over
// what the registrations keep count as they do in an import, not by where one falls.
enum { BURST = 24000 };
static char host_stubs[BURST];

template <class F> static void time_burst(const char *name, F one)
{
    double per_call[TRIALS];
    for (int t = 0; t < TRIALS; t++) {
        void **h = register_empty_fatbin();
        double t0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
        for (long i = 0; i < BURST; i++)
            one(h, host_stubs + i);
        per_call[t] = (now_ns(CLOCK_THREAD_CPUTIME_ID) - t0) / BURST;
        __cudaRegisterFatBinaryEnd(h);
        __cudaUnregisterFatBinary(h);
    }
    std::sort(per_call, per_call + TRIALS);
    printf("%s %.1f\n", name, per_call[TRIALS / 2]);
}

#define RT(call) do { cudaError_t e_ = (call); if (e_ != cudaSuccess) { \
    fprintf(stderr, "FAIL %s: %s\n", #call, cudaGetErrorName(e_)); exit(1); } } while (0)
#define DRV(call) do { CUresult r_ = (call); if (r_ != CUDA_SUCCESS) { \
    fprintf(stderr, "FAIL %s: %d\n", #call, (int)r_); exit(1); } } while (0)

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 100000;
    int count, dev, value;
    RT(cudaGetDeviceCount(&count));                  // starts the client and connects
    RT(cudaFree(0));                                 // the primary context, current on this thread
    // runtime API, answered by the client from what it holds
    TIME("cudaGetDeviceCount", n, RT(cudaGetDeviceCount(&count)));
    TIME("cudaGetDevice", n, RT(cudaGetDevice(&dev)));
    TIME("cudaSetDevice_current", n, RT(cudaSetDevice(0)));
    TIME("cudaGetLastError", n, RT(cudaGetLastError()));
    TIME("cudaPeekAtLastError", n, RT(cudaPeekAtLastError()));
    TIME("cudaDeviceGetAttribute", n, RT(cudaDeviceGetAttribute(&value, cudaDevAttrWarpSize, 0)));
    // registration: nothing sent
    time_burst("__cudaRegisterFunction", [](void **h, char *host) {
        __cudaRegisterFunction(h, host, (char *)"_Z5emptyv", "_Z5emptyv", -1, 0, 0, 0, 0, 0); });
    time_burst("__cudaRegisterVar", [](void **h, char *host) {
        __cudaRegisterVar(h, host, (char *)"table", "table", 0, 4, 0, 0); });
    // driver API: answered by the library in C, and by the client's guard without a round trip
    CUcontext ctx;
    size_t limit;
    DRV(cuInit(0));
    TIME("cuDeviceGetCount", n, DRV(cuDeviceGetCount(&count)));
    TIME("cuCtxGetCurrent", n, DRV(cuCtxGetCurrent(&ctx)));
    TIME("cuDeviceGetAttribute", n, DRV(cuDeviceGetAttribute(&value, CU_DEVICE_ATTRIBUTE_WARP_SIZE, 0)));
    TIME("cuCtxGetLimit", n, DRV(cuCtxGetLimit(&limit, CU_LIMIT_STACK_SIZE)));
    // one round trip each, nothing queued: what the guard adds to a call that goes to the server
    long trips = n / 100 > 100 ? n / 100 : 100;
    TIME_WALL("cuCtxSynchronize", trips, DRV(cuCtxSynchronize()));
    TIME_WALL("cudaDeviceSynchronize", trips, RT(cudaDeviceSynchronize()));
    printf("count %d\n", count);
    return count > 0 ? 0 : 1;
}
