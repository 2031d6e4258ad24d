// cudaLaunchKernelEx with launch attributes: hints are accepted and the kernel runs, a programmatic
// event is recorded after the kernel, a cooperative launch runs, and what cricket cannot honour
// (clusters of more than one block, an id it does not know) fails with cudaErrorNotSupported
// without launching. Prints one line per case, then PASS or FAIL.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void fill(int *out, int value)
{
    out[threadIdx.x] = value;
}

static int wrong_values(const int *d, int expected)
{
    int h[64];
    if (cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost) != cudaSuccess)
        return 64;
    int wrong = 0;
    for (int i = 0; i < 64; i++)
        wrong += h[i] != expected;
    return wrong;
}

static cudaError_t launch(cudaLaunchAttribute *attrs, unsigned n, cudaStream_t stream, int *d, int value)
{
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3(1);
    config.blockDim = dim3(64);
    config.stream = stream;
    config.attrs = attrs;
    config.numAttrs = n;
    return cudaLaunchKernelEx(&config, fill, d, value);
}

int main()
{
    int *d;
    cudaStream_t stream;
    cudaEvent_t done;
    if (cudaMalloc(&d, 64 * sizeof(int)) || cudaStreamCreate(&stream)
        || cudaEventCreateWithFlags(&done, cudaEventDisableTiming)) {
        printf("FAIL: setup\n");
        return 1;
    }
    int failures = 0;

    cudaLaunchAttribute hints[5] = {};
    hints[0].id = cudaLaunchAttributePriority;
    hints[0].val.priority = 0;
    hints[1].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    hints[1].val.programmaticStreamSerializationAllowed = 1;
    hints[2].id = cudaLaunchAttributeClusterDimension;          // 1x1x1: no clusters at all
    hints[2].val.clusterDim.x = hints[2].val.clusterDim.y = hints[2].val.clusterDim.z = 1;
    hints[3].id = cudaLaunchAttributeMemSyncDomain;
    hints[3].val.memSyncDomain = cudaLaunchMemSyncDomainDefault;
    hints[4].id = cudaLaunchAttributeProgrammaticEvent;
    hints[4].val.programmaticEvent.event = done;
    cudaError_t e = launch(hints, 5, stream, d, 7);
    cudaError_t synced = cudaEventSynchronize(done);       // recorded after the kernel
    int wrong = wrong_values(d, 7);
    printf("hints: %s, event %s, %d wrong\n", cudaGetErrorName(e), cudaGetErrorName(synced), wrong);
    failures += e != cudaSuccess || synced != cudaSuccess || wrong;

    cudaLaunchAttribute cooperative = {};
    cooperative.id = cudaLaunchAttributeCooperative;
    cooperative.val.cooperative = 1;
    cudaLaunchAttribute cluster = {};
    cluster.id = cudaLaunchAttributeClusterDimension;
    cluster.val.clusterDim.x = 2;
    cluster.val.clusterDim.y = cluster.val.clusterDim.z = 1;
    cudaLaunchAttribute unknown = {};
    unknown.id = (cudaLaunchAttributeID)99;
    e = launch(&cooperative, 1, stream, d, 8);               // a cooperative launch runs
    cudaStreamSynchronize(stream);
    wrong = wrong_values(d, 8);
    printf("cooperative: %s, %d wrong\n", cudaGetErrorName(e), wrong);
    failures += e != cudaSuccess || wrong;
    struct { const char *what; cudaLaunchAttribute *attr; } refused[] = {
        {"cluster 2x1x1", &cluster}, {"unknown id 99", &unknown}};
    for (auto &r : refused) {
        e = launch(r.attr, 1, stream, d, 9);
        cudaError_t last = cudaGetLastError();
        cudaStreamSynchronize(stream);
        wrong = wrong_values(d, 8);                          // the kernel did not run
        printf("%s: %s, last error %s, %d changed\n", r.what, cudaGetErrorName(e), cudaGetErrorName(last), wrong);
        failures += e != cudaErrorNotSupported || last != cudaErrorNotSupported || wrong;
    }
    printf("%s\n", failures ? "FAIL" : "PASS");
    return failures ? 1 : 0;
}
