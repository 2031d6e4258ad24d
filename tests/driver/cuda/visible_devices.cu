// What a program sees of CUDA_VISIBLE_DEVICES: "what CODE NAME" lines for the version calls, the
// device count (its value is left alone on failure, as cudart leaves it), cudaSetDevice(0),
// cudaMalloc and cudaFree(0); then "deviceN NAME UUID-HEX TOTAL-MEMORY" for each device.
#include <cstdio>
#include <cuda_runtime.h>

#define SHOW(what, call) do { cudaError_t e_ = (call); printf("%s %d %s\n", what, (int)e_, cudaGetErrorName(e_)); } while (0)

int main()
{
    int version = 0, count = 77;
    void *p = nullptr;
    SHOW("driver_version", cudaDriverGetVersion(&version));
    SHOW("count", cudaGetDeviceCount(&count));
    printf("count_value %d\n", count);
    SHOW("set_device", cudaSetDevice(0));
    SHOW("malloc", cudaMalloc(&p, 16));
    SHOW("free0", cudaFree(0));
    cudaDeviceProp prop;
    for (int dev = 0; dev < count && cudaGetDeviceProperties(&prop, dev) == cudaSuccess; dev++) {
        printf("device%d %s ", dev, prop.name);
        for (int i = 0; i < 16; i++)
            printf("%02x", (unsigned char)prop.uuid.bytes[i]);
        size_t free_mem = 0, total = 0;
        cudaSetDevice(dev);
        cudaMemGetInfo(&free_mem, &total);          // from the server device the session is on
        printf(" %zu\n", total);
    }
    return 0;
}
