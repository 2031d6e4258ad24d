// Failing runtime calls, printed as "what CODE NAME" lines (pointer types as "what_type N"): the
// same source built with static cudart (on cricket's libcuda.so.1) and with -cudart shared (on the
// libcudart shim) must print the same.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void touch(int *p) { if (p) *p = 1; }

#define SHOW(what, call) do { cudaError_t e_ = (call); printf("%s %d %s\n", what, (int)e_, cudaGetErrorName(e_)); \
    cudaGetLastError(); } while (0)
#define LAUNCH(what, grid, block, shared) SHOW(what, (touch<<<grid, block, shared>>>(d), cudaGetLastError()))

int main()
{
    int h = 0, count = 0, *d, *freed, *pinned;
    SHOW("malloc", cudaMalloc(&d, 64));
    cudaMalloc(&freed, 64);
    cudaFree(freed);
    cudaMallocHost(&pinned, 64);
    LAUNCH("launch_4096_threads", 1, 4096, 0);
    LAUNCH("launch_block_z_128", 1, dim3(1, 1, 128), 0);
    LAUNCH("launch_grid_y_70000", dim3(1, 70000, 1), 1, 0);
    LAUNCH("launch_grid_0", 0, 32, 0);
    LAUNCH("launch_1mib_shared", 1, 32, 1 << 20);
    LAUNCH("launch_1024_threads", 1, 1024, 0);
    SHOW("sync", cudaDeviceSynchronize());
    SHOW("free_host_pointer", cudaFree(&h));
    SHOW("free_null", cudaFree(nullptr));
    SHOW("free_freed", cudaFree(freed));
    SHOW("free_interior", cudaFree(d + 1));
    SHOW("free_host_of_pageable", cudaFreeHost(&h));
    SHOW("memcpy_from_freed", cudaMemcpy(&h, freed, 4, cudaMemcpyDeviceToHost));
    SHOW("memset_freed", cudaMemset(freed, 0, 4));
    cudaStream_t s;
    cudaStreamCreate(&s);
    cudaStreamDestroy(s);
    SHOW("sync_destroyed_stream", cudaStreamSynchronize(s));
    cudaEvent_t ev;
    cudaEventCreate(&ev);
    cudaEventDestroy(ev);
    SHOW("query_destroyed_event", cudaEventQuery(ev));
    cudaGetDeviceCount(&count);
    SHOW("set_device_count", cudaSetDevice(count));
    SHOW("set_device_negative", cudaSetDevice(-1));
    cudaPointerAttributes a;
    const struct { const char *what; const void *p; } ptrs[] = {
        {"attributes_pageable", &h}, {"attributes_device", d}, {"attributes_interior", d + 3},
        {"attributes_pinned", pinned}, {"attributes_null", nullptr}};
    for (const auto &q : ptrs) {
        a.type = (cudaMemoryType)77;
        SHOW(q.what, cudaPointerGetAttributes(&a, q.p));
        printf("%s_type %d\n", q.what, (int)a.type);
    }
    SHOW("free", cudaFree(d));
    return 0;
}
