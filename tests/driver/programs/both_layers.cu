// Both cricket libraries in one process: the libcudart.so.13 shim (runtime API) and the
// libcuda.so.1 replacement (driver API) must share one client state. Memory allocated with
// cudaMalloc is filled with cuMemcpyHtoD, a stream made by cuStreamCreate carries cudaMemcpyAsync
// and a <<<>>> launch, and the result comes back through both layers. Prints PASS or FAIL.
#include <cstdio>
#include <cuda.h>
#include <cuda_runtime.h>

__global__ void add_one(int *x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] += 1;
}

#define RT(call) do { cudaError_t e_ = (call); if (e_ != cudaSuccess) { \
    printf("FAIL: %s: %s\n", #call, cudaGetErrorName(e_)); return 1; } } while (0)
#define DRV(call) do { CUresult e_ = (call); if (e_ != CUDA_SUCCESS) { \
    printf("FAIL: %s: %d\n", #call, (int)e_); return 1; } } while (0)

int main()
{
    const int n = 4096;
    static int host[n], back[n], again[n];
    for (int i = 0; i < n; i++)
        host[i] = 3 * i;
    DRV(cuInit(0));
    int *d = nullptr;
    RT(cudaMalloc(&d, sizeof host));                                    // runtime shim
    DRV(cuMemcpyHtoD((CUdeviceptr)d, host, sizeof host));               // driver replacement
    CUstream s;
    DRV(cuStreamCreate(&s, 0));
    add_one<<<(n + 255) / 256, 256, 0, (cudaStream_t)s>>>(d, n);         // runtime launch on a driver stream
    RT(cudaGetLastError());
    RT(cudaMemcpyAsync(back, d, sizeof back, cudaMemcpyDeviceToHost, (cudaStream_t)s));
    DRV(cuStreamSynchronize(s));
    DRV(cuMemcpyDtoH(again, (CUdeviceptr)d, sizeof again));
    unsigned int type = 0;
    DRV(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)d));
    int wrong = 0;
    for (int i = 0; i < n; i++)
        wrong += back[i] != 3 * i + 1 || again[i] != 3 * i + 1;
    DRV(cuStreamDestroy(s));
    RT(cudaFree(d));
    printf("memory type %u\n", type);
    printf("%s: both layers on one client state, %d wrong\n", wrong ? "FAIL" : "PASS", wrong);
    return wrong != 0;
}
