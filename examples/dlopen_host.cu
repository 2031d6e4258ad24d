// Loads libkernel_lib.so with dlopen at run time and runs its kernel on memory allocated here.
#include "check.h"
#include <dlfcn.h>
#include <string>

int main(int argc, char **argv)
{
    std::string dir = argv[0];
    dir = dir.substr(0, dir.rfind('/') + 1);
    void *lib = dlopen((dir + "libkernel_lib.so").c_str(), RTLD_NOW);
    if (!lib) { printf("FAIL: dlopen: %s\n", dlerror()); return 1; }
    auto lib_saxpy = (int (*)(float, const float *, float *, int))dlsym(lib, "lib_saxpy");
    if (!lib_saxpy) { printf("FAIL: dlsym lib_saxpy\n"); return 1; }
    const int n = 1000;
    float x[n], y[n];
    for (int i = 0; i < n; i++) { x[i] = i; y[i] = 1; }
    float *dx, *dy;
    CHECK(cudaMalloc(&dx, sizeof x)); CHECK(cudaMalloc(&dy, sizeof y));
    CHECK(cudaMemcpy(dx, x, sizeof x, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dy, y, sizeof y, cudaMemcpyHostToDevice));
    CHECK((cudaError_t)lib_saxpy(2.0f, dx, dy, n));
    CHECK(cudaMemcpy(y, dy, sizeof y, cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int i = 0; i < n; i++) if (y[i] != 2.0f * i + 1) bad++;
    CHECK(cudaFree(dx)); CHECK(cudaFree(dy));
    dlclose(lib);
    return report("kernels in a shared object loaded with dlopen", bad);
}
