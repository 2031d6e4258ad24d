// Shared by the examples: CHECK(call) prints FAIL with the CUDA error and exits with status 1.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CHECK(call)                                                                        \
    do {                                                                                   \
        cudaError_t e_ = (call);                                                           \
        if (e_ != cudaSuccess) {                                                           \
            printf("FAIL: %s: %s (%s)\n", #call, cudaGetErrorString(e_), cudaGetErrorName(e_)); \
            exit(1);                                                                       \
        }                                                                                  \
    } while (0)

static inline int report(const char *what, int bad)
{
    printf("%s: %s\n", bad ? "FAIL" : "PASS", what);
    return bad ? 1 : 0;
}

// 0 when a call returned the error `want` (and it is cleared from the last error), else 1 with a
// FAIL line naming both; PASS: what otherwise.
static inline int expect_status(cudaError_t got, cudaError_t want, const char *what)
{
    if (got != want) {
        printf("FAIL: %s: %s, expected %s\n", what, cudaGetErrorName(got), cudaGetErrorName(want));
        return 1;
    }
    cudaGetLastError();
    return report(what, 0);
}

// The device count, when there are at least two; else FAIL and exit 1 (the multi-device examples
// run on a server with two: cricket server --backend emu=devices=2,memory=256M).
static inline int two_devices()
{
    int count = 0;
    CHECK(cudaGetDeviceCount(&count));
    if (count < 2) {
        printf("FAIL: %d device(s); run on a server with two (emu=devices=2,memory=256M)\n", count);
        exit(1);
    }
    return count;
}
