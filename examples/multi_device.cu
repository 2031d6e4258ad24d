// Two devices: each its own memory, kernels and __device__ variables; copies between them
// (cudaMemcpyPeer, cudaMemcpy with cudaMemcpyDefault), their errors, PCI bus ids and
// stream priorities. Run on a server with two devices whose memory is below the server's budget
// for emulated memory (half the host's), so that each device's free memory is its own:
// cricket server --backend emu=devices=2,memory=256M.
#include <cstring>
#include "check.h"

__device__ int device_tag;

__global__ void fill(int *out, int n, int base)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = base + i + device_tag;
}

int main()
{
    int count = two_devices(), bad = 0;
    const int n = 1000;
    const size_t big = 64 << 20;
    int *buf[2];
    void *extra;
    size_t free_before[2], free_after[2], total;
    for (int d = 0; d < 2; d++) {
        CHECK(cudaSetDevice(d));
        CHECK(cudaMemGetInfo(&free_before[d], &total));
    }
    for (int d = 0; d < 2; d++) {
        CHECK(cudaSetDevice(d));
        int current = -1;
        CHECK(cudaGetDevice(&current));
        bad |= report("cudaSetDevice switches the current device", current != d);
        CHECK(cudaMalloc(&buf[d], n * sizeof(int)));
        int tag = 1000000 * (d + 1);
        CHECK(cudaMemcpyToSymbol(device_tag, &tag, sizeof tag));
        fill<<<(n + 127) / 128, 128>>>(buf[d], n, d * 10);
        CHECK(cudaGetLastError());
        CHECK(cudaDeviceSynchronize());
    }
    CHECK(cudaMalloc(&extra, big));          // on device 1
    for (int d = 0; d < 2; d++) {
        CHECK(cudaSetDevice(d));
        CHECK(cudaMemGetInfo(&free_after[d], &total));
    }
    bad |= report("cudaMemGetInfo is per device (64 MiB on device 1 leave device 0's free memory)",
                  free_before[0] - free_after[0] >= big || free_before[1] - free_after[1] < big);
    bad |= report("the two devices' pointers differ", buf[0] == buf[1]);
    cudaPointerAttributes where;
    CHECK(cudaPointerGetAttributes(&where, buf[1] + 10));     // asked on device 1, then on 0
    int seen_on_1 = where.device;
    CHECK(cudaSetDevice(0));
    CHECK(cudaPointerGetAttributes(&where, buf[1] + 10));
    bad |= report("cudaPointerGetAttributes names the pointer's device, whatever the current one",
                  seen_on_1 != 1 || where.device != 1 || where.type != cudaMemoryTypeDevice);

    int host[2][n];
    for (int d = 0; d < 2; d++)       // unified addressing: the pointer says the device
        CHECK(cudaMemcpy(host[d], buf[d], sizeof host[d], cudaMemcpyDeviceToHost));
    int wrong = 0;
    for (int d = 0; d < 2; d++)
        for (int i = 0; i < n; i++)
            wrong += host[d][i] != 1000000 * (d + 1) + d * 10 + i;
    bad |= report("a kernel on each device sees that device's __device__ variable", wrong != 0);

    // copies between devices: cudaMemcpyPeer, then cudaMemcpy with cudaMemcpyDefault back
    int *copy;
    CHECK(cudaSetDevice(1));
    CHECK(cudaMalloc(&copy, n * sizeof(int)));
    CHECK(cudaSetDevice(0));
    CHECK(cudaMemcpyPeer(copy, 1, buf[0], 0, n * sizeof(int)));
    CHECK(cudaMemcpy(buf[0], buf[1], n * sizeof(int), cudaMemcpyDefault));
    int back[n], moved[n];
    CHECK(cudaMemcpy(back, copy, sizeof back, cudaMemcpyDefault));
    CHECK(cudaMemcpy(moved, buf[0], sizeof moved, cudaMemcpyDeviceToHost));
    bad |= report("cudaMemcpyPeer copies device 0's buffer to device 1", memcmp(back, host[0], sizeof back) != 0);
    bad |= report("cudaMemcpy(cudaMemcpyDefault) copies between devices", memcmp(moved, host[1], sizeof moved) != 0);
    cudaStream_t s1;
    CHECK(cudaStreamCreate(&s1));
    CHECK(cudaMemcpyPeerAsync(copy, 1, buf[1], 1, n * sizeof(int), s1));
    CHECK(cudaStreamSynchronize(s1));
    CHECK(cudaMemcpy(back, copy, sizeof back, cudaMemcpyDefault));
    bad |= report("cudaMemcpyPeerAsync copies in a stream", memcmp(back, host[1], sizeof back) != 0);

    // peer access has its own example (peer_access.cu); here the errors for a device that does not exist
    int can = -1;
    bad |= expect_status(cudaDeviceCanAccessPeer(&can, 0, count), cudaErrorInvalidDevice, "cudaDeviceCanAccessPeer(bad)");
    bad |= expect_status(cudaMemcpyPeer(copy, count, buf[0], 0, 4), cudaErrorInvalidDevice, "cudaMemcpyPeer(bad device)");
    cudaGetLastError();

    // PCI bus ids name each device
    for (int d = 0; d < 2; d++) {
        char id[32];
        int found = -1;
        CHECK(cudaDeviceGetPCIBusId(id, sizeof id, d));
        CHECK(cudaDeviceGetByPCIBusId(&found, id));
        printf("device %d: PCI bus id %s\n", d, id);
        bad |= report("cudaDeviceGetByPCIBusId finds the device by its id", found != d);
    }
    bad |= expect_status(cudaDeviceGetByPCIBusId(&count, "ffff:ff:1f.0"), cudaErrorInvalidDevice, "an unknown bus id");

    // stream priorities: the documented range, and each stream's priority clamped into it
    int least, greatest, got;
    CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    cudaStream_t high, low;
    CHECK(cudaStreamCreateWithPriority(&high, cudaStreamNonBlocking, greatest - 10));
    CHECK(cudaStreamCreateWithPriority(&low, cudaStreamDefault, least));
    CHECK(cudaStreamGetPriority(high, &got));
    bad |= report("a priority past the greatest is clamped to it", got != greatest || greatest >= least);
    CHECK(cudaStreamGetPriority(low, &got));
    bad |= report("cudaStreamGetPriority gives the priority a stream was made with", got != least);
    CHECK(cudaStreamGetPriority(0, &got));
    bad |= report("the default stream has the least priority", got != least);
    return report("two devices", bad);
}
