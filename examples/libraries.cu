// Library management (CUDA 12+): library_kernels.ptx (built beside this program) loaded with
// cudaLibraryLoadFromFile and cudaLibraryLoadData, its kernels found by name and by enumeration,
// launched with cudaLaunchKernel through their cudaKernel_t, a __device__ variable reached with
// cudaLibraryGetGlobal; cudaFuncGetName, cudaGetKernel and the documented errors.
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <unistd.h>
#include "check.h"

__global__ void twice(int *x) { x[threadIdx.x] *= 2; }

static std::string beside_program(const char *name)
{
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    std::string path(self, n > 0 ? n : 0);
    return path.substr(0, path.rfind('/') + 1) + name;
}

int main()
{
    int bad = 0;
    std::string ptx_path = beside_program("library_kernels.ptx");
    cudaLibrary_t from_file, from_data;
    CHECK(cudaLibraryLoadFromFile(&from_file, ptx_path.c_str(), nullptr, nullptr, 0, nullptr, nullptr, 0));
    std::ifstream in(ptx_path);
    std::stringstream text;
    text << in.rdbuf();
    std::string ptx = text.str();
    CHECK(cudaLibraryLoadData(&from_data, ptx.c_str(), nullptr, nullptr, 0, nullptr, nullptr, 0));

    unsigned count = 0;
    CHECK(cudaLibraryGetKernelCount(&count, from_data));
    cudaKernel_t kernels[2];
    std::set<std::string> names;
    if (count == 2) {
        CHECK(cudaLibraryEnumerateKernels(kernels, 2, from_data));
        for (auto k : kernels) {
            const char *name = nullptr;
            CHECK(cudaFuncGetName(&name, (const void *)k));
            names.insert(name);
        }
    }
    bad |= report("cudaLibraryGetKernelCount and cudaLibraryEnumerateKernels find both kernels",
                  count != 2 || names != std::set<std::string>{"scale", "add_offset"});

    const int n = 256;
    float host[n], *x;
    for (int i = 0; i < n; i++)
        host[i] = i;
    CHECK(cudaMalloc(&x, sizeof host));
    CHECK(cudaMemcpy(x, host, sizeof host, cudaMemcpyHostToDevice));
    cudaKernel_t scale;
    CHECK(cudaLibraryGetKernel(&scale, from_file, "scale"));
    float factor = 3;
    int count_n = n;
    void *args[] = {&x, &factor, &count_n};
    CHECK(cudaLaunchKernel((const void *)scale, dim3(n / 64), dim3(64), args, 0, 0));
    CHECK(cudaMemcpy(host, x, sizeof host, cudaMemcpyDeviceToHost));
    int wrong = 0;
    for (int i = 0; i < n; i++)
        wrong += host[i] != 3.0f * i;
    bad |= report("a library kernel runs through cudaLaunchKernel with its cudaKernel_t", wrong != 0);

    int *offset, value = 1000, *y, ys[n] = {};
    size_t bytes = 0;
    CHECK(cudaLibraryGetGlobal((void **)&offset, &bytes, from_file, "offset"));
    CHECK(cudaMemcpy(offset, &value, sizeof value, cudaMemcpyHostToDevice));
    CHECK(cudaMalloc(&y, sizeof ys));
    CHECK(cudaMemset(y, 0, sizeof ys));
    cudaKernel_t add_offset;
    CHECK(cudaLibraryGetKernel(&add_offset, from_file, "add_offset"));
    void *args2[] = {&y, &count_n};
    CHECK(cudaLaunchKernel((const void *)add_offset, dim3(n / 64), dim3(64), args2, 0, 0));
    CHECK(cudaMemcpy(ys, y, sizeof ys, cudaMemcpyDeviceToHost));
    wrong = bytes != sizeof(int);
    for (int i = 0; i < n; i++)
        wrong += ys[i] != 1000;
    bad |= report("cudaLibraryGetGlobal gives the library's __device__ variable", wrong != 0);

    CHECK(cudaKernelSetAttributeForDevice(scale, cudaFuncAttributeMaxDynamicSharedMemorySize, 1024, 0));
    cudaError_t e = cudaKernelSetAttributeForDevice(scale, cudaFuncAttributeMaxDynamicSharedMemorySize, 1024, 99);
    bad |= report("cudaKernelSetAttributeForDevice on device 99: cudaErrorInvalidDevice", e != cudaErrorInvalidDevice);
    cudaKernel_t missing;
    e = cudaLibraryGetKernel(&missing, from_file, "no_such_kernel");
    bad |= report("an unknown kernel name: cudaErrorSymbolNotFound", e != cudaErrorSymbolNotFound);
    cudaGetLastError();

    // the kernel of a __global__ function of this program: cudaGetKernel and cudaFuncGetName
    cudaKernel_t own;
    const char *own_name = nullptr;
    CHECK(cudaGetKernel(&own, twice));
    CHECK(cudaFuncGetName(&own_name, (const void *)twice));
    int *z, zs[32];
    for (int i = 0; i < 32; i++)
        zs[i] = i;
    CHECK(cudaMalloc(&z, sizeof zs));
    CHECK(cudaMemcpy(z, zs, sizeof zs, cudaMemcpyHostToDevice));
    void *args3[] = {&z};
    CHECK(cudaLaunchKernel((const void *)own, 1, 32, args3, 0, 0));
    CHECK(cudaMemcpy(zs, z, sizeof zs, cudaMemcpyDeviceToHost));
    wrong = own_name == nullptr || strcmp(own_name, "_Z5twicePi") != 0;
    for (int i = 0; i < 32; i++)
        wrong += zs[i] != 2 * i;
    printf("cudaFuncGetName(twice): %s\n", own_name ? own_name : "(null)");
    bad |= report("cudaGetKernel's kernel launches, cudaFuncGetName gives the mangled name", wrong != 0);

    CHECK(cudaLibraryUnload(from_data));
    CHECK(cudaLibraryUnload(from_file));
    return report("libraries", bad);
}
