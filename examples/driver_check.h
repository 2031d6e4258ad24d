// Shared by the driver-API examples: DRV(call) prints FAIL with the CUresult's name and exits with
// status 1; expect() checks that a call returned the error the driver documents.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <cuda.h>

static inline const char *result_name(CUresult r)
{
    const char *name = nullptr;
    return cuGetErrorName(r, &name) == CUDA_SUCCESS && name ? name : "unknown CUresult";
}

#define DRV(call)                                                                          \
    do {                                                                                   \
        CUresult r_ = (call);                                                              \
        if (r_ != CUDA_SUCCESS) {                                                          \
            printf("FAIL: %s: %s\n", #call, result_name(r_));                              \
            exit(1);                                                                       \
        }                                                                                  \
    } while (0)

// 0 when `got` is `want`, else 1 with a FAIL line naming both.
static inline int expect(const char *what, CUresult got, CUresult want)
{
    if (got == want)
        return 0;
    printf("FAIL: %s returned %s, expected %s\n", what, result_name(got), result_name(want));
    return 1;
}

static inline int check(const char *what, bool ok)
{
    if (!ok)
        printf("FAIL: %s\n", what);
    return ok ? 0 : 1;
}
