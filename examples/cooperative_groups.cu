// Cooperative launches: a grid-wide barrier (cooperative_groups::this_grid().sync()) between two
// phases of one kernel, through cudaLaunchCooperativeKernel and through cudaLaunchKernelEx with
// cudaLaunchAttributeCooperative; a grid larger than the device holds resident is refused with
// cudaErrorCooperativeLaunchTooLarge, as documented.
#include <cooperative_groups.h>
#include "check.h"

namespace cg = cooperative_groups;

// Phase 1 writes data[i] = i; after the grid barrier, phase 2 reads what another block wrote.
__global__ void reverse_after_sync(int *data, int *out, int n, int rounds)
{
    cg::grid_group grid = cg::this_grid();
    int i = grid.thread_rank();
    for (int r = 0; r < rounds; r++) {
        if (i < n)
            data[i] = i + r;
        grid.sync();
        if (i < n)
            out[i] = data[n - 1 - i];
        grid.sync();
    }
}

static int check_out(const int *out_d, int n, int round)
{
    int *out = new int[n];
    CHECK(cudaMemcpy(out, out_d, n * sizeof(int), cudaMemcpyDeviceToHost));
    int wrong = 0;
    for (int i = 0; i < n; i++)
        wrong += out[i] != n - 1 - i + round;
    delete[] out;
    return wrong;
}

int main()
{
    int device = 0, supported = 0, sms = 0, per_sm = 0, bad = 0;
    CHECK(cudaDeviceGetAttribute(&supported, cudaDevAttrCooperativeLaunch, device));
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    if (!supported) {
        printf("FAIL: cudaDevAttrCooperativeLaunch is 0\n");
        return 1;
    }
    const int threads = 128;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, reverse_after_sync, threads, 0));
    int blocks = sms * per_sm;               // the most the device holds resident
    int n = blocks * threads, rounds = 3;
    int *data, *out;
    CHECK(cudaMalloc(&data, n * sizeof(int)));
    CHECK(cudaMalloc(&out, n * sizeof(int)));
    void *args[] = {&data, &out, &n, &rounds};
    CHECK(cudaLaunchCooperativeKernel((void *)reverse_after_sync, blocks, threads, args, 0, 0));
    CHECK(cudaDeviceSynchronize());
    bad |= report("cudaLaunchCooperativeKernel: every block sees the others' writes after grid.sync()",
                  check_out(out, n, rounds - 1) != 0);

    cudaLaunchConfig_t config = {};
    config.gridDim = blocks / 2;
    config.blockDim = threads;
    cudaLaunchAttribute attribute = {};
    attribute.id = cudaLaunchAttributeCooperative;
    attribute.val.cooperative = 1;
    config.attrs = &attribute;
    config.numAttrs = 1;
    int half = n / 2, one = 1;
    CHECK(cudaLaunchKernelEx(&config, reverse_after_sync, data, out, half, one));
    CHECK(cudaDeviceSynchronize());
    bad |= report("cudaLaunchKernelEx with cudaLaunchAttributeCooperative", check_out(out, half, 0) != 0);

    cudaError_t e = cudaLaunchCooperativeKernel((void *)reverse_after_sync, blocks + 1, threads, args, 0, 0);
    printf("one block more than resident: %s\n", cudaGetErrorName(e));
    bad |= report("a grid larger than resident is cudaErrorCooperativeLaunchTooLarge",
                  e != cudaErrorCooperativeLaunchTooLarge || cudaGetLastError() != cudaErrorCooperativeLaunchTooLarge);
    CHECK(cudaDeviceSynchronize());

    // launched without cooperation, grid.sync() has no barrier to use: the kernel traps
    reverse_after_sync<<<2, threads>>>(data, out, 2 * threads, 1);
    e = cudaDeviceSynchronize();
    printf("grid.sync() in a plain launch: %s\n", cudaGetErrorName(e));
    bad |= report("grid.sync() in a plain launch fails the kernel", e == cudaSuccess);
    return report("cooperative launches", bad);
}
