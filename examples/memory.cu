// Pitched 2D copies, memset, device-to-device copies, pointer attributes and registered host memory.
#include "check.h"
#include <sys/mman.h>

__global__ void add_rows(float *m, size_t pitch, int w, int h)
{
    int x = threadIdx.x, y = blockIdx.x;
    if (x < w && y < h) ((float *)((char *)m + y * pitch))[x] += y;
}

int main()
{
    const int w = 13, h = 7;
    float host[h][w], back[h][w];
    for (int y = 0; y < h; y++) for (int x = 0; x < w; x++) host[y][x] = y * 100 + x;
    float *d;
    size_t pitch = 0;
    CHECK(cudaMallocPitch((void **)&d, &pitch, w * sizeof(float), h));
    int bad = pitch < w * sizeof(float);
    CHECK(cudaMemset(d, 0, pitch * h));
    CHECK(cudaMemcpy2D(d, pitch, host, sizeof host[0], w * sizeof(float), h, cudaMemcpyHostToDevice));
    add_rows<<<h, 32>>>(d, pitch, w, h);
    CHECK(cudaMemcpy2D(back, sizeof back[0], d, pitch, w * sizeof(float), h, cudaMemcpyDeviceToHost));
    for (int y = 0; y < h; y++) for (int x = 0; x < w; x++) if (back[y][x] != host[y][x] + y) bad++;

    // device to device with cudaMemcpyDefault, then memset of a part
    float *e;
    CHECK(cudaMalloc(&e, pitch * h));
    CHECK(cudaMemcpy(e, d, pitch * h, cudaMemcpyDefault));
    CHECK(cudaMemset(e, 0xFF, sizeof(float)));       // first element becomes NaN bits 0xFFFFFFFF
    unsigned first = 0;
    float second = 0;
    CHECK(cudaMemcpy(&first, e, sizeof first, cudaMemcpyDefault));
    CHECK(cudaMemcpy(&second, e + 1, sizeof second, cudaMemcpyDefault));
    if (first != 0xFFFFFFFFu || second != host[0][1]) bad++;

    // what the runtime knows about pointers
    cudaPointerAttributes attr;
    CHECK(cudaPointerGetAttributes(&attr, e));
    if (attr.type != cudaMemoryTypeDevice || attr.devicePointer != e) bad++;
    CHECK(cudaPointerGetAttributes(&attr, host));
    if (attr.type != cudaMemoryTypeUnregistered) bad++;
    CHECK(cudaHostRegister(back, sizeof back, cudaHostRegisterDefault));
    CHECK(cudaPointerGetAttributes(&attr, back));
    if (attr.type != cudaMemoryTypeHost) bad++;
    CHECK(cudaMemcpyAsync(back, d, sizeof(float), cudaMemcpyDeviceToHost, 0));
    CHECK(cudaStreamSynchronize(0));
    if (back[0][0] != host[0][0]) bad++;
    CHECK(cudaHostUnregister(back));

    // device addresses are reserved in this process: no host mapping can land on them
    void *m = mmap(e, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (m != MAP_FAILED) {
        printf("a host mapping landed on device address %p\n", (void *)e);
        munmap(m, 4096);
        bad++;
    }
    CHECK(cudaFree(d)); CHECK(cudaFree(e));
    return report("pitched 2D copies, memset, D2D copies, pointer attributes, registered memory", bad);
}
