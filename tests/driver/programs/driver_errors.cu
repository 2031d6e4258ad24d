// The driver's answers to failing calls, printed as "what CODE" lines: cuMemFree of 0, of a freed
// and of a host pointer; launches with 4096 threads per block through a CUfunction
// (cuModuleGetFunction) and through a CUkernel (cuLibraryGetKernel, as cudart launches); a
// synchronisation of a destroyed stream. Linked with -lcuda; needs a cricket server.
#include <cstdio>
#include <cuda.h>

static const char PTX[] =
    ".version 7.0\n.target sm_75\n.address_size 64\n"
    ".visible .entry noop()\n{\n\tret;\n}\n";

#define SHOW(what, call) printf("%s %d\n", what, (int)(call))

int main()
{
    setvbuf(stdout, NULL, _IONBF, 0);
    CUdevice dev;
    CUcontext ctx;
    if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) || cuCtxSetCurrent(ctx)) {
        printf("FAIL: no device\n");
        return 1;
    }
    SHOW("free_null", cuMemFree(0));
    CUdeviceptr p;
    cuMemAlloc(&p, 64);
    cuMemFree(p);
    SHOW("free_freed", cuMemFree(p));
    int local = 0;
    SHOW("free_host", cuMemFree((CUdeviceptr)&local));

    CUmodule mod;
    CUfunction fn;
    CUlibrary lib;
    CUkernel kernel;
    if (cuModuleLoadData(&mod, PTX) || cuModuleGetFunction(&fn, mod, "noop")
        || cuLibraryLoadData(&lib, PTX, NULL, NULL, 0, NULL, NULL, 0) || cuLibraryGetKernel(&kernel, lib, "noop")) {
        printf("FAIL: cannot load the PTX\n");
        return 1;
    }
    SHOW("function_4096", cuLaunchKernel(fn, 1, 1, 1, 4096, 1, 1, 0, NULL, NULL, NULL));
    SHOW("function_grid0", cuLaunchKernel(fn, 0, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL));
    SHOW("kernel_4096", cuLaunchKernel((CUfunction)kernel, 1, 1, 1, 4096, 1, 1, 0, NULL, NULL, NULL));
    SHOW("kernel_grid0", cuLaunchKernel((CUfunction)kernel, 0, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL));
    SHOW("kernel_shared_1m", cuLaunchKernel((CUfunction)kernel, 1, 1, 1, 32, 1, 1, 1 << 20, NULL, NULL, NULL));
    SHOW("kernel_32", cuLaunchKernel((CUfunction)kernel, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL));
    SHOW("sync", cuCtxSynchronize());

    CUstream s;
    cuStreamCreate(&s, 0);
    cuStreamDestroy(s);
    SHOW("sync_destroyed_stream", cuStreamSynchronize(s));
    return 0;
}
