// Dynamic parallelism (CDP2) kernels for tests/emu/test_emu_device_launch.py, built with -rdc=true.
#include <cuda_runtime.h>

// Each grid appends its tag to log[1..] (log[0] counts) once, from its first thread.
__device__ void record(int *log, int tag)
{
    if (threadIdx.x == 0 && blockIdx.x == 0)
        log[1 + atomicAdd(log, 1)] = tag;
}

extern "C" __global__ void leaf(int *log, int tag) { record(log, tag); }

extern "C" __global__ void middle(int *log, int tag)
{
    record(log, tag);
    if (threadIdx.x == 0 && blockIdx.x == 0)
        leaf<<<1, 32>>>(log, tag * 10 + 1);
}

// The parent launches A (default stream), T (tail launch), B (a created stream), F (fire and
// forget); A launches A1. CDP2: children start after their launch, the parent cannot wait for them.
extern "C" __global__ void parent(int *log, int *errors)
{
    record(log, 1);
    if (threadIdx.x == 0 && blockIdx.x == 0) {
        middle<<<2, 32>>>(log, 2);
        leaf<<<1, 32, 0, cudaStreamTailLaunch>>>(log, 3);
        cudaStream_t s;
        errors[0] = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
        leaf<<<1, 32, 0, s>>>(log, 4);
        errors[1] = cudaStreamDestroy(s);
        leaf<<<1, 32, 0, cudaStreamFireAndForget>>>(log, 5);
        errors[2] = cudaGetLastError();
        leaf<<<1, 2048>>>(log, 6);                 // more threads than a block may have
        errors[3] = cudaPeekAtLastError();
        errors[4] = cudaGetLastError();
        errors[5] = cudaGetLastError();
    }
}

// Launches itself one level deeper until a launch fails; levels[d] = 1 for each level that ran,
// and the failing level stores the error.
extern "C" __global__ void nest(int *levels, int *error, int depth)
{
    levels[depth] = 1;
    nest<<<1, 1>>>(levels, error, depth + 1);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) {
        error[0] = e;
        error[1] = depth;
    }
}

// One thread launches `count` children: past the pending-launch limit the launches fail.
extern "C" __global__ void bump(int *counter) { atomicAdd(counter, 1); }

extern "C" __global__ void many(int *counter, int *failed, int count)
{
    for (int k = 0; k < count; k++) {
        bump<<<1, 1>>>(counter);
        if (cudaGetLastError() == cudaErrorLaunchPendingCountExceeded)
            atomicAdd(failed, 1);
    }
}

// Every thread of every block launches one child that writes its own slot.
extern "C" __global__ void fill(int *out, int value) { out[threadIdx.x] = value + threadIdx.x; }

extern "C" __global__ void fan_out(int *out, int width)
{
    int id = blockIdx.x * blockDim.x + threadIdx.x;
    fill<<<1, width>>>(out + id * width, id * 100);
}

// cudaMalloc/cudaFree in device code share the malloc heap: a child fills what its parent allocated.
extern "C" __global__ void heap_child(int *p, int n) { p[threadIdx.x] = n - threadIdx.x; }

extern "C" __global__ void heap_sum(int *p, int n, int *out) {
    int s = 0;
    for (int k = 0; k < n; k++) s += p[k];
    *out = s;
    cudaFree(p);
}

extern "C" __global__ void heap_parent(int n, int *out, int *errors)
{
    int *p = nullptr;
    errors[0] = cudaMalloc((void **)&p, n * sizeof(int));
    heap_child<<<1, n>>>(p, n);
    heap_sum<<<1, 1, 0, cudaStreamTailLaunch>>>(p, n, out);
    int *too_big = nullptr;
    errors[1] = cudaMalloc((void **)&too_big, (size_t)1 << 40);
    errors[2] = too_big != nullptr;
}
