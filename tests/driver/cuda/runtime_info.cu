// Runtime-API queries answered by the driver's snapshot; built with nvcc's default flags (static
// cudart) by tests/driver/test_cudart_on_driver.py and run with the cricket libcuda.so.1 in front.
#include <cstdio>
#include <cuda_runtime.h>

static void report(const char *what, cudaError_t err)
{
    printf("%s %d %s\n", what, (int)err, cudaGetErrorName(err));
}

int main()
{
    int count = -1, runtime = -1, driver = -1;
    cudaError_t err = cudaGetDeviceCount(&count);
    report("cudaGetDeviceCount", err);
    if (err != cudaSuccess)
        return 1;
    printf("device_count %d\n", count);
    report("cudaRuntimeGetVersion", cudaRuntimeGetVersion(&runtime));
    printf("runtime_version %d\n", runtime);
    report("cudaDriverGetVersion", cudaDriverGetVersion(&driver));
    printf("driver_version %d\n", driver);
    for (int d = 0; d < count; d++) {
        cudaDeviceProp prop;
        report("cudaGetDeviceProperties", cudaGetDeviceProperties(&prop, d));
        printf("device %d name %s\n", d, prop.name);
        printf("device %d cc %d.%d\n", d, prop.major, prop.minor);
        printf("device %d sms %d\n", d, prop.multiProcessorCount);
        printf("device %d mem %zu\n", d, prop.totalGlobalMem);
        printf("device %d uuid ", d);
        for (int i = 0; i < 16; i++)
            printf("%02x", (unsigned char)prop.uuid.bytes[i]);
        printf("\n");
        printf("device %d pci %d:%d:%d\n", d, prop.pciDomainID, prop.pciBusID, prop.pciDeviceID);
    }
    report("cudaSetDevice", cudaSetDevice(0));
    int least = 1, greatest = 1;                 // creates the primary context (export tables: CLS, checks)
    report("cudaDeviceGetStreamPriorityRange", cudaDeviceGetStreamPriorityRange(&least, &greatest));
    printf("stream_priorities %d %d\n", least, greatest);
    int current = -1;
    report("cudaGetDevice", cudaGetDevice(&current));
    printf("current_device %d\n", current);
    void *ptr = 0;
    report("cudaMalloc", cudaMalloc(&ptr, 64));  // forwarded to the server: not implemented yet
    return 0;
}
