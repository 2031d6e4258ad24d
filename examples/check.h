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
