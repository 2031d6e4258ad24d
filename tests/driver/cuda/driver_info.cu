// Driver-API program linked with -lcuda: the cricket libcuda.so.1 answers everything here locally.
#include <cstdio>
#include <cuda.h>

#define CHECK(call) do { CUresult rc_ = (call); printf("%s %d\n", #call, (int)rc_); if (rc_) return 1; } while (0)

int main()
{
    int version = 0, count = 0;
    CUdevice dev;
    CUcontext ctx = 0, current = 0;
    char name[128];
    CHECK(cuInit(0));
    CHECK(cuDriverGetVersion(&version));
    CHECK(cuDeviceGetCount(&count));
    CHECK(cuDeviceGet(&dev, 0));
    CHECK(cuDeviceGetName(name, sizeof name, dev));
    CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK(cuCtxSetCurrent(ctx));
    CHECK(cuCtxGetCurrent(&current));
    CUdevice ctx_dev = -1;
    CHECK(cuCtxGetDevice(&ctx_dev));
    CHECK(cuDevicePrimaryCtxRelease(dev));
    printf("version %d count %d name %s current_is_primary %d ctx_device %d\n", version, count, name,
           current == ctx, (int)ctx_dev);
    return 0;
}
