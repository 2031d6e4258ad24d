// The runtime API and the driver's current context, as the CUDA Runtime API documents them
// ("Interactions with the CUDA Driver API"): device queries leave the thread without a context; the
// first call that needs one makes the device's primary context current (cuCtxGetCurrent sees it,
// as cuBLAS checks); a new thread starts with none; cudaSetDevice makes the primary context
// current; after cudaDeviceReset it stays current and the next call initialises it again; a
// context the driver API made current is the one the runtime works in. Prints the primary
// context's state at two points (the runtime's own choice, not checked here) and PASS or FAIL.
#include <cstdio>
#include <pthread.h>

#include "check.h"
#include "driver_check.h"

static CUcontext primary;

static CUcontext current()
{
    CUcontext ctx = nullptr;
    DRV(cuCtxGetCurrent(&ctx));
    return ctx;
}

static int primary_active()
{
    unsigned int flags = 0;
    int active = -1;
    DRV(cuDevicePrimaryCtxGetState(0, &flags, &active));
    return active;
}

static int rt(const char *what, cudaError_t got, cudaError_t want = cudaSuccess)
{
    if (got == want)
        return 0;
    printf("FAIL: %s returned %s, expected %s\n", what, cudaGetErrorName(got), cudaGetErrorName(want));
    return 1;
}

// A new thread has no current context; a query keeps it so; a cudaMalloc makes the primary current.
static void *allocating_thread(void *result)
{
    int bad = check("a new thread starts without a current context", current() == nullptr);
    int device = -1;
    bad += rt("cudaGetDevice", cudaGetDevice(&device));
    bad += check("cudaGetDevice makes no context current", current() == nullptr);
    void *p = nullptr;
    bad += rt("cudaMalloc", cudaMalloc(&p, 64));
    bad += check("cudaMalloc makes the primary context current", current() == primary);
    bad += rt("cudaFree", cudaFree(p));
    *(int *)result = bad;
    return nullptr;
}

static void *setting_thread(void *result)
{
    int bad = rt("cudaSetDevice", cudaSetDevice(0));
    bad += check("cudaSetDevice makes the primary context current", current() == primary);
    *(int *)result = bad;
    return nullptr;
}

static int in_thread(void *(*body)(void *))
{
    int bad = 1;
    pthread_t thread;
    if (pthread_create(&thread, nullptr, body, &bad) != 0 || pthread_join(thread, nullptr) != 0)
        return check("pthread_create", false);
    return bad;
}

int main()
{
    int bad = 0, count = 0, warp = 0;
    bad += rt("cudaGetDeviceCount", cudaGetDeviceCount(&count));
    cudaDeviceProp prop;
    bad += rt("cudaGetDeviceProperties", cudaGetDeviceProperties(&prop, 0));
    bad += rt("cudaDeviceGetAttribute", cudaDeviceGetAttribute(&warp, cudaDevAttrWarpSize, 0));
    bad += check("device queries make no context current", current() == nullptr);
    printf("primary context active after the queries: %d\n", primary_active());

    DRV(cuDevicePrimaryCtxRetain(&primary, 0));      // only to learn its handle
    DRV(cuDevicePrimaryCtxRelease(0));
    bad += rt("cudaFree(0)", cudaFree(nullptr));
    bad += check("cudaFree(0) makes the primary context current", current() == primary);
    CUdevice device = -1;
    DRV(cuCtxGetDevice(&device));
    bad += check("the current context is device 0's", device == 0);
    bad += check("the primary context is active", primary_active() == 1);

    bad += in_thread(allocating_thread);
    bad += in_thread(setting_thread);

    bad += rt("cudaDeviceReset", cudaDeviceReset());
    bad += check("the primary context stays current after cudaDeviceReset", current() == primary);
    printf("primary context active after cudaDeviceReset: %d\n", primary_active());
    bad += in_thread(allocating_thread);
    bad += check("the next call initialises the primary context again", primary_active() == 1);

    void *p = nullptr;
    DRV(cuCtxSetCurrent(nullptr));
    bad += rt("cudaMalloc", cudaMalloc(&p, 64));
    bad += check("with no context current, cudaMalloc makes the primary current", current() == primary);
    bad += rt("cudaFree", cudaFree(p));

    CUcontext created;
    DRV(cuCtxCreate(&created, nullptr, 0, 0));
    size_t free_bytes = 0, total = 0;
    bad += rt("cudaMemGetInfo", cudaMemGetInfo(&free_bytes, &total));
    bad += check("the runtime works in the context the driver API made current", current() == created);
    DRV(cuCtxDestroy(created));
    bad += check("after cuCtxDestroy the primary context is current again", current() == primary);

    bad += rt("cudaSetDevice(count)", cudaSetDevice(count), cudaErrorInvalidDevice);
    bad += check("a refused cudaSetDevice leaves the context", current() == primary);
    return report("the runtime makes the primary context current", bad);
}
