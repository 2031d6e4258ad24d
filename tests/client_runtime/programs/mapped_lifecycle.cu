// Mapped pinned memory beyond the example: memsets and asynchronous copies into it in stream order
// with kernels, pinned memory mapped later through cudaHostGetDevicePointer, the calls it refuses,
// and a device reset with mapped memory still allocated. One line per check, then PASS or FAIL.
#include <cstdio>
#include <cstdlib>
#include <sys/mman.h>
#include <cuda_runtime.h>

__global__ void add(int *v, int n, int k)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        v[i] += k;
}

__global__ void copy_plus_one(const int *in, int *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = in[i] + 1;
}

static int bad = 0;

static void check(const char *what, bool ok)
{
    printf("%s: %s\n", what, ok ? "ok" : "WRONG");
    bad |= !ok;
}

static bool all(const int *v, int n, int want)
{
    for (int i = 0; i < n; i++)
        if (v[i] != want)
            return false;
    return true;
}

int main()
{
    const int n = 1 << 16;            // 256 KiB: large enough for the shared-memory copy path
    const size_t bytes = n * sizeof(int);
    int *host = nullptr, *dev = nullptr, *buffer = nullptr;
    cudaHostAlloc((void **)&host, bytes, cudaHostAllocMapped);
    cudaHostGetDevicePointer((void **)&dev, host, 0);
    cudaMalloc((void **)&buffer, bytes);

    cudaMemset(dev, 0, bytes);                       // through the device pointer
    add<<<n / 256, 256>>>(dev, n, 3);
    cudaDeviceSynchronize();
    check("memset of mapped memory, then a kernel", all(host, n, 3));

    cudaMemset(buffer, 0, bytes);
    add<<<n / 256, 256>>>(buffer, n, 40);
    cudaMemcpyAsync(host, buffer, bytes, cudaMemcpyDeviceToHost, 0);
    add<<<n / 256, 256>>>(dev, n, 2);                // in stream order after the copy
    cudaStreamSynchronize(0);
    check("asynchronous copy into mapped memory, then a kernel on it", all(host, n, 42));

    int *pinned = nullptr, *pinned_dev = nullptr;
    cudaMallocHost((void **)&pinned, bytes);
    for (int i = 0; i < n; i++)
        pinned[i] = 5;
    check("cudaHostGetDevicePointer maps pinned memory allocated without the flag",
          cudaHostGetDevicePointer((void **)&pinned_dev, pinned, 0) == cudaSuccess && pinned_dev);
    add<<<n / 256, 256>>>(pinned_dev, n, 1);
    cudaDeviceSynchronize();
    check("a kernel through that device pointer", all(pinned, n, 6));

    int pageable = 0;
    void *nowhere = nullptr;
    check("cudaHostGetDevicePointer of pageable memory is cudaErrorInvalidValue",
          cudaHostGetDevicePointer(&nowhere, &pageable, 0) == cudaErrorInvalidValue);
    check("cudaHostGetDevicePointer with flags is cudaErrorInvalidValue",
          cudaHostGetDevicePointer(&nowhere, host, 1) == cudaErrorInvalidValue);
    void *odd = nullptr;
    check("cudaHostAlloc with an unknown flag is cudaErrorInvalidValue",
          cudaHostAlloc(&odd, 64, 0x100) == cudaErrorInvalidValue);
    unsigned flags = 0;
    check("cudaHostGetFlags of pageable memory is cudaErrorInvalidValue",
          cudaHostGetFlags(&flags, &pageable) == cudaErrorInvalidValue);
    int *frozen = nullptr, *frozen_dev = nullptr;     // read-only host memory, registered read-only
    if (posix_memalign((void **)&frozen, 4096, bytes) != 0)
        return 1;
    for (int i = 0; i < n; i++)
        frozen[i] = 7;
    mprotect(frozen, bytes, PROT_READ);
    int supported = 0;
    cudaDeviceGetAttribute(&supported, cudaDevAttrHostRegisterReadOnlySupported, 0);
    check("read-only registration is supported", supported == 1);
    check("cudaHostRegister(cudaHostRegisterMapped | cudaHostRegisterReadOnly)",
          cudaHostRegister(frozen, bytes, cudaHostRegisterMapped | cudaHostRegisterReadOnly) == cudaSuccess
          && cudaHostGetDevicePointer((void **)&frozen_dev, frozen, 0) == cudaSuccess);
    copy_plus_one<<<n / 256, 256>>>(frozen_dev, dev, n);
    check("a kernel reads read-only registered memory (and it is never written back)",
          cudaDeviceSynchronize() == cudaSuccess && all(host, n, 8));
    cudaHostUnregister(frozen);
    for (int i = 0; i < n; i++)
        host[i] = 42;
    check("cudaFree of mapped memory's device pointer is cudaErrorInvalidValue",
          cudaFree(dev) == cudaErrorInvalidValue);
    cudaGetLastError();
    add<<<n / 256, 256>>>(dev, n, 1);
    cudaDeviceSynchronize();
    check("and the memory is still mapped", all(host, n, 43));

    cudaDeviceReset();                               // the device copies go; the host memory stays
    host[0] = 9;
    check("mapped memory stays the program's after cudaDeviceReset, until cudaFreeHost",
          host[0] == 9 && cudaFreeHost(host) == cudaSuccess && cudaFreeHost(pinned) == cudaSuccess);
    int *again = nullptr, *again_dev = nullptr;
    cudaHostAlloc((void **)&again, bytes, cudaHostAllocMapped);
    cudaHostGetDevicePointer((void **)&again_dev, again, 0);
    for (int i = 0; i < n; i++)
        again[i] = 1;
    add<<<n / 256, 256>>>(again_dev, n, 1);
    cudaDeviceSynchronize();
    check("new mapped memory after the reset", all(again, n, 2));
    check("no error on the way", cudaGetLastError() == cudaSuccess && cudaFreeHost(again) == cudaSuccess);
    printf(bad ? "FAIL\n" : "PASS\n");
    return bad;
}
