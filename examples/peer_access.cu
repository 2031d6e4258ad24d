// Peer access between two devices: once each device enabled access to the other, a kernel on each
// reads the other's buffer, writes its own and counts atomically in the other's memory; the
// documented errors of enabling twice, disabling what is not enabled, a device as its own peer;
// and once access is disabled again, a kernel touching the peer's memory faults. Run on a server
// with two devices: cricket server --backend emu=devices=2,memory=256M.
#include "check.h"

__global__ void pull(int *mine, const int *theirs, int *their_count, int n, int add)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        mine[i] = 2 * theirs[i] + add;
        atomicAdd(their_count, 1);
    }
}

__global__ void touch(int *p)
{
    *p = 1;
}

int main()
{
    int bad = 0;
    two_devices();
    int can[2] = {-1, -1}, self = -1, value = -1;
    CHECK(cudaDeviceCanAccessPeer(&can[0], 0, 1));
    CHECK(cudaDeviceCanAccessPeer(&can[1], 1, 0));
    CHECK(cudaDeviceCanAccessPeer(&self, 0, 0));
    bad |= report("cudaDeviceCanAccessPeer says 1 both ways, 0 for a device and itself",
                  can[0] != 1 || can[1] != 1 || self != 0);
    CHECK(cudaDeviceGetP2PAttribute(&value, cudaDevP2PAttrAccessSupported, 0, 1));
    bad |= report("cudaDeviceGetP2PAttribute(AccessSupported) says 1", value != 1);
    CHECK(cudaDeviceGetP2PAttribute(&value, cudaDevP2PAttrNativeAtomicSupported, 1, 0));
    bad |= report("cudaDeviceGetP2PAttribute(NativeAtomicSupported) says 1", value != 1);

    const int n = 3000;
    int host[2][n], *data[2], *out[2], *counter[2];
    for (int d = 0; d < 2; d++) {
        CHECK(cudaSetDevice(d));
        for (int i = 0; i < n; i++)
            host[d][i] = (d + 1) * 100000 + i;
        CHECK(cudaMalloc(&data[d], n * sizeof(int)));
        CHECK(cudaMalloc(&out[d], n * sizeof(int)));
        CHECK(cudaMalloc(&counter[d], sizeof(int)));
        CHECK(cudaMemcpy(data[d], host[d], n * sizeof(int), cudaMemcpyHostToDevice));
        CHECK(cudaMemset(counter[d], 0, sizeof(int)));
    }
    for (int d = 0; d < 2; d++) {
        CHECK(cudaSetDevice(d));
        CHECK(cudaDeviceEnablePeerAccess(1 - d, 0));
    }
    CHECK(cudaSetDevice(0));
    bad |= expect_status(cudaDeviceEnablePeerAccess(1, 0), cudaErrorPeerAccessAlreadyEnabled, "enabling twice");
    bad |= expect_status(cudaDeviceEnablePeerAccess(0, 0), cudaErrorInvalidDevice, "cudaDeviceEnablePeerAccess(self)");
    bad |= expect_status(cudaDeviceEnablePeerAccess(1, 7), cudaErrorInvalidValue, "cudaDeviceEnablePeerAccess(flags 7)");
    cudaGetLastError();

    // each device's kernel reads the other's data and counts in the other's memory
    for (int d = 0; d < 2; d++) {
        CHECK(cudaSetDevice(d));
        pull<<<(n + 255) / 256, 256>>>(out[d], data[1 - d], counter[1 - d], n, 7 * d);
        CHECK(cudaGetLastError());
    }
    for (int d = 0; d < 2; d++) {
        CHECK(cudaSetDevice(d));
        CHECK(cudaDeviceSynchronize());
    }
    for (int d = 0; d < 2; d++) {
        static int got[n];
        int counted = -1;
        CHECK(cudaMemcpy(got, out[d], n * sizeof(int), cudaMemcpyDeviceToHost));
        CHECK(cudaMemcpy(&counted, counter[d], sizeof(int), cudaMemcpyDeviceToHost));
        int wrong = 0;
        for (int i = 0; i < n; i++)
            wrong += got[i] != 2 * host[1 - d][i] + 7 * d;
        printf("device %d: %d of %d values from device %d wrong; %d counted here by device %d\n", d, wrong, n,
               1 - d, counted, 1 - d);
        bad |= report("a kernel reads the peer's memory and writes its own", wrong != 0);
        bad |= report("atomics from the peer's kernel land in this device's memory", counted != n);
    }

    CHECK(cudaSetDevice(0));
    CHECK(cudaDeviceDisablePeerAccess(1));
    bad |= expect_status(cudaDeviceDisablePeerAccess(1), cudaErrorPeerAccessNotEnabled, "disabling twice");
    cudaGetLastError();
    // without access the peer's memory is out of reach: an illegal address (the context is then unusable)
    touch<<<1, 1>>>(counter[1]);
    bad |= expect_status(cudaDeviceSynchronize(), cudaErrorIllegalAddress, "a kernel writing the peer's memory without access");
    return report("peer access", bad);
}
