// Driver-API JIT linking: two relocatable PTX modules built beside this program (the kernel in
// jit_link_kernel.ptx calls scale() and reads offset from jit_link_device.ptx) are linked with
// cuLinkCreate/cuLinkAddFile/cuLinkAddData/cuLinkComplete, the image is loaded with
// cuModuleLoadData and run. The info log, its size and the wall time come back through the
// options; a link missing the device module fails with the symbol named in the error log.
#include <cstdio>
#include <cstring>
#include <unistd.h>
#include <string>
#include <vector>

#include "driver_check.h"

static std::string beside_program(const char *name)
{
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    std::string path = n > 0 ? std::string(exe, (size_t)n) : std::string("./x");
    return path.substr(0, path.rfind('/') + 1) + name;
}

static std::vector<char> read_file(const std::string &path)
{
    std::vector<char> data;
    FILE *f = fopen(path.c_str(), "rb");
    if (!f)
        return data;
    char buf[65536];
    size_t got;
    while ((got = fread(buf, 1, sizeof buf, f)) > 0)
        data.insert(data.end(), buf, buf + got);
    fclose(f);
    data.push_back('\0');           // PTX given to cuLinkAddData is NUL-terminated
    return data;
}

struct Logs {
    char info[8192] = {0};
    char error[8192] = {0};
    CUjit_option options[7] = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, CU_JIT_ERROR_LOG_BUFFER,
                               CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_LOG_VERBOSE, CU_JIT_WALL_TIME,
                               CU_JIT_TARGET_FROM_CUCONTEXT};
    void *values[7] = {info, (void *)(uintptr_t)sizeof info, error, (void *)(uintptr_t)sizeof error,
                       (void *)(uintptr_t)1, nullptr, nullptr};
    size_t info_size() const { return (size_t)(uintptr_t)values[1]; }
    size_t error_size() const { return (size_t)(uintptr_t)values[3]; }
    float wall_ms() const { float ms; memcpy(&ms, &values[5], sizeof ms); return ms; }
};

int main()
{
    int bad = 0;
    DRV(cuInit(0));
    CUdevice dev;
    DRV(cuDeviceGet(&dev, 0));
    CUcontext ctx;
    DRV(cuDevicePrimaryCtxRetain(&ctx, dev));
    DRV(cuCtxSetCurrent(ctx));

    std::string kernel_ptx = beside_program("jit_link_kernel.ptx");
    std::vector<char> device_ptx = read_file(beside_program("jit_link_device.ptx"));
    if (device_ptx.size() < 2) {
        printf("FAIL: cannot read %s (examples/build.py builds it)\n", beside_program("jit_link_device.ptx").c_str());
        return 1;
    }

    // link the two modules; the options are written back as the link goes
    Logs logs;
    CUlinkState link;
    DRV(cuLinkCreate(7, logs.options, logs.values, &link));
    DRV(cuLinkAddFile(link, CU_JIT_INPUT_PTX, kernel_ptx.c_str(), 0, nullptr, nullptr));
    CUjit_option optimise[] = {CU_JIT_OPTIMIZATION_LEVEL, CU_JIT_GENERATE_LINE_INFO};
    void *optimise_values[] = {(void *)(uintptr_t)4, (void *)(uintptr_t)1};
    DRV(cuLinkAddData(link, CU_JIT_INPUT_PTX, device_ptx.data(), device_ptx.size(), "jit_link_device.ptx",
                      2, optimise, optimise_values));
    void *image = nullptr;
    size_t image_size = 0;
    DRV(cuLinkComplete(link, &image, &image_size));
    const size_t linked_size = image_size;
    CUmodule module;
    DRV(cuModuleLoadData(&module, image));
    bad += check("cuLinkComplete gives an image", image != nullptr && image_size > 0);
    bad += check("the info log size is written back", logs.info_size() == strlen(logs.info) + 1);
    bad += check("the info log names the inputs", strstr(logs.info, "jit_link_device.ptx") != nullptr
                                                    && strstr(logs.info, "jit_link_kernel.ptx") != nullptr);
    bad += check("no error is logged", logs.error_size() == 0 && logs.error[0] == '\0');
    bad += check("the wall time is written back", logs.wall_ms() >= 0.0f && logs.wall_ms() < 600000.0f);
    DRV(cuLinkDestroy(link));          // the module stays loaded; the image belonged to the link

    // run the linked kernel: values[i] = scale(i, 3) + offset = 3 i + 0.5
    const int n = 1000;
    std::vector<float> values(n);
    for (int i = 0; i < n; i++)
        values[i] = (float)i;
    CUfunction scale_all;
    DRV(cuModuleGetFunction(&scale_all, module, "scale_all"));
    CUdeviceptr d_values, d_calls;
    size_t calls_size = 0;
    DRV(cuMemAlloc(&d_values, n * sizeof(float)));
    DRV(cuMemcpyHtoD(d_values, values.data(), n * sizeof(float)));
    float factor = 3.0f;
    int count = n;
    void *params[] = {&d_values, &factor, &count};
    DRV(cuLaunchKernel(scale_all, (n + 127) / 128, 1, 1, 128, 1, 1, 0, nullptr, params, nullptr));
    DRV(cuCtxSynchronize());
    DRV(cuMemcpyDtoH(values.data(), d_values, n * sizeof(float)));
    int wrong = 0;
    for (int i = 0; i < n; i++)
        wrong += values[i] != 3.0f * i + 0.5f;
    bad += check("the linked kernel computes scale(i, 3) + offset", wrong == 0);
    int calls = 0;
    DRV(cuModuleGetGlobal(&d_calls, &calls_size, module, "scaled_calls"));
    DRV(cuMemcpyDtoH(&calls, d_calls, sizeof calls));
    bad += check("the device module's counter counts every call", calls == n && calls_size == sizeof(int));
    DRV(cuMemFree(d_values));
    DRV(cuModuleUnload(module));

    // without the device module, scale and offset are undefined: the link fails and says so
    Logs failed;
    DRV(cuLinkCreate(7, failed.options, failed.values, &link));
    DRV(cuLinkAddFile(link, CU_JIT_INPUT_PTX, kernel_ptx.c_str(), 0, nullptr, nullptr));
    bad += expect("cuLinkComplete with an undefined function", cuLinkComplete(link, &image, &image_size),
                  CUDA_ERROR_INVALID_IMAGE);
    bad += check("the error log names the undefined symbol",
                 strstr(failed.error, "Undefined reference to 'scale' in") != nullptr
                 && failed.error_size() == strlen(failed.error) + 1);
    DRV(cuLinkDestroy(link));
    bad += expect("cuLinkAddFile of a missing file",
                  cuLinkCreate(0, nullptr, nullptr, &link) == CUDA_SUCCESS
                      ? cuLinkAddFile(link, CU_JIT_INPUT_PTX, "/nonexistent/x.ptx", 0, nullptr, nullptr)
                      : CUDA_ERROR_UNKNOWN,
                  CUDA_ERROR_FILE_NOT_FOUND);
    DRV(cuLinkDestroy(link));
    DRV(cuDevicePrimaryCtxRelease(dev));
    if (bad)
        return 1;
    printf("PASS: JIT-linked two PTX modules (%zu-byte image, %d calls); info log:\n%s\n", linked_size, calls, logs.info);
    return 0;
}
