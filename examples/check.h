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
