// Device-side malloc/free and new/delete: the heap size set with cudaDeviceSetLimit, per-thread
// lists built with new and freed with delete, NULL from malloc once the heap is full, and the
// limit fixed once a kernel has used the heap. Each result is checked on the host.
#include "check.h"

struct Item {
    int value;
    Item *next;
};

__global__ void build_lists(int *sums, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    Item *head = nullptr;
    for (int k = 0; k < i % 7 + 1; k++)
        head = new Item{i + k, head};
    int s = 0;
    while (head) {
        Item *next = head->next;
        s = 2 * s + head->value;
        delete head;
        head = next;
    }
    sums[i] = s;
}

__global__ void grab(void **blocks, size_t bytes)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    blocks[i] = malloc(bytes);
    if (blocks[i])
        ((char *)blocks[i])[bytes - 1] = 1;     // the whole block is usable
}

__global__ void release(void **blocks)
{
    free(blocks[blockIdx.x * blockDim.x + threadIdx.x]);
}

int main()
{
    const size_t heap = 1 << 20, block = 64 << 10;
    const int n = 500, threads = 64;
    CHECK(cudaDeviceSetLimit(cudaLimitMallocHeapSize, heap));
    size_t got_heap = 0;
    CHECK(cudaDeviceGetLimit(&got_heap, cudaLimitMallocHeapSize));
    int *sums;
    void **blocks;
    CHECK(cudaMalloc(&sums, n * sizeof(int)));
    CHECK(cudaMalloc(&blocks, threads * sizeof(void *)));
    build_lists<<<(n + 127) / 128, 128>>>(sums, n);
    grab<<<1, threads>>>(blocks, block);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    int h_sums[n], bad = 0;
    void *h_blocks[threads];
    CHECK(cudaMemcpy(h_sums, sums, sizeof h_sums, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(h_blocks, blocks, sizeof h_blocks, cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; i++) {
        int s = 0;
        for (int k = i % 7; k >= 0; k--)
            s = 2 * s + i + k;
        bad += h_sums[i] != s;
    }
    int granted = 0;
    for (int k = 0; k < threads; k++)
        granted += h_blocks[k] != nullptr;
    // the heap cannot hold every block: some threads got NULL, and at most heap/block got memory
    bad += granted == 0 || granted == threads || granted > (int)(heap / block);
    cudaError_t late = cudaDeviceSetLimit(cudaLimitMallocHeapSize, 2 * heap);
    bad += late != cudaErrorInvalidValue;
    release<<<1, threads>>>(blocks);
    CHECK(cudaDeviceSynchronize());
    printf("heap %zu bytes, %d of %d blocks of %zu bytes granted, late resize: %s, %d wrong\n", got_heap,
           granted, threads, block, cudaGetErrorName(late), bad);
    CHECK(cudaFree(sums));
    CHECK(cudaFree(blocks));
    return report("device malloc/free and new/delete", bad != 0 || got_heap != heap);
}
