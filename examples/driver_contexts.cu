// Driver-API contexts: cuCtxCreate pushes a new context on the thread's stack and makes it current,
// cuCtxPopCurrent/cuCtxPushCurrent move between contexts, and cuCtxDestroy frees the memory
// allocated in a context, pops it, and leaves a handle every later call refuses.
#include <cstdio>
#include <vector>

#include "driver_check.h"

static CUcontext current()
{
    CUcontext ctx = nullptr;
    DRV(cuCtxGetCurrent(&ctx));
    return ctx;
}

static size_t free_memory()
{
    size_t free = 0, total = 0;
    DRV(cuMemGetInfo(&free, &total));
    return free;
}

int main()
{
    const size_t MiB = 1 << 20;
    int bad = 0;
    DRV(cuInit(0));
    CUdevice dev;
    DRV(cuDeviceGet(&dev, 0));
    CUcontext primary;
    DRV(cuDevicePrimaryCtxRetain(&primary, dev));
    DRV(cuCtxSetCurrent(primary));

    // a: created with a schedule flag, becomes current; memory allocated in it works as usual
    CUcontext a, b;
    DRV(cuCtxCreate(&a, nullptr, CU_CTX_SCHED_BLOCKING_SYNC, dev));
    unsigned int flags = 0, version = 0;
    CUdevice ctx_dev = -1;
    DRV(cuCtxGetFlags(&flags));
    DRV(cuCtxGetDevice(&ctx_dev));
    DRV(cuCtxGetApiVersion(a, &version));
    bad += check("the created context is current", current() == a && a != primary);
    bad += check("cuCtxGetFlags gives the creation flags", flags == CU_CTX_SCHED_BLOCKING_SYNC);
    bad += check("cuCtxGetDevice gives its device", ctx_dev == dev);
    bad += check("cuCtxGetApiVersion answers for it", version >= 3020);
    const int n = 1 << 16;
    CUdeviceptr pa;
    DRV(cuMemAlloc(&pa, 4 * MiB));
    DRV(cuMemsetD32(pa, 0x5eed, n));
    std::vector<unsigned int> host(n);
    DRV(cuMemcpyDtoH(host.data(), pa, n * sizeof(unsigned int)));
    int wrong = 0;
    for (unsigned int v : host)
        wrong += v != 0x5eed;
    bad += check("memory of a created context holds what was written", wrong == 0);

    // b: pushed over a; pop and push move between them
    DRV(cuCtxCreate(&b, nullptr, 0, dev));
    bad += check("a second created context is current", current() == b);
    CUdeviceptr pb[3];
    for (CUdeviceptr &p : pb)
        DRV(cuMemAlloc(&p, 8 * MiB));
    CUcontext popped = nullptr;
    DRV(cuCtxPopCurrent(&popped));
    bad += check("cuCtxPopCurrent gives b and restores a", popped == b && current() == a);
    DRV(cuCtxPushCurrent(b));
    DRV(cuCtxSynchronize());

    // destroying b frees its 24 MiB and pops it; its handle is refused afterwards
    size_t before = free_memory();
    DRV(cuCtxDestroy(b));
    size_t after = free_memory();
    bad += check("cuCtxDestroy pops the context", current() == a);
    bad += check("cuCtxDestroy frees the context's memory", after >= before + 24 * MiB);
    bad += expect("cuCtxPushCurrent(destroyed)", cuCtxPushCurrent(b), CUDA_ERROR_INVALID_CONTEXT);
    bad += expect("cuCtxSetCurrent(destroyed)", cuCtxSetCurrent(b), CUDA_ERROR_INVALID_CONTEXT);
    bad += expect("cuCtxGetApiVersion(destroyed)", cuCtxGetApiVersion(b, &version), CUDA_ERROR_INVALID_CONTEXT);
    bad += expect("cuCtxDestroy(destroyed)", cuCtxDestroy(b), CUDA_ERROR_INVALID_CONTEXT);
    bad += expect("cuMemFree of memory freed with its context", cuMemFree(pb[0]), CUDA_ERROR_INVALID_VALUE);
    bad += expect("cuCtxDestroy(primary context)", cuCtxDestroy(primary), CUDA_ERROR_INVALID_CONTEXT);
    bad += expect("cuCtxCreate with two schedule flags",
                  cuCtxCreate(&b, nullptr, CU_CTX_SCHED_SPIN | CU_CTX_SCHED_YIELD, dev), CUDA_ERROR_INVALID_VALUE);

    // destroying a leaves the primary context current
    DRV(cuCtxDestroy(a));
    bad += check("the primary context is current again", current() == primary);
    bad += expect("cuMemFree after its context was destroyed", cuMemFree(pa), CUDA_ERROR_INVALID_VALUE);
    DRV(cuDevicePrimaryCtxRelease(dev));
    if (bad)
        return 1;
    printf("PASS: created contexts pushed, popped and destroyed, %zu MiB freed with them\n", (after - before) / MiB);
    return 0;
}
